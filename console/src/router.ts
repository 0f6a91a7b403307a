// History-API routing: the server answers index.html for every console path, the router
// picks the page. Internal links carry `data-link` and are handled here.

export type Page = (outlet: HTMLElement, params: Record<string, string>) => (() => void) | void;

interface Route {
  pattern: RegExp;
  names: string[];
  page: Page;
}

const routes: Route[] = [];
let cleanup: (() => void) | void;
let outlet: HTMLElement;
let notFound: Page;

export function route(path: string, page: Page): void {
  const names: string[] = [];
  const pattern = new RegExp(
    '^' + path.replace(/:(\w+)/g, (_, name: string) => (names.push(name), '([^/]+)')) + '/?$',
  );
  routes.push({ pattern, names, page });
}

export function startRouter(root: HTMLElement, fallback: Page): void {
  outlet = root;
  notFound = fallback;
  window.addEventListener('popstate', () => render());
  document.addEventListener('click', (e) => {
    const a = (e.target as Element | null)?.closest?.('a[data-link]');
    if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
    e.preventDefault();
    navigate(a.getAttribute('href') ?? '/');
  });
  render();
}

export function navigate(path: string, replace = false): void {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  render();
}

export function render(): void {
  if (!outlet) return; // Not started yet (a change before the first render).
  if (typeof cleanup === 'function') cleanup();
  cleanup = undefined;
  outlet.replaceChildren();
  const path = location.pathname;
  for (const r of routes) {
    const m = r.pattern.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    r.names.forEach((n, i) => (params[n] = decodeURIComponent(m[i + 1] ?? '')));
    cleanup = r.page(outlet, params);
    return;
  }
  cleanup = notFound(outlet, {});
}

/** The current place, to come back to after logging in. */
export function here(): string {
  return location.pathname + location.search;
}

// The worker app's service worker, served at `/worker/sw.js` (scope `/worker/`): it keeps
// the app's shell — the page, the files it names under `/assets/`, the manifest and the
// icon — so the app opens with no network. The page is asked of the network first (a new
// build shows at once), the cache answering when there is none; `/assets/` files carry a
// content hash, so the cache answers them first. The API (`/V2`, `/auth`) is never
// cached: what waits to be sent is the page's outbox (IndexedDB), not this.
// Pushes (push.ts subscribes): each `{Title, Body, Url, Kind}` is shown as a notification,
// text only; a tap opens (or focuses) the app.
// No imports: the file is a classic worker script, bundled as it is.

interface ExtendableEvent extends Event {
  waitUntil(p: Promise<unknown>): void;
}
interface FetchEvent extends ExtendableEvent {
  readonly request: Request;
  respondWith(r: Promise<Response> | Response): void;
}
interface PushEvent extends ExtendableEvent {
  readonly data: { text(): string } | null;
}
interface NotificationEvent extends ExtendableEvent {
  readonly notification: Notification;
}
interface WindowClient {
  readonly url: string;
  focus(): Promise<WindowClient>;
}
interface WorkerScope {
  addEventListener(type: 'install' | 'activate', fn: (e: ExtendableEvent) => void): void;
  addEventListener(type: 'fetch', fn: (e: FetchEvent) => void): void;
  addEventListener(type: 'push', fn: (e: PushEvent) => void): void;
  addEventListener(type: 'notificationclick', fn: (e: NotificationEvent) => void): void;
  skipWaiting(): Promise<void>;
  clients: {
    claim(): Promise<void>;
    matchAll(options: { type: 'window' }): Promise<readonly WindowClient[]>;
    openWindow(url: string): Promise<unknown>;
  };
  registration: { showNotification(title: string, options: NotificationOptions): Promise<void> };
  location: Location;
}

const scope = self as unknown as WorkerScope;
const CACHE = 'safetrack-worker-shell-v1';
const PAGE = '/worker/';
const FIXED = [PAGE, '/worker/manifest.webmanifest', '/worker/icon.svg', '/assets/theme-boot-1.js', '/alert.wav'];

/** The page and every `/assets/` file it names (its script, stylesheet, preloads). */
async function keepShell(): Promise<void> {
  const cache = await caches.open(CACHE);
  const page = await fetch(PAGE, { cache: 'no-store', credentials: 'same-origin' });
  if (!page.ok) throw new Error(`${PAGE} answered ${page.status}`);
  const html = await page.clone().text();
  const named = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1] ?? '').filter(Boolean);
  await cache.put(PAGE, page);
  await Promise.all(
    [...new Set([...FIXED.slice(1), ...named])].map(async (url) => {
      const answer = await fetch(url, { credentials: 'same-origin' });
      if (answer.ok) await cache.put(url, answer);
    }),
  );
}

scope.addEventListener('install', (e) => {
  e.waitUntil(keepShell().then(() => scope.skipWaiting()));
});

scope.addEventListener('activate', (e) => {
  e.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => scope.clients.claim()),
  );
});

function isShell(url: URL): boolean {
  return url.pathname.startsWith('/worker/') || url.pathname.startsWith('/assets/') || FIXED.includes(url.pathname);
}

scope.addEventListener('fetch', (e) => {
  const request = e.request;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== scope.location.origin || !isShell(url)) return;
  if (request.mode === 'navigate' || url.pathname === PAGE) {
    // The network first; the kept page when there is none.
    e.respondWith(
      fetch(request)
        .then((answer) => {
          if (answer.ok && url.pathname === PAGE) {
            const copy = answer.clone();
            void caches.open(CACHE).then((c) => c.put(PAGE, copy));
          }
          return answer;
        })
        .catch(async () => (await caches.match(PAGE)) ?? Response.error()),
    );
    return;
  }
  e.respondWith(
    caches.match(request).then(
      (kept) =>
        kept ??
        fetch(request).then((answer) => {
          if (answer.ok && url.pathname.startsWith('/assets/')) {
            const copy = answer.clone();
            void caches.open(CACHE).then((c) => c.put(request, copy));
          }
          return answer;
        }),
    ),
  );
});
/** A push's text, whatever it carries: plain strings, bounded; the app's own page. */
function notificationOf(text: string): { title: string; body: string; kind: string } {
  let data: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') data = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: shown as a plain message below.
  }
  const str = (v: unknown, fallback: string): string => (typeof v === 'string' && v ? v.slice(0, 500) : fallback);
  return { title: str(data['Title'], 'safetrack'), body: str(data['Body'], ''), kind: str(data['Kind'], 'Message') };
}

scope.addEventListener('push', (e) => {
  const shown = notificationOf(e.data?.text() ?? '');
  e.waitUntil(
    scope.registration.showNotification(shown.title, {
      body: shown.body,
      tag: `safetrack-${shown.kind}`,
      icon: '/worker/icon.svg',
      data: { url: PAGE },
    }),
  );
});

scope.addEventListener('notificationclick', (e) => {
  e.notification.close();
  e.waitUntil(
    scope.clients.matchAll({ type: 'window' }).then((open) => {
      const app = open.find((c) => new URL(c.url).pathname.startsWith(PAGE));
      return app ? app.focus() : scope.clients.openWindow(PAGE);
    }),
  );
});
export {};

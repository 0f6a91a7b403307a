// The console's entry: the session decides between the login page and the shell; the
// shell holds the navigation, the announcements and the one stream.
import './style.css';
import { api } from './api';
import { h } from './dom';
import { chooseLanguage, setLanguage, t } from './i18n';
import { uiLanguage } from './preferences';
import { themeControl } from './theme';
import { may, offered } from './roles';
import { readOwnTenant, tenantSwitcher } from './tenantSwitcher';
import { ADMIN_PAGES } from './pages/admin';
import { setLocale } from './format';
import { banner, announce, soundControl } from './announce';
import { here, navigate, render, route, startRouter } from './router';
import { loadSession, logout, session } from './session';
import * as live from './live';
import { loginPage } from './pages/login';
import { queuePage } from './pages/queue';
import { alertPage } from './pages/alert';
import { mapPage } from './pages/map';
import { configPages } from './pages/config';
import { devicesPage } from './pages/devices';
import { devicePage } from './pages/device';
import { monitoringPage } from './pages/monitoring';

const app = document.getElementById('app') as HTMLElement;
const outlet = h('div', { class: 'outlet' });
let shellShown = false;

/** Language: the profile's, else the tenant's default (read through the API), else the browser's. */
async function adoptPreferences(): Promise<void> {
  const s = session();
  const own = await readOwnTenant();
  setLanguage(uiLanguage(s?.UiLanguage, own?.DefaultUiLanguage, navigator.languages));
  setLocale({ timeZone: s?.TimeZoneId, culture: s?.CultureName });
}

function toLogin(expired: boolean): void {
  live.stopLive();
  // Already there (several requests answered 401): keep where they were going.
  if (location.pathname.startsWith('/login')) return;
  shellShown = false;
  const next = here();
  navigate(`/login?next=${encodeURIComponent(next)}${expired ? '&expired=1' : ''}`, true);
}

/** The nav entry of the page shown carries aria-current (and its look). */
function markCurrent(): void {
  const path = location.pathname;
  for (const a of document.querySelectorAll<HTMLAnchorElement>('header.top nav a')) {
    const href = a.getAttribute('href') ?? '';
    const section = href.startsWith('/config/') ? '/config/' : href;
    const current = path === href || path.startsWith(section.endsWith('/') ? section : `${section}/`);
    if (current) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function shell(): void {
  if (shellShown) return;
  shellShown = true;
  const state = h('span', { class: 'stream-state', role: 'status', 'data-testid': 'stream-state' }, t('stream.reconnecting'));
  live.streamState.on((s) => {
    state.textContent = s === 'live' ? t('stream.live') : t('stream.reconnecting');
    state.dataset.state = s;
  });
  const out = h('button', { type: 'button', class: 'logout' }, t('nav.logout'));
  out.addEventListener('click', () => void logout().finally(() => toLogin(false)));
  app.replaceChildren(
    h(
      'header',
      { class: 'top' },
      h('div', { class: 'top-row' },
        h('span', { class: 'brand' }, t('app.title')),
        state,
        soundControl(),
        themeControl(),
        h('span', { class: 'who' }, session()?.Username ?? ''),
        out,
      ),
      h('div', { class: 'nav-row' },
        h('nav', { 'aria-label': t('nav.main') },
          h('a', { href: '/alerts', 'data-link': true }, t('nav.alerts')),
          h('a', { href: '/monitoring', 'data-link': true }, t('nav.monitoring')),
          h('a', { href: '/map', 'data-link': true }, t('nav.map')),
          h('a', { href: '/devices', 'data-link': true }, t('nav.devices')),
          h('a', { href: '/config/geofences', 'data-link': true }, t('config.nav.main')),
          ...offered(ADMIN_PAGES, session()).map((p) => h('a', { href: p.path, 'data-link': true }, t(p.label))),
        ),
        tenantSwitcher(() => render()),
      ),
    ),
    banner,
    outlet,
  );
}

async function enter(): Promise<void> {
  await adoptPreferences();
  shell();
  await live.startLive(() => toLogin(true));
}

live.announced.on((a) => {
  void (a.DeviceId ? live.device(a.TenantCode ?? '', a.DeviceId) : Promise.resolve(null)).then((d) =>
    announce(a, d?.FriendlyName || a.DeviceId || ''),
  );
});

api.unauthorized = () => toLogin(true);

const requireSession =
  (page: (o: HTMLElement, p: Record<string, string>) => (() => void) | void) =>
  (o: HTMLElement, p: Record<string, string>) => {
    if (!session()) {
      toLogin(false);
      return;
    }
    markCurrent();
    return page(o, p);
  };

route('/login', () => {
  shellShown = false;
  const login = h('div');
  app.replaceChildren(login);
  loginPage(login, () => {
    const next = new URLSearchParams(location.search).get('next');
    const target = next && next.startsWith('/') && !next.startsWith('//') ? next : '/alerts';
    void enter().finally(() => navigate(target, true));
  });
});
route('/', requireSession(() => navigate('/alerts', true)));
route('/alerts', requireSession(queuePage));
route('/alerts/:tenant/:id', requireSession(alertPage));
route('/map', requireSession(mapPage));
route('/monitoring', requireSession(monitoringPage));
for (const p of ADMIN_PAGES) {
  route(p.path, requireSession((o, params) => (may(session(), p.needs) ? p.page(o, params) : forbidden(o))));
}

function forbidden(o: HTMLElement): void {
  o.append(h('main', {}, h('h1', {}, t('admin.notAllowed'))));
}
route('/config', requireSession(() => navigate('/config/geofences', true)));
for (const [path, page] of configPages) route(path, requireSession(page));
route('/devices', requireSession(devicesPage));
route('/devices/:tenant/:id', requireSession(devicePage));

async function boot(): Promise<void> {
  setLanguage(chooseLanguage([...navigator.languages]));
  const s = await loadSession().catch(() => null);
  if (s) await enter().catch(() => undefined);
  startRouter(outlet, (o) => {
    o.append(h('main', {}, h('p', {}, t('notFound'))));
  });
  if (!s && !location.pathname.startsWith('/login')) toLogin(false);
  else if (s && location.pathname.startsWith('/login')) navigate('/alerts', true);
}

void boot();

// The worker app's entry (`/worker/`, DESIGN §12): the session decides between the login
// and the app; the app picks the device assigned to the logged-in user, then shows its
// screen (home.ts). The service worker (sw.ts, `/worker/sw.js`) keeps the shell for a
// start with no network; the outbox (IndexedDB) keeps what was done until it is sent.
import '../style.css';
import './worker.css';
import { api, NetworkError, type Device, type Session } from '../api';
import { clear, h } from '../dom';
import { chooseLanguage, setLanguage, t } from '../i18n';
import { setLocale } from '../format';
import { loadSession, logout } from '../session';
import { choosePage, readAssigned, rememberChoice, rememberedChoice } from './choose';
import { send } from './client';
import { homePage, type Home } from './home';
import { workerLogin } from './login';
import { IdbOutbox, MemoryOutbox, Outbox, type OutboxStore } from './outbox';
import { pushControl } from './push';

const app = document.getElementById('app') as HTMLElement;
const outlet = h('div', { class: 'outlet worker' });
let home: Home | null = null;

function store(): OutboxStore {
  try {
    return new IdbOutbox();
  } catch {
    return new MemoryOutbox();
  }
}
/** Whether the session (and so its CSRF token) was read since the page opened: until then
 * nothing is sent, everything waits. */
let ready = false;
const outbox = new Outbox(store(), (action) => (ready ? send(action) : Promise.resolve({ later: true })));

// Opened with no network, the app shows the last device used; the session is read again
// (with its CSRF token) once the network returns, and what waited is sent.
const LAST_KEY = 'safetrack.worker.last';

function keepLast(s: Session, d: Device): void {
  try {
    const { CsrfToken: _csrf, ...rest } = s;
    void _csrf;
    localStorage.setItem(LAST_KEY, JSON.stringify({ session: rest, device: d }));
  } catch {
    // Storage refused: offline, the login is shown.
  }
}

function lastUsed(): { session: Session; device: Device } | null {
  try {
    const held = JSON.parse(localStorage.getItem(LAST_KEY) ?? 'null') as { session?: Session; device?: Device } | null;
    return held?.session && held.device ? { session: held.session, device: held.device } : null;
  } catch {
    return null;
  }
}

function adopt(s: Session): void {
  setLanguage(chooseLanguage([s.UiLanguage, ...navigator.languages]));
  setLocale({ timeZone: s.TimeZoneId, culture: s.CultureName });
  document.title = t('worker.title');
}

function header(s: Session | null): HTMLElement {
  return h('header', { class: 'worker-header' },
    h('span', { class: 'brand' }, t('worker.title')),
    s ? h('button', { type: 'button', class: 'worker-link', 'data-testid': 'logout', onclick: () => void logout().finally(() => show(null)) }, t('worker.logout')) : null);
}

function show(s: Session | null): void {
  home?.stop();
  home = null;
  clear(outlet);
  clear(app);
  app.append(header(s), outlet);
  if (!s) {
    workerLogin(outlet, (session) => {
      ready = true;
      adopt(session);
      show(session);
    });
    return;
  }
  outlet.append(h('p', { role: 'status' }, t('worker.loading')));
  void readAssigned(s)
    .then((devices) => {
      const chosen = rememberedChoice(devices);
      clear(outlet);
      if (chosen) open(s, chosen);
      else choosePage(outlet, s, devices, (d) => open(s, d), () => show(s));
    })
    .catch((e: unknown) => {
      clear(outlet);
      outlet.append(h('p', { class: 'message', role: 'alert' },
        e instanceof NetworkError ? t('worker.offline') : t('worker.failed', { detail: e instanceof Error ? e.message : String(e) })));
      outlet.append(h('button', { type: 'button', class: 'worker-wide', onclick: () => show(s) }, t('worker.retry')));
    });
}

function open(s: Session, device: Device): void {
  keepLast(s, device);
  clear(outlet);
  clear(app);
  const head = header(s);
  const push = pushControl(device);
  if (push) head.append(push);
  app.append(head, outlet);
  home = homePage(outlet, device, outbox, () => {
    rememberChoice(null);
    show(s);
  }, expired);
}

function expired(): void {
  show(null);
}

api.unauthorized = expired;

async function start(): Promise<void> {
  setLanguage(chooseLanguage([...navigator.languages]));
  document.title = t('worker.title');
  if ('serviceWorker' in navigator) {
    void navigator.serviceWorker.register('/worker/sw.js', { scope: '/worker/' }).catch(() => undefined);
  }
  let s: Session | null = null;
  try {
    s = await loadSession();
  } catch (e) {
    const last = e instanceof NetworkError ? lastUsed() : null;
    if (last) {
      adopt(last.session);
      window.addEventListener('online', () => void reconnect(), { once: true });
      open(last.session, last.device);
      return;
    }
  }
  ready = s !== null;
  if (s) adopt(s);
  show(s);
}

async function reconnect(): Promise<void> {
  try {
    const s = await loadSession();
    if (!s) return expired();
    ready = true;
    await outbox.flush();
  } catch {
    window.addEventListener('online', () => void reconnect(), { once: true });
  }
}

void start();

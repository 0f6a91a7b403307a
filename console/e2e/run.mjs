// End-to-end tests of the console in real headless Chromium (Debian's /usr/bin/chromium,
// driven by playwright-core: no browser download), against a running safetrack server.
// Started by tests/api/console.rs, which starts the server; also runnable by hand:
//   SAFETRACK_URL=http://127.0.0.1:8080 SAFETRACK_ADMIN='admin@safetrack.local:password' \
//   SCENARIOS=login-page,sos node e2e/run.mjs
// Prints one line per scenario and a closing `N passed, N failed`; exits non-zero on failure.
import { chromium } from 'playwright-core';
import AxeBuilder from '@axe-core/playwright';

const base = (process.env.SAFETRACK_URL ?? '').replace(/\/$/, '');
const [adminUser, ...rest] = (process.env.SAFETRACK_ADMIN ?? '').split(':');
const admin = { username: adminUser, password: rest.join(':') };
const wanted = (process.env.SCENARIOS ?? 'all').split(',').map((s) => s.trim());
const origin = new URL(base).origin;
const SECOND = 1000;

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

/** The API, as a script would use it (HTTP Basic), to set the scene. */
async function call(method, path, body, who = admin) {
  const response = await fetch(base + path, {
    method,
    headers: {
      Authorization: 'Basic ' + Buffer.from(`${who.username}:${who.password}`).toString('base64'),
      Accept: 'application/json',
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return { json: text ? JSON.parse(text) : undefined, location: response.headers.get('location') };
}

let serial = Date.now() % 100000;
async function tenant(parent, description) {
  const { location, json } = await call('POST', `/V2/${parent}`, { Description: description, TimeZoneId: 'Europe/London' });
  return json?.TenantCode ?? location.split('/').pop();
}
async function deviceWithSos(tc) {
  const id = `30023401${String(++serial).padStart(7, '0')}`;
  await call('POST', `/V2/${tc}/devices`, { DeviceId: id, DeviceType: 'InReach', FriendlyName: `Van ${serial}` });
  return id;
}
async function sosNotification(tc) {
  await call('POST', `/V2/${tc}/eventnotifications`, {
    NotificationName: 'SOS', EventsExpression: 'Emergency', Severity: '2', RaiseAlert: true, Recipients: [],
  });
}
async function sos(tc, deviceId) {
  await call('POST', `/V2/${tc}/devices/${deviceId}/momessages?process=true`, [
    { MessageType: 'FreeText', EmergencyState: 'Active', SequenceNumber: ++serial, SentFromDevice: new Date().toISOString(),
      Position: { Latitude: 51.5, Longitude: -0.12 } },
  ]);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--autoplay-policy=no-user-gesture-required'],
});

/** A fresh browser (its own cookies) whose pages fail the test on any request outside the
 * server's origin and on any content security policy violation. */
const outside = [];
const violations = [];
async function newPage() {
  const context = await browser.newContext({ locale: 'en-GB' });
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin !== origin && !url.startsWith('data:')) {
      outside.push(url);
      return route.abort();
    }
    return route.continue();
  });
  context.setDefaultTimeout(10 * SECOND);
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  page.on('pageerror', (e) => violations.push(`page error: ${e.message}`));
  return page;
}

async function login(page, who = admin) {
  await page.goto(base + '/');
  await page.waitForURL(/\/login/);
  await page.getByLabel('Username').fill(who.username);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(/\/alerts/);
  await page.locator('[data-testid=stream-state][data-state=live]').waitFor({ timeout: 5 * SECOND });
}

async function axe(page, what) {
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert(bad.length === 0, `axe on ${what}: ${bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`).join('; ')}`);
}

const scenarios = {
  async 'login-page'() {
    const page = await newPage();
    await page.goto(base + '/alerts');
    await page.waitForURL(/\/login\?next=%2Falerts/);
    await page.getByLabel('Username').waitFor();
    await axe(page, 'the login page');
    await page.context().close();
  },

  async 'wrong-password'() {
    const page = await newPage();
    await page.goto(base + '/login');
    await page.getByLabel('Username').fill(admin.username);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('[data-testid=login-message][data-reason=invalid]').waitFor({ timeout: 5 * SECOND });
    await page.context().close();
  },

  async 'sos-appears-announced'() {
    const tc = await tenant('1000', 'E2E SOS');
    await sosNotification(tc);
    const device = await deviceWithSos(tc);
    const page = await newPage();
    await login(page);
    await axe(page, 'the alert queue');
    const started = Date.now();
    await sos(tc, device);
    const row = page.locator(`tr[data-alert^="${tc}/"]`);
    await row.waitFor({ timeout: 2 * SECOND });
    await page.locator('[data-testid=banners] .banner').first().waitFor({ timeout: 2 * SECOND - (Date.now() - started) });
    assert(/New alert/.test(await page.title()), `title: ${await page.title()}`);
    assert(Number(await page.evaluate(() => document.body.dataset.announcements ?? '0')) >= 1, 'announced');
    await page.context().close();
  },

  async 'ack-seen-by-second-console'() {
    const tc = await tenant('1000', 'E2E two consoles');
    await sosNotification(tc);
    const device = await deviceWithSos(tc);
    await sos(tc, device);
    const { json: open } = await call('GET', `/V2/${tc}/alerts?status=Open`);
    const id = open[0].AlertId;
    const [one, two] = [await newPage(), await newPage()];
    await login(one);
    await login(two);
    for (const p of [one, two]) {
      await p.goto(`${base}/alerts/${tc}/${id}`);
      await p.locator('[data-testid=alert-summary][data-status=Open]').waitFor();
      await p.locator('[data-testid=stream-state][data-state=live]').waitFor({ timeout: 5 * SECOND });
    }
    await axe(one, 'an alert page');
    await one.getByLabel('Note').first().fill('Calling the driver now');
    await one.getByRole('button', { name: 'Acknowledge' }).click();
    const started = Date.now();
    await two.locator('[data-testid=alert-summary][data-status=Acknowledged]').waitFor({ timeout: 2 * SECOND });
    await two.locator('[data-testid=timeline] li[data-kind=Acknowledged]', { hasText: 'Calling the driver now' })
      .waitFor({ timeout: 2 * SECOND - (Date.now() - started) });
    // The second console acknowledging too is told what happened, not shown an error page.
    await two.reload();
    await one.getByLabel('Outcome').selectOption('FalseAlarm');
    await one.getByLabel('Resolution').fill('Pocket dial');
    await one.getByRole('button', { name: 'Resolve' }).click();
    await two.locator('[data-testid=alert-summary][data-status=Resolved]').waitFor({ timeout: 2 * SECOND });
    const { json: resolved } = await call('GET', `/V2/${tc}/alerts/${id}`);
    assert(resolved.Outcome === 'FalseAlarm' && resolved.Resolution === 'Pocket dial', JSON.stringify(resolved));
    await one.context().close();
    await two.context().close();
  },

  async 'foreign-tenant-never-appears'() {
    const mine = await tenant('1000', 'E2E mine');
    const theirs = await tenant('1000', 'E2E theirs');
    for (const tc of [mine, theirs]) await sosNotification(tc);
    const user = { username: `op${++serial}@e2e.example`, password: 'a-long-e2e-password' };
    await call('POST', `/V2/${mine}/users`, { Username: user.username, Password: user.password, UserRoleId: 'Manager', IsPortalEnabled: true });
    const page = await newPage();
    await login(page, user);
    await sos(theirs, await deviceWithSos(theirs));
    await sos(mine, await deviceWithSos(mine));
    await page.locator(`tr[data-alert^="${mine}/"]`).waitFor({ timeout: 2 * SECOND });
    await page.waitForTimeout(500);
    assert((await page.locator(`tr[data-alert^="${theirs}/"]`).count()) === 0, 'a foreign alert is in the queue');
    await page.context().close();
  },

  async 'session-expiry-returns-to-login'() {
    const page = await newPage();
    await login(page);
    await page.goto(base + '/map');
    await page.locator('[data-testid=device-map]').waitFor();
    // The session ends (its cookie is gone); the next API read answers 401.
    await page.context().clearCookies();
    await page.evaluate(() => {
      history.pushState(null, '', '/map?again=1');
      dispatchEvent(new PopStateEvent('popstate'));
    });
    await page.waitForURL(/\/login\?next=%2Fmap.*expired=1/);
    await page.locator('[data-testid=login-message]', { hasText: 'Your session has expired' }).waitFor();
    await page.getByLabel('Username').fill(admin.username);
    await page.getByLabel('Password').fill(admin.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/map/);
    await page.locator('[data-testid=device-map]').waitFor();
    await page.context().close();
  },
};

let passed = 0;
let failed = 0;
for (const [name, run] of Object.entries(scenarios)) {
  if (!wanted.includes('all') && !wanted.includes(name)) continue;
  const started = Date.now();
  outside.length = 0;
  violations.length = 0;
  try {
    await run();
    assert(outside.length === 0, `requests outside ${origin}: ${outside.join(', ')}`);
    assert(violations.length === 0, `content security policy / page errors: ${violations.join(' | ')}`);
    passed += 1;
    console.log(`ok ${name} (${Date.now() - started} ms)`);
  } catch (e) {
    failed += 1;
    console.log(`FAILED ${name}: ${e instanceof Error ? e.stack ?? e.message : e}`);
  }
}
await browser.close();
console.log(`e2e: ${passed} passed, ${failed} failed`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);

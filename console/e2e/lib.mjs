// What every end-to-end scenario shares: the API as a script uses it, a fresh page that
// fails on requests outside the origin, login, axe.
// Used by run.mjs and every scenarios/*.mjs.
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { chromium } from 'playwright-core';
import AxeBuilder from '@axe-core/playwright';

export const base = (process.env.SAFETRACK_URL ?? '').replace(/\/$/, '');
const [adminUser, ...rest] = (process.env.SAFETRACK_ADMIN ?? '').split(':');
export const admin = { username: adminUser, password: rest.join(':') };
export const origin = new URL(base).origin;
export const SECOND = 1000;

export function assert(condition, message) {
  if (!condition) throw new Error(message);
}

/** The API, as a script would use it (HTTP Basic), to set the scene. */
export async function call(method, path, body, who = admin) {
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
/** A number no other call in this run returns (ids, usernames, sequence numbers). */
export function unique() {
  return ++serial;
}
export async function tenant(parent, description) {
  const { location, json } = await call('POST', `/V2/${parent}`, { Description: description, TimeZoneId: 'Europe/London' });
  return json?.TenantCode ?? location.split('/').pop();
}
export async function deviceWithSos(tc) {
  const id = `30023401${String(++serial).padStart(7, '0')}`;
  await call('POST', `/V2/${tc}/devices`, { DeviceId: id, DeviceType: 'InReach', FriendlyName: `Van ${serial}` });
  return id;
}
export async function sosNotification(tc) {
  await call('POST', `/V2/${tc}/eventnotifications`, {
    NotificationName: 'SOS', EventsExpression: 'Emergency', Severity: '2', RaiseAlert: true, Recipients: [],
  });
}
export async function sos(tc, deviceId) {
  await call('POST', `/V2/${tc}/devices/${deviceId}/momessages?process=true`, [
    { MessageType: 'FreeText', EmergencyState: 'Active', SequenceNumber: ++serial, SentFromDevice: new Date().toISOString(),
      Position: { Latitude: 51.5, Longitude: -0.12 } },
  ]);
}

const TYPES = { '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.wav': 'audio/wav', '.json': 'application/json', '.html': 'text/html', '.png': 'image/png' };
const API = ['/V2', '/auth', '/docs', '/openapi.json', '/gateways', '/metrics', '/healthz', '/readyz', '/api'];

/** While working on the console: its files from a local `dist/` instead of the binary's
 * (CONSOLE_DIST=dist), so a `vite build` shows without rebuilding the server. */
export async function serveDist(context, dir) {
  await context.route(`${base}/**`, async (route) => {
    const url = new URL(route.request().url());
    if (API.some((p) => url.pathname === p || url.pathname.startsWith(`${p}/`))) return route.fallback();
    const file = normalize(join(dir, url.pathname === '/' ? 'index.html' : url.pathname));
    try {
      const body = await readFile(file);
      return route.fulfill({ status: 200, body, contentType: TYPES[extname(file)] ?? 'application/octet-stream' });
    } catch {
      if (route.request().resourceType() !== 'document') return route.fallback();
      return route.fulfill({ status: 200, body: await readFile(join(dir, 'index.html')), contentType: 'text/html' });
    }
  });
}

export const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--autoplay-policy=no-user-gesture-required'],
});

/** A fresh browser (its own cookies) whose pages fail the test on any request outside the
 * server's origin and on any content security policy violation. */
export const outside = [];
export const violations = [];
export async function newPage() {
  const context = await browser.newContext({ locale: 'en-GB' });
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin !== origin && !url.startsWith('data:')) {
      outside.push(url);
      return route.abort();
    }
    return route.continue();
  });
  if (process.env.CONSOLE_DIST) await serveDist(context, process.env.CONSOLE_DIST);
  context.setDefaultTimeout(10 * SECOND);
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  page.on('pageerror', (e) => violations.push(`page error: ${e.message}`));
  return page;
}

export async function login(page, who = admin) {
  await page.goto(base + '/');
  await page.waitForURL(/\/login/);
  await page.getByLabel('Username').fill(who.username);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(/\/alerts/);
  await page.locator('[data-testid=stream-state][data-state=live]').waitFor({ timeout: 5 * SECOND });
}

export async function axe(page, what) {
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert(bad.length === 0, `axe on ${what}: ${bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`).join('; ')}`);
}


// The worker app (`/worker/`, DESIGN §12, issue 46) at phone size with an emulated
// position, for a ReadOnly worker acting for the device assigned to them: a short tap on
// SOS sends nothing, a 2 s hold raises the alert (seen through the API and in an operator
// console) with the position, its acknowledgement shows, "I am safe" fires
// EmergencyCancelled; a session started in the app is listed by `GET /monitoring`, checked
// in ("I'm OK"), extended and ended (with a shortened monitoring minute, its due state
// shows and the check-in clears it); offline, an SOS and a check-in wait and go once each
// when the network returns (and a resend of the same messages stores nothing more); the
// app opens offline from its service worker's cache; an operator's text shows and its
// acknowledgement is stored; a worker with no device is told who must assign one; axe.
import { admin, assert, axe, base, browser, call, login, newPage, origin, outside, SECOND, tenant, unique, violations } from '../lib.mjs';

const PASSWORD = 'a-long-worker-password';
const HERE = { latitude: 57.1497, longitude: -2.0943 };
const MINUTE_MS = Number(process.env.SAFETRACK_MONITORING_MINUTE_MS ?? 0);

async function until(probe, what, timeout = 10 * SECOND) {
  const started = Date.now();
  let last;
  while (Date.now() - started < timeout) {
    last = await probe();
    if (last) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} (not within ${timeout} ms; last: ${JSON.stringify(last)})`);
}

/** A tenant with an SOS and an EmergencyCancelled notification, a ReadOnly worker and their device. */
async function scene({ assign = true } = {}) {
  const tc = await tenant('1000', `Worker app ${unique()}`);
  for (const [name, expression] of [['SOS', 'Emergency'], ['Stood down', 'EmergencyCancelled']]) {
    await call('POST', `/V2/${tc}/eventnotifications`, {
      NotificationName: name, EventsExpression: expression, Severity: '2', RaiseAlert: true, Recipients: [],
    });
  }
  const username = `worker.${unique()}@field.example`;
  const { location } = await call('POST', `/V2/${tc}/users`, {
    Username: username, Password: PASSWORD, UserRoleId: 'ReadOnly', IsPortalEnabled: true, FirstName: 'Ailsa', LastName: 'Reid',
  });
  const userId = location.split('/').pop();
  const deviceId = `35${String(unique()).padStart(13, '0')}`;
  const name = `Phone ${unique()}`;
  await call('POST', `/V2/${tc}/devices`, {
    DeviceId: deviceId, DeviceType: 'Phone', FriendlyName: name, ...(assign ? { UserId: userId } : {}),
  });
  return { tc, deviceId, name, worker: { username, password: PASSWORD } };
}

/** A phone-sized browser of its own (no request routing, which service workers bypass). */
async function phone({ geolocation = true } = {}) {
  const context = await browser.newContext({
    locale: 'en-GB', viewport: { width: 390, height: 844 }, hasTouch: true,
    ...(geolocation ? { geolocation: HERE, permissions: ['geolocation'] } : {}),
  });
  context.setDefaultTimeout(10 * SECOND);
  context.on('request', (r) => {
    const url = r.url();
    if (new URL(url).origin !== origin && !url.startsWith('data:')) outside.push(url);
  });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  page.on('pageerror', (e) => violations.push(`page error: ${e.message}`));
  return { context, page };
}

async function workerLogin(page, who) {
  await page.goto(`${base}/worker/`);
  await page.getByLabel('Username').fill(who.username);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByTestId('device').waitFor();
}

const messages = async (tc, id) => (await call('GET', `/V2/${tc}/devices/${id}/momessages`)).json ?? [];
const alertsOf = async (tc, id, name) =>
  ((await call('GET', `/V2/${tc}/alerts?status=Open`)).json ?? []).filter((a) => a.DeviceId === id && (!name || a.NotificationName === name));

/** Holds the SOS button down for `ms` with the mouse (pointer events, as a finger). */
async function holdSos(page, ms) {
  const box = await page.getByTestId('sos').boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.waitForTimeout(ms);
  await page.mouse.up();
}

export const scenarios = {
  async 'worker-sos-hold-and-safe'() {
    const { tc, deviceId, name, worker } = await scene();
    const { context, page } = await phone();
    const operator = await newPage();
    try {
      await login(operator, admin);
      await workerLogin(page, worker);
      await page.locator('[data-testid=location][data-state=on]').waitFor();
      await axe(page, 'the worker app');
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert(width <= 390, `the app is wider than the phone: ${width}`);

      await holdSos(page, 600);
      await page.waitForTimeout(1500);
      assert((await messages(tc, deviceId)).length === 0, 'a short press sent something');

      const box = await page.getByTestId('sos').boundingBox();
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.down();
      await page.getByTestId('sos').getByText(/Keep holding… [12]/).waitFor({ timeout: 1500 });
      await page.waitForTimeout(2300);
      await page.mouse.up();
      const pressed = Date.now();
      const [alert] = await until(() => alertsOf(tc, deviceId, 'SOS').then((a) => a.length && a), 'the SOS alert');
      assert(Math.abs(alert.Latitude - HERE.latitude) < 1e-6 && Math.abs(alert.Longitude - HERE.longitude) < 1e-6,
        `the alert's position: ${alert.Latitude}, ${alert.Longitude}`);
      await operator.locator('main').getByText(name).first().waitFor({ timeout: 5 * SECOND });
      console.log(`  worker SOS in the operator's queue ${Date.now() - pressed} ms after the finger lifted (it went at 2 s of the hold)`);
      await page.getByTestId('sos-status').getByText(/SOS sent at/).waitFor();

      await call('POST', `/V2/${tc}/alerts/${alert.AlertId}/acknowledge`, { Note: 'Calling you now' });
      await page.getByTestId('acknowledged').getByText(new RegExp(`acknowledged by ${admin.username.replace(/[.@]/g, '.')}`)).waitFor();

      await page.getByTestId('safe').click();
      await until(() => alertsOf(tc, deviceId, 'Stood down').then((a) => a.length), 'EmergencyCancelled raised its alert');
      const sent = await messages(tc, deviceId);
      assert(sent.filter((m) => m.EmergencyState === 'Active').length === 1, `one SOS: ${JSON.stringify(sent)}`);
      assert(sent.filter((m) => m.EmergencyState === 'None').length === 1, 'one "I am safe"');
    } finally {
      await context.close();
      await operator.context().close();
    }
  },

  async 'worker-sos-without-location'() {
    const { tc, deviceId, worker } = await scene();
    const { context, page } = await phone({ geolocation: false });
    try {
      await workerLogin(page, worker);
      await page.locator('[data-testid=location][data-state=denied]').waitFor();
      await page.getByTestId('location').getByText(/SOS still goes/).waitFor();
      await holdSos(page, 2400);
      const [alert] = await until(() => alertsOf(tc, deviceId, 'SOS').then((a) => a.length && a), 'the SOS alert without a position');
      assert(alert.Latitude == null, `no position expected: ${alert.Latitude}`);
    } finally {
      await context.close();
    }
  },

  async 'worker-session'() {
    const { tc, deviceId, worker } = await scene();
    const { context, page } = await phone();
    try {
      await workerLogin(page, worker);
      await page.getByLabel('How long').selectOption('60');
      await page.getByLabel('Check in every').selectOption('15');
      await page.getByLabel('Where / what').fill('Pump house 3, valve check');
      await page.getByRole('button', { name: 'Start session' }).click();
      const listed = await until(async () => ((await call('GET', `/V2/${tc}/monitoring`)).json ?? []).find((s) => s.DeviceId === deviceId),
        'the session in GET /monitoring');
      assert(listed.Note === 'Pump house 3, valve check' && listed.CheckInIntervalMinutes === 15 && listed.DurationMinutes === 60,
        `the session as started: ${JSON.stringify(listed)}`);
      await page.getByTestId('countdown').getByText(/check-in due in/).waitFor();
      if (MINUTE_MS > 0) {
        await page.getByTestId('due').getByText(/overdue/).waitFor({ timeout: 20 * MINUTE_MS + 5 * SECOND });
      }
      await page.getByRole('button', { name: 'I’m OK' }).click();
      await until(async () => (await call('GET', `/V2/${tc}/devices/${deviceId}/monitoring`)).json.CheckInCount === 1, 'the check-in counted');
      await until(async () => (await page.getByTestId('due').textContent()) === '', 'the due state cleared');
      const before = (await call('GET', `/V2/${tc}/devices/${deviceId}/monitoring`)).json.PlannedEndAt;
      await page.getByRole('button', { name: 'Extend +30 min' }).click();
      await until(async () => (await call('GET', `/V2/${tc}/devices/${deviceId}/monitoring`)).json.PlannedEndAt > before, 'the extension');
      await page.getByRole('button', { name: 'End session' }).click();
      await until(async () => !((await call('GET', `/V2/${tc}/monitoring`)).json ?? []).some((s) => s.DeviceId === deviceId), 'the session ended');
      await page.getByRole('button', { name: 'Start session' }).waitFor();
    } finally {
      await context.close();
    }
  },

  async 'worker-offline'() {
    const { tc, deviceId, worker } = await scene();
    const { context, page } = await phone();
    try {
      await workerLogin(page, worker);
      await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
      await page.getByRole('button', { name: 'Start session' }).click();
      await until(async () => ((await call('GET', `/V2/${tc}/monitoring`)).json ?? []).some((s) => s.DeviceId === deviceId), 'the session');
      await page.getByRole('button', { name: 'I’m OK' }).waitFor();
      const online = (await messages(tc, deviceId)).length;

      await context.setOffline(true);
      await page.getByTestId('offline').waitFor();
      await holdSos(page, 2400);
      await page.getByRole('button', { name: 'I’m OK' }).click();
      await until(async () => (await page.getByTestId('waiting').getAttribute('data-count')) === '2', 'two actions waiting');
      await page.getByTestId('waiting').getByText(/SOS/).waitFor();
      await page.getByTestId('sos-status').getByText(/sent as soon as the network returns/).waitFor();
      assert((await messages(tc, deviceId)).length === online, 'something was sent while offline');

      // Opened again with no network: from the service worker's cache, what waits still there.
      await page.reload();
      await page.getByTestId('device').waitFor();
      await until(async () => (await page.getByTestId('waiting').getAttribute('data-count')) === '2', 'still waiting after a reload');

      await context.setOffline(false);
      await until(async () => (await page.getByTestId('waiting').getAttribute('data-count')) === '0', 'the queue sent', 20 * SECOND);
      const sent = (await messages(tc, deviceId)).slice(online);
      assert(sent.length === 2, `once each: ${JSON.stringify(sent.map((m) => m.MessageType))}`);
      assert(sent[0].EmergencyState === 'Active' && sent[1].MessageType === 'CheckIn', 'in the order taken');
      await until(() => alertsOf(tc, deviceId, 'SOS').then((a) => a.length === 1), 'the SOS alert');
      // The same queue sent twice: the server's dedupe keeps one of each.
      const again = sent.map(({ MessageType, SequenceNumber, SentFromDevice, EmergencyState, Position, Properties }) =>
        ({ MessageType, SequenceNumber, SentFromDevice, EmergencyState, Position, Properties }));
      await call('POST', `/V2/${tc}/devices/${deviceId}/momessages?process=true`, again);
      assert((await messages(tc, deviceId)).length === online + 2, 'a resend stored again');
    } finally {
      await context.close();
    }
  },

  async 'worker-texts'() {
    const { tc, deviceId, worker } = await scene();
    await call('POST', `/V2/${tc}/devices/${deviceId}/mtmessages`, { Type: 'Text', Message: '<b>Call the office</b> when you can' });
    const { context, page } = await phone();
    try {
      await workerLogin(page, worker);
      const item = page.getByTestId('texts').locator('li[data-mt]');
      await item.getByText('<b>Call the office</b> when you can', { exact: true }).waitFor();
      await item.getByRole('button', { name: /Acknowledge/ }).click();
      const id = await item.getAttribute('data-mt');
      await until(async () => (await messages(tc, deviceId)).some((m) => m.MessageType === 'MessageAcknowledgement' && m.Properties?.MtMessageId === id),
        'the acknowledgement stored');
      await page.reload();
      await page.locator(`li[data-mt="${id}"][data-acknowledged=true]`).waitFor();
    } finally {
      await context.close();
    }
  },

  async 'worker-no-device'() {
    const { worker } = await scene({ assign: false });
    const { context, page } = await phone();
    try {
      await page.goto(`${base}/worker/`);
      await page.getByLabel('Username').fill(worker.username);
      await page.getByLabel('Password').fill(worker.password);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByTestId('no-device').getByText(new RegExp(`No device is assigned to you \\(${worker.username.replace(/\./g, '\\.')}\\)`)).waitFor();
      await axe(page, 'the worker app with no device');
    } finally {
      await context.close();
    }
  },
};

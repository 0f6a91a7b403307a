// The device scenarios: the list (scope, order, filters, live updates, phone width), a
// device's page (recent messages, the track replay, sending an MT message), and what a
// role that may not send is offered.
import { assert, axe, base, call, login, newPage, SECOND, tenant, unique } from '../lib.mjs';

const MINUTE = 60 * SECOND;
const ago = (ms) => new Date(Date.now() - ms).toISOString();

async function device(tc, name, extra = {}) {
  const id = `e2e-${unique()}`;
  await call('POST', `/V2/${tc}/devices`, { DeviceId: id, DeviceType: 'InReach', FriendlyName: name, ...extra });
  return id;
}

async function report(tc, id, sent, extra = {}) {
  await call('POST', `/V2/${tc}/devices/${id}/momessages`, [
    { MessageType: 'AutomaticPositionReport', SequenceNumber: unique(), SentFromDevice: sent,
      Position: { Latitude: 51.5, Longitude: -0.12 }, ...extra },
  ]);
}

async function portalUser(tc, role) {
  const user = { username: `dev${unique()}@e2e.example`, password: 'a-long-e2e-password' };
  await call('POST', `/V2/${tc}/users`, { Username: user.username, Password: user.password, UserRoleId: role, IsPortalEnabled: true });
  return user;
}

/** The list's rows, as `name` in order. */
async function listed(page) {
  return page.locator('table.devices tbody tr td.col-name').allTextContents();
}

async function waitForList(page, expected, what) {
  const started = Date.now();
  for (;;) {
    const names = await listed(page);
    if (JSON.stringify(names) === JSON.stringify(expected)) return;
    if (Date.now() - started > 5 * SECOND) throw new Error(`${what}: ${JSON.stringify(names)}, expected ${JSON.stringify(expected)}`);
    await page.waitForTimeout(100);
  }
}

export const scenarios = {
  async 'device-list-scope-order-filters'() {
    const mine = await tenant('1000', 'E2E fleet');
    const child = await tenant(mine, 'E2E fleet depot');
    const theirs = await tenant('1000', 'E2E other fleet');
    const { location } = await call('POST', `/V2/${mine}/groups`, { Name: 'North' });
    const north = location.split('/').pop();
    const alpha = await device(mine, 'Alpha van');
    const bravo = await device(mine, 'Bravo truck', { DeviceType: 'Spot', GroupId: north });
    const charlie = await device(child, 'Charlie bike');
    const imei = `3002340${String(unique()).padStart(8, '0')}`.slice(0, 15);
    await device(mine, 'Echo spare', { IridiumImei: imei });
    const delta = await device(theirs, 'Delta foreign');
    await report(mine, alpha, ago(10 * MINUTE));
    await report(mine, bravo, ago(60 * MINUTE));
    await report(child, charlie, ago(1 * MINUTE), { EmergencyState: 'Active' });
    await report(theirs, delta, ago(0));

    const page = await newPage();
    await login(page, await portalUser(mine, 'Manager'));
    await page.getByRole('link', { name: 'Devices' }).click();
    await page.waitForURL(/\/devices$/);
    // The caller's subtree only (the subtenant's device too), newest report first.
    await waitForList(page, ['Charlie bike', 'Alpha van', 'Bravo truck', 'Echo spare'], 'the list');
    await page.locator('[data-testid=device-count]', { hasText: '4 of 4 devices' }).waitFor();
    await axe(page, 'the device list');

    const search = page.getByLabel('Search (name, id, IMEI)');
    await search.fill('bravo');
    await waitForList(page, ['Bravo truck'], 'search by name');
    await search.fill(imei);
    await waitForList(page, ['Echo spare'], 'search by IMEI');
    await search.fill(alpha.toUpperCase());
    await waitForList(page, ['Alpha van'], 'search by id');
    await search.fill('');
    await page.getByLabel('Group').selectOption({ label: 'North' });
    await waitForList(page, ['Bravo truck'], 'group');
    await page.getByLabel('Group').selectOption('');
    await page.getByLabel('Device type').selectOption('InReach');
    await waitForList(page, ['Charlie bike', 'Alpha van', 'Echo spare'], 'type');
    await page.getByLabel('Device type').selectOption('');
    await page.getByLabel('State').selectOption('emergency');
    await waitForList(page, ['Charlie bike'], 'emergency');
    await page.getByLabel('State').selectOption('unknown');
    await waitForList(page, ['Echo spare'], 'no position');
    await page.getByLabel('State').selectOption('reporting');
    await waitForList(page, ['Alpha van', 'Bravo truck'], 'reporting');

    // A report arriving on the stream moves its device to the top, without a reload.
    await report(mine, bravo, ago(0));
    await waitForList(page, ['Bravo truck', 'Alpha van'], 'live update');
    await page.getByLabel('State').selectOption('');
    await waitForList(page, ['Bravo truck', 'Charlie bike', 'Alpha van', 'Echo spare'], 'after the update');

    // Phone width: nothing wider than the screen, the names still there.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(200);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert(overflow <= 0, `the list is ${overflow}px wider than a phone`);
    await axe(page, 'the device list at phone width');
    // Keyboard: the search is reachable and a row's link opens the device.
    await page.locator('table.devices tbody tr').first().getByRole('link').focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/devices/${mine}/${bravo}$`));
    await page.context().close();
  },

  async 'device-page-messages-replay-send'() {
    const tc = await tenant('1000', 'E2E device page');
    const id = await device(tc, 'Foxtrot van');
    const times = [50, 40, 30, 20, 10].map((m) => ago(m * MINUTE));
    await call('POST', `/V2/${tc}/devices/${id}/momessages`, times.map((sent, i) => ({
      MessageType: i === 4 ? 'FreeText' : 'AutomaticPositionReport', SequenceNumber: unique(), SentFromDevice: sent,
      Message: i === 4 ? 'Hello from the field' : undefined,
      Position: { Latitude: 51.5 + i * 0.01, Longitude: -0.12 + i * 0.01 },
    })));
    const page = await newPage();
    await login(page, await portalUser(tc, 'User'));
    await page.goto(`${base}/devices/${tc}/${id}`);
    await page.getByRole('heading', { name: 'Foxtrot van' }).waitFor();
    // Recent messages, newest first.
    const rows = page.locator('[data-testid=device-messages] tbody tr');
    await rows.nth(4).waitFor();
    assert((await rows.first().textContent()).includes('Hello from the field'), 'the newest message first');
    assert((await rows.count()) === 5, `${await rows.count()} messages listed`);
    await page.locator('[data-testid=device-summary] [data-field="device.lastReport"]').waitFor();

    // The replay: the window holds the five positions; playing reaches the last one.
    await page.getByRole('button', { name: 'Show the track' }).click();
    await page.locator('[data-testid=replay-message]', { hasText: '5 positions' }).waitFor();
    const time = page.locator('[data-testid=replay-time]');
    assert(Date.parse(await time.getAttribute('data-iso')) === Date.parse(times[0]), 'the replay starts at the first position');
    await page.getByLabel('Speed').selectOption('16');
    await page.getByRole('button', { name: 'Play' }).click();
    await page.locator('[data-testid=replay-time][data-index="4"]').waitFor({ timeout: 5 * SECOND });
    assert(Date.parse(await time.getAttribute('data-iso')) === Date.parse(times[4]), 'the replay ends at the last position');
    assert(/position 5 of 5/.test(await time.textContent()), `shown: ${await time.textContent()}`);
    await page.getByRole('button', { name: 'Play' }).waitFor();
    // The slider by keyboard, its value told as the position's time.
    const slider = page.getByLabel('Replay position');
    await slider.focus();
    await page.keyboard.press('Home');
    await page.locator('[data-testid=replay-time][data-index="0"]').waitFor();
    await page.keyboard.press('ArrowRight');
    await page.locator('[data-testid=replay-time][data-index="1"]').waitFor();
    assert((await slider.getAttribute('aria-valuetext')) === (await time.textContent()).replace(/ \(position.*$/, ''), 'aria-valuetext is the time');

    // An MT text sent from the page is queued through the API, and its status follows.
    await page.getByLabel('Message or command').selectOption('Text');
    await page.getByLabel('Text', { exact: true }).fill('Return to base');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('[data-testid=mt-result]', { hasText: 'Queued for the device' }).waitFor();
    const { json: sent } = await call('GET', `/V2/${tc}/devices/${id}/mtmessages`);
    const text = sent.find((m) => m.Message === 'Return to base');
    assert(text && text.Type === 'Text' && text.Status === 'Queued', JSON.stringify(sent));
    await page.locator(`[data-testid=mt-messages] tr[data-mt="${text.MessageId}"][data-status=Queued]`).waitFor();
    await call('PATCH', `/V2/${tc}/devices/${id}/mtmessages/${text.MessageId}`, [{ op: 'replace', path: '/Status', value: 'Delivered' }]);
    await page.locator(`[data-testid=mt-messages] tr[data-mt="${text.MessageId}"][data-status=Delivered]`).waitFor({ timeout: 10 * SECOND });
    await axe(page, 'a device page');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(200);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert(overflow <= 0, `the device page is ${overflow}px wider than a phone`);
    await page.context().close();
  },

  async 'device-page-read-only-is-not-offered-sending'() {
    const tc = await tenant('1000', 'E2E read only');
    const id = await device(tc, 'Golf van');
    const reader = await portalUser(tc, 'ReadOnly');
    const page = await newPage();
    await login(page, reader);
    await page.goto(`${base}/devices/${tc}/${id}`);
    await page.locator('[data-testid=mt-not-allowed]').waitFor();
    assert((await page.locator('[data-testid=mt-form]').count()) === 0, 'the send form is offered');
    let refused = '';
    await call('POST', `/V2/${tc}/devices/${id}/mtmessages`, { Type: 'Text', Message: 'no' }, reader).catch((e) => (refused = e.message));
    assert(/ 403 /.test(refused), `the API answered: ${refused}`);
    await page.context().close();
  },
};

// Issue 43, the console fit for duty: the device list names each device's person and
// tenant and links its open alert; the device page links the alert, shows the person's
// emergency contacts, warns when no channel carries texts and counts a satellite text's
// 160 characters; the users page finds a worker, opens their profile and stores an
// edited emergency contact; a new user is not given the console by default; reports
// open on a window holding today, in words, with no score for no data.
import { assert, base, call, login, newPage, SECOND, sosNotification, tenant, unique } from '../lib.mjs';

const PASSWORD = 'a-long-e2e-password';

async function person(tc, role, first, last, portal = true) {
  const who = { username: `${first.toLowerCase()}${unique()}@e2e.example`, password: PASSWORD };
  const { location } = await call('POST', `/V2/${tc}/users`, {
    Username: who.username, Password: PASSWORD, UserRoleId: role, IsPortalEnabled: portal, FirstName: first, LastName: last,
  });
  return { ...who, id: location.split('/').pop() };
}

async function device(tc, name, extra = {}) {
  const id = `duty-${unique()}`;
  await call('POST', `/V2/${tc}/devices`, { DeviceId: id, DeviceType: 'InReach', FriendlyName: name, ...extra });
  return id;
}

async function raise(tc, id) {
  const { json } = await call('POST', `/V2/${tc}/devices/${id}/momessages?process=true`, [
    { MessageType: 'FreeText', EmergencyState: 'Active', SequenceNumber: unique(), SentFromDevice: new Date().toISOString(),
      Position: { Latitude: 51.5, Longitude: -0.12 } },
  ]);
  const alertId = json?.[0]?.Notifications?.[0]?.AlertId;
  assert(alertId, `no alert raised: ${JSON.stringify(json)}`);
  return alertId;
}

const imei = () => `3002340${String(unique()).padStart(8, '0')}`.slice(0, 15);

async function open(page, name) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name }).click();
}

export const scenarios = {
  async 'duty-device-list-and-page'() {
    const tc = await tenant('1000', `E2E duty ${unique()}`);
    const { json: own } = await call('GET', `/V2/${tc}`);
    const manager = await person(tc, 'Manager', 'Mona', 'Manager');
    const jane = await person(tc, 'User', 'Jane', 'Okafor', false);
    await call('PUT', `/V2/${tc}/userprofile/${jane.id}`, {
      CellPhone: '+447700900123', EmergencyContactName: 'Sam Okafor', EmergencyContactTelephoneNumber: '+447700900456',
    });
    await sosNotification(tc);
    const sat = await device(tc, 'Satellite van', { UserId: jane.id, IridiumImei: imei() });
    const spot = await device(tc, 'Spot tracker', { DeviceType: 'Spot' });
    const alertId = await raise(tc, sat);

    const page = await newPage();
    await login(page, manager);
    await open(page, 'Devices');
    const row = page.locator(`table.devices tr[data-device="${tc}/${sat}"]`);
    await row.locator('td.col-user', { hasText: 'Jane Okafor' }).waitFor();
    // The tenant column says whose device it is, in a one-tenant scope too.
    await row.locator('td.col-tenant', { hasText: own.Description }).waitFor();
    await row.locator('td.col-lastReport', { hasText: /seen .* ago/ }).waitFor();
    const other = page.locator(`table.devices tr[data-device="${tc}/${spot}"]`);
    assert((await other.locator('td.col-user').textContent()) === 'Not assigned', 'an unassigned device');
    assert((await other.locator('td.col-tenant').textContent()).includes(tc), 'the tenant code');
    const link = row.locator('[data-testid=device-alert-link]');
    assert((await link.getAttribute('href')) === `/alerts/${tc}/${alertId}`, `the alert link: ${await link.getAttribute('href')}`);
    await page.getByLabel('Search (name, id, IMEI)').fill('okafor');
    await page.locator('[data-testid=device-count]', { hasText: '1 of 2 devices' }).waitFor();

    // The device page: the alert, the person and their emergency contact.
    await row.locator('td.col-name a').click();
    await page.getByRole('heading', { name: 'Satellite van' }).waitFor();
    const alertLink = page.locator('[data-testid=device-open-alert]');
    assert((await alertLink.getAttribute('href')) === `/alerts/${tc}/${alertId}`, 'the open alert on the device page');
    await page.locator('[data-testid=device-person]', { hasText: 'Jane Okafor' }).waitFor();
    await page.locator('[data-testid=emergency-contact]', { hasText: 'Sam Okafor' }).waitFor();
    // A satellite text: counted against 160 characters, refused by the form past them.
    assert((await page.locator('[data-testid=mt-no-channel]').count()) === 0, 'a warning for a device that takes texts');
    await page.getByLabel('Message or command').selectOption('Text');
    const text = page.getByLabel('Text', { exact: true });
    await text.fill('x'.repeat(150));
    await page.locator('[data-testid=mt-count]', { hasText: '150 of 160 characters' }).waitFor();
    await text.fill('x'.repeat(161));
    await page.locator('[data-testid=mt-count]', { hasText: '161 of 160 characters' }).waitFor();
    assert(!(await text.evaluate((el) => el.checkValidity())), 'a 161-character satellite text passes the form');
    // A ready-made message fills the text.
    await page.getByLabel('Ready-made message').selectOption({ label: 'Please check in now.' });
    assert((await text.inputValue()) === 'Please check in now.', `the text: ${await text.inputValue()}`);
    await alertLink.click();
    await page.waitForURL(new RegExp(`/alerts/${tc}/${alertId}$`));

    // A device no channel carries texts to says so where the text is written.
    await page.goto(`${base}/devices/${tc}/${spot}`);
    await page.getByRole('heading', { name: 'Spot tracker' }).waitFor();
    await page.locator('[data-testid=mt-no-channel]', { hasText: 'No channel carries texts' }).waitFor();
    assert((await page.locator('[data-testid=device-open-alert]').count()) === 0, 'an alert link without an alert');
    await page.context().close();
  },

  async 'duty-users-search-profile-edit'() {
    const tc = await tenant('1000', `E2E duty users ${unique()}`);
    const manager = await person(tc, 'Manager', 'Mona', 'Manager');
    const worker = await person(tc, 'User', 'Kwame', 'Asante', false);
    for (let i = 0; i < 3; i += 1) await person(tc, 'User', `Other${i}`, 'Person', false);
    const page = await newPage();
    await login(page, manager);
    await open(page, 'Users');
    // A new user is not given the console unless someone ticks it.
    const portal = page.locator('[data-testid=user-create]').getByLabel('May use the console');
    assert(!(await portal.isChecked()), '"may use the console" is ticked for a new user');
    await page.locator('[data-testid=user-count]', { hasText: '5 of 5 users' }).waitFor();
    await page.getByLabel('Search users (name or e-mail)').fill('asante');
    await page.locator('[data-testid=user-count]', { hasText: '1 of 5 users' }).waitFor();
    assert((await page.locator('[data-testid=users] tbody tr').count()) === 1, 'rows after the search');
    await page.getByRole('button', { name: `Profile of ${worker.username}` }).click();
    const profile = page.locator('[data-testid=user-profile][data-loaded=true]');
    await profile.waitFor();
    const first = profile.getByRole('group', { name: 'First emergency contact' });
    await first.getByLabel('Name').fill('Abena Asante');
    await first.getByLabel('Phone').fill('+233201234567');
    await profile.getByLabel('Information for responders (medical, access, …)').fill('Asthma: inhaler in the left pocket');
    await profile.getByRole('button', { name: 'Save profile' }).click();
    await page.locator('[data-testid=users-result][data-state=ok]', { hasText: 'Profile of' }).waitFor();
    const { json: stored } = await call('GET', `/V2/${tc}/userprofile/${worker.id}`);
    assert(stored.EmergencyContactName === 'Abena Asante' && stored.EmergencyContactTelephoneNumber === '+233201234567', JSON.stringify(stored));
    assert(stored.EmergencyInformation === 'Asthma: inhaler in the left pocket', JSON.stringify(stored));
    // A refused value is named in words, not by its field path.
    await first.getByLabel('Phone').fill('0123');
    await profile.getByRole('button', { name: 'Save profile' }).click();
    const refused = page.locator('[data-testid=users-result][data-state=error]');
    await refused.waitFor();
    const said = await refused.textContent();
    assert(!said.includes('EmergencyContactTelephoneNumber'), `a field path shown: ${said}`);
    // Each password in a form of its own, named for password managers.
    const forms = await page.locator('[data-testid=users] form[data-testid=password-form]').count();
    const passwords = await page.locator('[data-testid=users] form[data-testid=password-form] input[type=password][autocomplete=new-password]').count();
    assert(forms === 1 && passwords === 1, `${forms} password forms, ${passwords} password fields`);
    await page.context().close();
  },

  async 'duty-reports-default-window-words'() {
    const tc = await tenant('1000', `E2E duty reports ${unique()}`);
    const manager = await person(tc, 'Manager', 'Mona', 'Manager');
    await sosNotification(tc);
    const van = await device(tc, 'Report van');
    await raise(tc, van);
    await device(tc, 'Idle car');
    const page = await newPage();
    await login(page, manager);
    await open(page, 'Reports');
    // The default window holds today: the alert raised a moment ago is in it.
    await page.getByLabel('Report', { exact: true }).selectOption('AlertsReport');
    await page.locator('[data-testid=report-from-shown]').waitFor();
    const shown = await page.locator('[data-testid=report-from-shown]').textContent();
    assert(/^\d{1,2} [A-Z][a-z]{2} \d{4}/.test(shown), `the start shown back as the profile writes it: ${shown}`);
    await page.getByRole('button', { name: 'Show' }).click();
    const table = page.locator('[data-testid=report-table]');
    await table.waitFor({ timeout: 10 * SECOND });
    const headers = await table.locator('thead th').allTextContents();
    assert(headers.includes('Device') && headers.includes('Raised'), `headers: ${headers}`);
    assert(!headers.some((x) => /^[A-Z][a-z]+[A-Z]/.test(x)), `a raw field name among the headers: ${headers}`);
    await table.locator('tbody tr', { hasText: 'Report van' }).waitFor();
    const raised = await table.locator('tbody tr td[data-field=StartTimeLocal]').first().textContent();
    assert(!/\d{4}-\d{2}-\d{2}T/.test(raised), `an ISO time shown: ${raised}`);
    // Devices and users are chosen by name; a device that drove nothing has no score.
    await page.getByLabel('Report', { exact: true }).selectOption('DriverBehaviourReport');
    await page.getByLabel('One row per').selectOption('Vehicle');
    await page.getByLabel('Devices').selectOption({ label: 'Idle car' });
    await page.getByRole('button', { name: 'Show' }).click();
    const row = page.locator('[data-testid=report-table] tbody tr', { hasText: 'Idle car' });
    await row.waitFor({ timeout: 10 * SECOND });
    const score = await row.locator('td[data-field=Score]').textContent();
    assert(score === 'no data', `the score of a device with no data: ${score}`);
    const users = await page.locator('[data-testid=report-users] option').allTextContents();
    assert(users.some((u) => u.startsWith('Mona Manager')), `users offered: ${users}`);
    await page.context().close();
  },
};

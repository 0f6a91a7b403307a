// The configuration scenarios: a circle geofence drawn on the map and read back through
// the API, a 400 shown beside the shape, an events expression checked while it is typed,
// a notification with a contact recipient, a contact and a list, what a read-only role is
// offered, and axe on each page. Each runs in a tenant of its own, as a Manager there.
import { assert, axe, base, call, login, newPage, SECOND, tenant, unique } from '../lib.mjs';

/** A fresh tenant and a console user of `role` in it. */
async function configurer(role = 'Manager') {
  const tc = await tenant('1000', `E2E config ${unique()}`);
  const user = { username: `cfg${unique()}@e2e.example`, password: 'a-long-e2e-password' };
  await call('POST', `/V2/${tc}/users`, { Username: user.username, Password: user.password, UserRoleId: role, IsPortalEnabled: true });
  return { tc, user };
}

async function open(page, path) {
  await page.goto(base + path);
  await page.locator('main.config-page h1').waitFor();
}

async function contact(tc, name, address) {
  const { location } = await call('POST', `/V2/${tc}/addressbookcontacts`, { ContactName: name, ContactEntries: [{ Address: address }] });
  return location.split('/').pop();
}

export const scenarios = {
  async 'config-geofence-drawn-circle'() {
    const { tc, user } = await configurer();
    const page = await newPage();
    await login(page, user);
    await open(page, '/config/geofences');
    await page.locator('[data-testid=geofence-list]').waitFor();
    await axe(page, 'the geofences page');
    await page.getByTestId('new-geofence').click();
    const form = page.getByTestId('geofence-form');
    await form.getByLabel('Name').fill('Depot');
    await form.getByLabel('Shape').selectOption('circle');
    await form.getByTestId('draw-shape').click();
    const box = await page.getByTestId('geofence-map').boundingBox();
    const cx = box.x + box.width / 2;
    const cy = box.y + box.height / 2;
    await page.mouse.click(cx, cy);
    await page.mouse.move(cx + 50, cy, { steps: 5 });
    await page.mouse.click(cx + 100, cy);
    // The drawn circle filled the form's fields.
    await form.getByLabel('Radius (metres)').and(page.locator(':not([value=""])')).waitFor();
    const lat = Number(await form.getByLabel('Centre latitude').inputValue());
    const lon = Number(await form.getByLabel('Centre longitude').inputValue());
    const radius = Number(await form.getByLabel('Radius (metres)').inputValue());
    assert(Number.isFinite(lat) && Number.isFinite(lon) && radius > 0, `drawn: ${lat} ${lon} ${radius}`);
    await axe(page, 'the geofence editor');
    await form.getByTestId('save-geofence').click();
    await page.locator('[data-testid=geofence-list] tr', { hasText: 'Depot' }).waitFor();
    const { json: list } = await call('GET', `/V2/${tc}/geofences`);
    const saved = list.find((g) => g.Name === 'Depot');
    assert(saved, `not saved: ${JSON.stringify(list)}`);
    assert(saved.GeofenceType === 'circle', JSON.stringify(saved));
    assert(saved.CircleCentre.Lat === lat && saved.CircleCentre.Lon === lon, `centre ${JSON.stringify(saved.CircleCentre)} vs ${lat}, ${lon}`);
    assert(saved.CircleRadius === radius, `radius ${saved.CircleRadius} vs ${radius}`);
    // The map opened at 20° N, 0°: its middle is there, and 100 px at zoom 2 is thousands of km.
    assert(Math.abs(lat - 20) < 2 && Math.abs(lon) < 2, `centre ${lat}, ${lon}`);
    assert(radius > 1_000_000 && radius < 10_000_000, `radius ${radius}`);
    // Edited: the stored circle comes back into the form; then deleted.
    await page.getByRole('button', { name: 'Edit Depot' }).click();
    assert(Number(await form.getByLabel('Radius (metres)').inputValue()) === radius, 'the radius read back');
    await form.getByLabel('Radius (metres)').fill('500');
    await form.getByTestId('save-geofence').click();
    await form.waitFor({ state: 'hidden' });
    const { json: edited } = await call('GET', `/V2/${tc}/geofences/${saved.GeofenceId}`);
    assert(edited.CircleRadius === 500 && edited.CircleCentre.Lat === lat, JSON.stringify(edited));
    page.on('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete Depot' }).click();
    await page.getByTestId('geofence-status').filter({ hasText: '“Depot” deleted.' }).waitFor();
    const { json: after } = await call('GET', `/V2/${tc}/geofences`);
    assert(after.length === 0, JSON.stringify(after));
    await page.context().close();
  },

  async 'config-geofence-400-beside-the-shape'() {
    const { user } = await configurer();
    const page = await newPage();
    await login(page, user);
    await open(page, '/config/geofences');
    await page.getByTestId('new-geofence').click();
    const form = page.getByTestId('geofence-form');
    await form.getByLabel('Name').fill('Too big');
    await form.getByLabel('Centre latitude').fill('51.5');
    await form.getByLabel('Centre longitude').fill('-0.12');
    await form.getByLabel('Radius (metres)').fill('30000000');
    await form.getByTestId('save-geofence').click();
    const beside = form.locator('[data-field=CircleRadius]');
    await beside.filter({ hasText: /\S/ }).waitFor();
    assert((await form.getByLabel('Radius (metres)').getAttribute('aria-invalid')) === 'true', 'radius not marked invalid');
    await page.locator('.leaflet-tooltip.shape-error').waitFor();
    const onShape = await page.locator('.leaflet-tooltip.shape-error').innerText();
    assert(onShape.includes((await beside.innerText()).trim()), `shape says ${onShape}`);
    await page.context().close();
  },

  async 'config-expression-checked-while-typing'() {
    const { tc, user } = await configurer();
    const page = await newPage();
    await login(page, user);
    await open(page, '/config/notifications');
    await page.locator('[data-testid=notification-list]').waitFor();
    await axe(page, 'the notifications page');
    await page.getByTestId('new-notification').click();
    const form = page.getByTestId('notification-form');
    await form.getByLabel('Name').fill('SOS');
    await form.getByTestId('expression').pressSequentially('Emergency AND', { delay: 20 });
    // What the API itself says about this expression.
    const response = await fetch(`${base}/V2/${tc}/eventnotifications/validate`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: 'Basic ' + Buffer.from(`${user.username}:${user.password}`).toString('base64') },
      body: JSON.stringify({ NotificationName: 'SOS', EventsExpression: 'Emergency AND' }),
    });
    const problem = await response.json();
    const message = problem.errors.find((e) => e.field === 'EventsExpression').message;
    assert(message.startsWith('position 14:'), message);
    await form.locator('[data-field=EventsExpression]', { hasText: message }).waitFor({ timeout: 5 * SECOND });
    await form.locator('[data-testid=expression-check][data-state=invalid] mark').waitFor();
    assert((await form.getByTestId('expression').getAttribute('aria-invalid')) === 'true', 'expression not marked invalid');
    await axe(page, 'the notification editor with an expression error');
    await form.getByTestId('expression').pressSequentially(' MissedCheckIn', { delay: 20 });
    await form.locator('[data-testid=expression-check][data-state=valid]').waitFor({ timeout: 5 * SECOND });
    assert((await form.locator('[data-field=EventsExpression]').innerText()).trim() === '', 'the old message stayed');
    const { json: stored } = await call('GET', `/V2/${tc}/eventnotifications`);
    assert(stored.length === 0, 'checking saved something');
    await page.context().close();
  },

  async 'config-notification-with-contact'() {
    const { tc, user } = await configurer();
    const contactId = await contact(tc, 'Duty officer', '+447700900123');
    const page = await newPage();
    await login(page, user);
    await open(page, '/config/notifications');
    await page.getByTestId('new-notification').click();
    const form = page.getByTestId('notification-form');
    await form.getByLabel('Name').fill('Lone worker SOS');
    await form.getByTestId('expression').fill('Emergency OR MissedCheckIn');
    await form.getByLabel('Severity').selectOption('2');
    await form.getByLabel('Raise an alert').check();
    await form.getByLabel('Recipient type').selectOption('TenantContact');
    await form.getByLabel('Contact', { exact: true }).selectOption({ label: 'Duty officer' });
    await form.getByTestId('add-recipient').click();
    await form.locator('[data-testid=recipients] li[data-type=TenantContact]', { hasText: 'Duty officer' }).waitFor();
    await form.getByTestId('save-notification').click();
    const row = page.locator('[data-testid=notification-list] tr', { hasText: 'Lone worker SOS' });
    await row.waitFor();
    const { json: list } = await call('GET', `/V2/${tc}/eventnotifications`);
    const saved = list.find((n) => n.NotificationName === 'Lone worker SOS');
    assert(saved, JSON.stringify(list));
    assert(saved.EventsExpression === 'Emergency OR MissedCheckIn' && saved.Severity === '2' && saved.RaiseAlert === true, JSON.stringify(saved));
    assert(saved.Recipients.length === 1 && saved.Recipients[0].Type === 'TenantContact' && saved.Recipients[0].ContactId === contactId,
      JSON.stringify(saved.Recipients));
    // Disabled from the list, and enabled again.
    await row.getByRole('button', { name: 'Disable Lone worker SOS' }).click();
    await page.locator('[data-testid=notification-list] tr[data-disabled=true]', { hasText: 'Lone worker SOS' }).waitFor();
    const { json: off } = await call('GET', `/V2/${tc}/eventnotifications/${saved.NotificationId}`);
    assert(off.NotificationDisabled === true && off.Recipients.length === 1, JSON.stringify(off));
    await page.getByRole('button', { name: 'Enable Lone worker SOS' }).click();
    await page.locator('[data-testid=notification-list] tr[data-disabled=false]', { hasText: 'Lone worker SOS' }).waitFor();
    await page.context().close();
  },

  async 'config-contact-and-list'() {
    const { tc, user } = await configurer();
    const page = await newPage();
    await login(page, user);
    await open(page, '/config/addressbook');
    await page.locator('[data-testid=contact-list]').waitFor();
    await axe(page, 'the address book');
    await page.getByTestId('new-contact').click();
    const contactForm = page.getByTestId('contact-form');
    await contactForm.getByLabel('Name').fill('Site manager');
    await contactForm.getByLabel('Address 1', { exact: true }).fill('not an address');
    await contactForm.getByTestId('save-contact').click();
    // The API's 400 beside the address it is about.
    await contactForm.locator('[data-field="ContactEntries[0]"]').filter({ hasText: /\S/ }).waitFor();
    await contactForm.getByLabel('Address 1', { exact: true }).fill('+447700900456');
    await contactForm.getByTestId('add-address').click();
    await contactForm.getByLabel('Address 2', { exact: true }).fill('site.manager@example.com');
    await contactForm.getByTestId('save-contact').click();
    await page.locator('[data-testid=contact-list] tr', { hasText: 'Site manager' }).waitFor();
    const { json: contacts } = await call('GET', `/V2/${tc}/addressbookcontacts`);
    const saved = contacts.find((c) => c.ContactName === 'Site manager');
    assert(saved && saved.ContactEntries.map((e) => e.Address).join(',') === '+447700900456,site.manager@example.com', JSON.stringify(contacts));

    await page.getByTestId('new-list').click();
    const listForm = page.getByTestId('list-form');
    await listForm.getByLabel('Name').fill('Night shift');
    await listForm.getByLabel('Recipient type').selectOption('TenantContact');
    await listForm.getByLabel('Contact', { exact: true }).selectOption({ label: 'Site manager' });
    await listForm.getByTestId('add-recipient').click();
    await listForm.getByLabel('Recipient type').selectOption('MessagingAddress');
    await listForm.getByLabel('Address (mail:… or sms:+…)').fill('mail:ops@example.com');
    await listForm.getByTestId('add-recipient').click();
    await axe(page, 'the distribution list editor');
    await listForm.getByTestId('save-list').click();
    await page.locator('[data-testid=list-list] tr', { hasText: 'Night shift' }).waitFor();
    const { json: lists } = await call('GET', `/V2/${tc}/addressbookdistributionlists`);
    const list = lists.find((l) => l.ListName === 'Night shift');
    assert(list, JSON.stringify(lists));
    assert(JSON.stringify(list.Recipients.map((r) => [r.Type, r.ContactId ?? r.MessagingAddress])) ===
      JSON.stringify([['TenantContact', saved.ContactId], ['MessagingAddress', 'mail:ops@example.com']]), JSON.stringify(list.Recipients));
    // Deleting asks first; a contact a list still names is refused, and the page says why.
    page.on('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete Site manager' }).click();
    await page.getByTestId('addressbook-status').filter({ hasText: 'remove it there first' }).waitFor();
    await page.getByRole('button', { name: 'Delete Night shift' }).click();
    await page.getByTestId('addressbook-status').filter({ hasText: '“Night shift” deleted.' }).waitFor();
    await page.getByRole('button', { name: 'Delete Site manager' }).click();
    await page.getByTestId('addressbook-status').filter({ hasText: '“Site manager” deleted.' }).waitFor();
    const { json: left } = await call('GET', `/V2/${tc}/addressbookcontacts`);
    const { json: leftLists } = await call('GET', `/V2/${tc}/addressbookdistributionlists`);
    assert(left.length === 0 && leftLists.length === 0, `left: ${JSON.stringify([left, leftLists])}`);
    await page.context().close();
  },

  async 'config-read-only-role'() {
    const { tc, user } = await configurer('ReadOnly');
    await call('POST', `/V2/${tc}/geofences`, { Name: 'Yard', GeofenceType: 'circle', CircleCentre: { Lat: 51.5, Lon: -0.1 }, CircleRadius: 100 });
    await contact(tc, 'Duty officer', '+447700900123');
    const page = await newPage();
    await login(page, user);
    for (const [path, testid] of [['/config/geofences', 'geofence-list'], ['/config/notifications', 'notification-list'], ['/config/addressbook', 'contact-list']]) {
      await open(page, path);
      await page.locator(`[data-testid=${testid}]`).waitFor();
      await page.getByText('Your role may read this configuration but not change it.').waitFor();
      assert((await page.getByRole('button', { name: /^(New|Delete|Disable)/ }).count()) === 0, `${path} offers changes`);
    }
    await page.locator('[data-testid=contact-list] tr', { hasText: 'Duty officer' }).waitFor();
    await page.context().close();
  },

  async 'config-phone-width'() {
    const { tc, user } = await configurer();
    await contact(tc, 'Duty officer with a rather long name', 'duty.officer.with.a.long.address@example.com');
    await call('POST', `/V2/${tc}/eventnotifications`, {
      NotificationName: 'Speeding', EventsExpression: 'AutomaticPositionReport AND Speed > 120 AND NOT Day IN (Sat, Sun)', Recipients: [] });
    const page = await newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await login(page, user);
    for (const [path, opener] of [['/config/geofences', 'new-geofence'], ['/config/notifications', 'new-notification'], ['/config/addressbook', 'new-contact']]) {
      await open(page, path);
      await page.getByTestId(opener).click();
      await page.locator('form.config-form:not([hidden])').waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert(overflow <= 0, `${path} is ${overflow}px wider than the phone`);
    }
    await page.context().close();
  },

  async 'config-keyboard-only'() {
    const { tc, user } = await configurer();
    const page = await newPage();
    await login(page, user);
    await open(page, '/config/addressbook');
    await page.locator('[data-testid=contact-list]').waitFor();
    // From the "New contact" button on, only keys: Enter opens the form (its heading takes
    // the focus), Tab reaches the name and the first address, Enter in a field saves.
    await page.getByTestId('new-contact').focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Keyboard contact');
    await page.keyboard.press('Tab');
    await page.keyboard.type('+447700900789');
    await page.keyboard.press('Enter');
    await page.locator('[data-testid=contact-list] tr', { hasText: 'Keyboard contact' }).waitFor();
    const { json: contacts } = await call('GET', `/V2/${tc}/addressbookcontacts`);
    assert(contacts.some((c) => c.ContactName === 'Keyboard contact' && c.ContactEntries[0]?.Address === '+447700900789'), JSON.stringify(contacts));
    await page.context().close();
  },
};

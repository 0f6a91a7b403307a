// A night on duty (issue 43): the map opens fitted to the devices, an SOS device's marker
// is hit by the pointer and opens its alert, and its marker and track show on the alert
// page; the alert page shows what was sent, tel:/mailto: links, only the actions its
// status allows, a one-click log entry, an outcome to choose, and a second acknowledge by
// the same operator as theirs; the queue puts a new open SOS above an acknowledged one,
// keeps the newest-first choice, and fits a phone's width; a late SOS says how late.
import { assert, base, call, login, newPage, SECOND, sosNotification, tenant, unique } from '../lib.mjs';

const PASSWORD = 'a-long-e2e-password';

/** A tenant of its own with a Manager who sees only it. */
async function ownTenant(description) {
  const tc = await tenant('1000', description);
  const user = { username: `duty${unique()}@e2e.example`, password: PASSWORD };
  const { location } = await call('POST', `/V2/${tc}/users`, {
    Username: user.username, Password: PASSWORD, UserRoleId: 'Manager', IsPortalEnabled: true, FirstName: 'Nina', LastName: 'Night',
  });
  return { tc, user: { ...user, id: location.split('/').pop() } };
}

async function device(tc, name, extra = {}) {
  const id = `30023404${String(unique()).padStart(7, '0')}`;
  await call('POST', `/V2/${tc}/devices`, { DeviceId: id, DeviceType: 'InReach', FriendlyName: name, ...extra });
  return id;
}

const minutesAgo = (m) => new Date(Date.now() - m * 60 * SECOND);

async function report(tc, id, lat, lon, extra = {}, sent = new Date()) {
  await call('POST', `/V2/${tc}/devices/${id}/momessages?process=true`, [
    { MessageType: 'Position', SequenceNumber: unique(), SentFromDevice: sent.toISOString(), Position: { Latitude: lat, Longitude: lon }, ...extra },
  ]);
}

async function sosAt(tc, id, lat, lon, text) {
  await report(tc, id, lat, lon, { MessageType: 'FreeText', EmergencyState: 'Active', ...(text ? { Message: text } : {}) });
  const { json } = await call('GET', `/V2/${tc}/alerts?deviceId=${id}&status=Open`);
  assert(json.length === 1, `one open alert of ${id}: ${JSON.stringify(json)}`);
  return json[0].AlertId;
}

/** What a real pointer meets at the centre of `selector`'s shape. */
async function hitAt(page, selector) {
  const shape = page.locator(selector).first();
  await shape.waitFor({ state: 'attached' });
  const box = await shape.boundingBox();
  assert(box, `${selector} has no box`);
  const x = box.x + box.width / 2;
  const y = box.y + box.height / 2;
  const hit = await page.evaluate(([x, y]) => {
    const el = document.elementFromPoint(x, y);
    return { tag: el?.tagName.toLowerCase() ?? '', cls: el?.getAttribute('class') ?? '', device: el?.getAttribute('data-device') ?? '',
      pane: el?.closest('.leaflet-pane:not(.leaflet-map-pane)')?.className ?? '' };
  }, [x, y]);
  return { x, y, hit };
}

/** Waits until the map holding `selector` has stopped moving (a fit or zoom animates). */
async function settled(page, selector) {
  let last = '';
  for (let i = 0; i < 40; i++) {
    const box = JSON.stringify(await page.locator(selector).first().boundingBox());
    const moving = await page.locator('.leaflet-container.leaflet-zoom-anim').count();
    if (box === last && moving === 0) return;
    last = box;
    await page.waitForTimeout(150);
  }
  throw new Error(`${selector} never stopped moving`);
}

/** Whether `selector` is really shown: laid out, not display:none or hidden (itself or above). */
async function shown(page, selector) {
  return page.locator(selector).first().evaluate((el) => {
    for (let e = el; e; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.display === 'none' || s.visibility === 'hidden') return false;
    }
    return el.getClientRects().length > 0;
  });
}

async function fitsWidth(page, what) {
  const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
  assert(scroll <= width, `${what} is ${scroll} px wide at a ${width} px viewport`);
}

export const scenarios = {
  async 'duty-map-fits-and-opens-the-sos'() {
    const { tc, user } = await ownTenant('E2E duty map');
    await sosNotification(tc);
    const oslo = await device(tc, `Oslo crew ${unique()}`);
    await report(tc, oslo, 59.91, 10.75);
    const bergen = await device(tc, `Bergen crew ${unique()}`);
    await report(tc, bergen, 60.36, 5.3, {}, minutesAgo(30));
    await report(tc, bergen, 60.38, 5.31, {}, minutesAgo(15));
    const alertId = await sosAt(tc, bergen, 60.39, 5.32, 'Slipped on the quay');

    const page = await newPage();
    await login(page, user);
    await page.getByRole('link', { name: 'Map' }).click();
    const map = page.locator('[data-testid=device-map][data-devices="2"][data-ready=true][data-fitted=true]');
    await map.waitFor();
    // Fitted to the devices: zoomed in past the world view, every marker inside the map.
    const zoom = Number(await map.getAttribute('data-zoom'));
    assert(zoom >= 5, `the map opened at zoom ${zoom}, not fitted to two devices 300 km apart`);
    const frame = await map.boundingBox();
    for (const id of [oslo, bergen]) {
      const b = await page.locator(`path[data-device="${id}"]`).boundingBox();
      assert(b && frame && b.x >= frame.x && b.y >= frame.y && b.x + b.width <= frame.x + frame.width && b.y + b.height <= frame.y + frame.height,
        `device ${id} at ${JSON.stringify(b)} is outside the map ${JSON.stringify(frame)}`);
    }
    // Beside the map: the device in emergency, with since when and its alert.
    const listed = page.locator(`[data-testid=emergency-list] li[data-device="${bergen}"]`);
    await listed.waitFor();
    assert(/since/.test(await listed.innerText()), await listed.innerText());
    assert((await listed.getByRole('link', { name: 'Open the alert' }).getAttribute('href')) === `/alerts/${tc}/${alertId}`, 'the list links the alert');
    await settled(page, `path[data-device="${bergen}"]`);
    // The SOS marker is what the pointer meets (not the outline, not a cluster); a click opens the alert.
    const { x, y, hit } = await hitAt(page, `path[data-device="${bergen}"]`);
    assert(hit.device === bergen && /state-emergency/.test(hit.cls), `at the SOS marker's centre: ${JSON.stringify(hit)}`);
    await page.mouse.click(x, y);
    await page.waitForURL(new RegExp(`/alerts/${tc}/${alertId}$`), { timeout: 3 * SECOND });

    // The alert page's map: the alert's marker and the track, on the map and above the outline.
    await page.locator('[data-testid=track-note]', { hasText: 'Track: 3 positions' }).waitFor();
    await page.locator('.leaflet-outline-pane canvas').first().waitFor({ state: 'attached' });
    await settled(page, 'path.alert-position');
    const where = await page.locator('[data-testid=alert-map]').boundingBox();
    for (const shape of ['path.alert-position', 'path.track']) {
      const b = await page.locator(shape).first().boundingBox();
      assert(b && where && b.width > 0 && b.x >= where.x - 1 && b.x + b.width <= where.x + where.width + 1, `${shape} at ${JSON.stringify(b)} is not on the map ${JSON.stringify(where)}`);
    }
    const onMarker = (await hitAt(page, 'path.alert-position')).hit;
    assert(/alert-position|track-point/.test(onMarker.cls) && /leaflet-overlay-pane/.test(onMarker.pane), `at the alert's marker: ${JSON.stringify(onMarker)}`);
    await page.context().close();
  },

  async 'duty-alert-page-offers-by-state'() {
    const { tc, user } = await ownTenant('E2E duty alert');
    await sosNotification(tc);
    const { location: bossAt } = await call('POST', `/V2/${tc}/users`, {
      Username: `boss${unique()}@e2e.example`, Password: PASSWORD, UserRoleId: 'Manager', FirstName: 'Bea', LastName: 'Boss',
    });
    const boss = bossAt.split('/').pop();
    await call('PUT', `/V2/${tc}/userprofile/${boss}`, { CellPhone: '+447700900001' });
    const workerName = `worker${unique()}@e2e.example`;
    const { location: workerAt } = await call('POST', `/V2/${tc}/users`, {
      Username: workerName, Password: PASSWORD, UserRoleId: 'User', FirstName: 'Will', LastName: 'Worker', ManagerUserId: boss,
    });
    const worker = workerAt.split('/').pop();
    await call('PUT', `/V2/${tc}/userprofile/${worker}`, {
      CellPhone: '+447700900002',
      EmergencyContactName: 'Erin First', EmergencyContactTelephoneNumber: '+447700900003', EmergencyContactAddress: 'erin@e2e.example',
      EmergencyContactName2: 'Sam Second', EmergencyContactTelephoneNumber2: '+447700900004', EmergencyContactAddress2: '1 Quay Road, Hull',
    });
    const van = await device(tc, `Scaffold crew ${unique()}`, { UserId: worker, PhoneNumber: '+881631234567' });
    const alertId = await sosAt(tc, van, 53.74, -0.33, 'Fell from the scaffold, leg hurts');

    const page = await newPage();
    await login(page, user);
    await page.goto(`${base}/alerts/${tc}/${alertId}`);
    await page.locator('[data-testid=alert-summary][data-status=Open]').waitFor();
    // What the worker sent, and where.
    await page.locator('[data-testid=message-text]', { hasText: 'Fell from the scaffold, leg hurts' }).waitFor();
    assert((await page.getByTestId('open-in-maps').getAttribute('href')).startsWith('https://www.openstreetmap.org/?mlat=53.74'), 'the maps link');
    assert((await page.locator('[data-testid=coordinates]').inputValue()) === '53.740000, -0.330000', 'the coordinates to copy');
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await page.getByTestId('copy-position').click();
    await page.locator('[data-testid=alert-where] .copied', { hasText: 'Copied' }).waitFor({ timeout: 3 * SECOND });
    const clipboard = await page.evaluate(() => navigator.clipboard.readText());
    assert(clipboard === '53.740000, -0.330000', `the clipboard holds ${clipboard}`);
    // Whom to call: every number a tel: link, every e-mail a mailto: link.
    await page.locator('[data-testid=contact-2]', { hasText: 'Sam Second' }).waitFor();
    for (const [where, href] of [['device-phone', 'tel:+881631234567'], ['user-phones', 'tel:+447700900002'], ['contact-1', 'tel:+447700900003'],
      ['contact-2', 'tel:+447700900004'], ['user-email', `mailto:${workerName}`], ['contact-1', 'mailto:erin@e2e.example']]) {
      await page.locator(`[data-testid=${where}] a[href="${href}"]`).waitFor({ timeout: 5 * SECOND });
    }
    await page.locator('[data-testid=manager] a[href="tel:+447700900001"]').waitFor();
    assert(await page.locator('[data-testid=manager]', { hasText: 'Bea Boss' }).count() === 1, 'the manager is named');
    assert(await page.locator('[data-testid=contact-2] a[href^="mailto:"]').count() === 0, 'a street address is no mailto: link');

    // Open: acknowledge, resolve, notes and log entries offered; no outcome preselected.
    for (const form of ['ack-form', 'resolve-form', 'note-form', 'log-entries']) assert(await shown(page, `[data-testid=${form}]`), `${form} is offered while Open`);
    assert((await page.getByLabel('Outcome').inputValue()) === '', 'an outcome is preselected');
    // Resolving without an outcome is refused by the form: nothing is sent.
    await page.getByRole('button', { name: 'Resolve' }).click();
    await page.waitForTimeout(300);
    assert(await page.getByLabel('Outcome').evaluate((s) => !s.checkValidity()), 'the outcome is not required');
    assert((await call('GET', `/V2/${tc}/alerts/${alertId}`)).json.Status === 'Open', 'resolved without an outcome');

    // A one-click log entry is a note on the timeline.
    await page.getByRole('button', { name: 'Called worker: no answer' }).click();
    await page.locator('[data-testid=timeline] li[data-kind=Note]', { hasText: 'Called worker: no answer' }).waitFor({ timeout: 3 * SECOND });
    const { json: steps } = await call('GET', `/V2/${tc}/alerts/${alertId}/timeline`);
    assert(steps.some((e) => e.Kind === 'Note' && e.Text === 'Called worker: no answer' && e.By === user.username), JSON.stringify(steps));

    // Acknowledged: only note and resolve are offered (the form really is not displayed).
    await page.getByRole('button', { name: 'Acknowledge' }).click();
    await page.locator('[data-testid=alert-summary][data-status=Acknowledged]').waitFor({ timeout: 3 * SECOND });
    assert(!(await shown(page, '[data-testid=ack-form]')), 'acknowledge is still displayed once acknowledged');
    const display = await page.locator('[data-testid=ack-form]').evaluate((f) => getComputedStyle(f).display);
    assert(display === 'none', `the acknowledge form's display is ${display}`);
    for (const form of ['resolve-form', 'note-form']) assert(await shown(page, `[data-testid=${form}]`), `${form} is offered once acknowledged`);

    // Resolve with an outcome chosen: then only a note.
    await page.getByLabel('Outcome').selectOption('Genuine');
    await page.getByRole('button', { name: 'Resolve' }).click();
    await page.locator('[data-testid=alert-summary][data-status=Resolved]').waitFor({ timeout: 3 * SECOND });
    for (const form of ['ack-form', 'resolve-form']) assert(!(await shown(page, `[data-testid=${form}]`)), `${form} is offered once resolved`);
    assert(await shown(page, '[data-testid=note-form]'), 'a note is offered once resolved');
    assert((await call('GET', `/V2/${tc}/alerts/${alertId}`)).json.Outcome === 'Genuine', 'the outcome chosen');
    await page.context().close();
  },

  async 'duty-second-acknowledge-is-yours'() {
    const { tc, user } = await ownTenant('E2E duty conflict');
    await sosNotification(tc);
    const van = await device(tc, `Conflict crew ${unique()}`);
    const alertId = await sosAt(tc, van, 51.5, -0.12, 'Help');
    const page = await newPage();
    await login(page, user);
    // This page hears nothing live (the stream refused): it still shows the alert Open
    // after the same operator acknowledged it elsewhere (another tab, a double click).
    await page.route('**/stream**', (route) => route.abort());
    await page.goto(`${base}/alerts/${tc}/${alertId}`);
    await page.locator('[data-testid=alert-summary][data-status=Open]').waitFor();
    await call('POST', `/V2/${tc}/alerts/${alertId}/acknowledge`, {}, user);
    await page.getByRole('button', { name: 'Acknowledge' }).click();
    const result = page.locator('[data-testid=action-result][data-conflict=mine]');
    await result.waitFor({ timeout: 3 * SECOND });
    const said = await result.innerText();
    assert(/^Already acknowledged by you at /.test(said), `the second acknowledge said: ${said}`);
    assert(!/someone else/i.test(said), said);
    await page.locator('[data-testid=alert-summary][data-status=Acknowledged]').waitFor();
    await page.context().close();
  },

  async 'duty-repeat-matches-one-timeline-line'() {
    // An inReach in SOS mode reports again and again: the alert page's timeline shows one
    // collapsed "Matched again ×N" line, not a line (and deliveries) per report.
    const { tc, user } = await ownTenant('E2E duty flood');
    await sosNotification(tc);
    const van = await device(tc, `Flood crew ${unique()}`);
    const alertId = await sosAt(tc, van, 51.5, -0.12, 'Fallen, leg hurt');
    for (let i = 0; i < 20; i += 1) await report(tc, van, 51.5 + i / 10000, -0.12, { MessageType: 'FreeText', EmergencyState: 'Active' });
    const page = await newPage();
    await login(page, user);
    await page.goto(`${base}/alerts/${tc}/${alertId}`);
    const matched = page.locator('[data-testid=timeline] li[data-kind=Matched]');
    await matched.first().waitFor();
    const lines = await matched.count();
    assert(lines === 1, `one Matched line after 20 repeat matches, not ${lines}`);
    const said = await matched.first().innerText();
    assert(said.includes('×20'), `the Matched line counts the repeats: ${said}`);
    const all = await page.locator('[data-testid=timeline] li').count();
    assert(all <= 3, `the timeline stays short (raise, matched, deliveries): ${all} lines`);
    await page.context().close();
  },

  async 'duty-late-sos-says-how-late'() {
    const { tc, user } = await ownTenant('E2E duty late');
    await sosNotification(tc);
    const van = await device(tc, `Late SOS crew ${unique()}`);
    await report(tc, van, 51.5, -0.12);
    // Sent 40 minutes ago, received now, after a newer position: a late SOS.
    await report(tc, van, 51.49, -0.13, { MessageType: 'FreeText', EmergencyState: 'Active', Message: 'Stuck in the lift' }, minutesAgo(40));
    const { json } = await call('GET', `/V2/${tc}/alerts?deviceId=${van}&status=Open`);
    assert(json.length === 1 && json[0].Late === true, `one late alert: ${JSON.stringify(json)}`);
    const page = await newPage();
    await login(page, user);
    await page.goto(`${base}/alerts/${tc}/${json[0].AlertId}`);
    await page.locator('[data-testid=alert-summary][data-late=true]').waitFor();
    const late = page.locator('[data-testid=late]');
    await late.waitFor();
    const said = await late.innerText();
    assert(/^Late: received 40 min after it was sent$/.test(said), `the late alert says: ${said}`);
    await page.locator('[data-testid=message-text]', { hasText: 'Stuck in the lift' }).waitFor();
    await page.context().close();
  },

  async 'duty-queue-open-first-and-phone-cards'() {
    const { tc, user } = await ownTenant('E2E duty queue');
    await sosNotification(tc);
    const first = await device(tc, `Early crew ${unique()}`);
    const acked = await sosAt(tc, first, 51.5, -0.12, 'Early SOS');
    await call('POST', `/V2/${tc}/alerts/${acked}/acknowledge`, {});
    const page = await newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await login(page, user);
    await page.locator(`tr[data-alert-id="${acked}"][data-status=Acknowledged]`).waitFor();
    // A new SOS arrives live: it goes above the older, acknowledged one. Its text is
    // long and unbroken (the card must still fit the phone).
    const second = await device(tc, `Late crew ${unique()}`);
    const open = await sosAt(tc, second, 52.0, 0.1, `SOS${'x'.repeat(150)}`);
    await page.locator(`tr[data-alert-id="${open}"][data-status=Open]`).waitFor({ timeout: 3 * SECOND });
    const order = await page.locator('table.queue tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-alert-id')));
    assert(JSON.stringify(order) === JSON.stringify([open, acked]), `queue order ${JSON.stringify(order)}`);
    // Cards at phone width: labelled cells, no horizontal scroll, no "Escalation 0".
    await fitsWidth(page, 'the queue at phone width');
    const row = page.locator(`tr[data-alert-id="${open}"]`);
    const labels = await row.locator('td[data-col=message]').evaluate((td) => getComputedStyle(td, '::before').content);
    assert(/Message/.test(labels), `the message cell is not labelled: ${labels}`);
    assert((await row.locator('td[data-col=escalation]').innerText()) === '', 'escalation 0 is shown');
    assert(!(await shown(page, `tr[data-alert-id="${open}"] td[data-col=escalation]`)), 'an empty escalation cell takes room');
    assert((await row.locator('td[data-col=message]').innerText()).includes('SOSxxx'), 'the message text is in the queue');
    // Newest first is a choice kept across a reload.
    await page.getByLabel('Newest first').check();
    await page.reload();
    await page.locator(`tr[data-alert-id="${open}"]`).waitFor();
    assert(await page.getByLabel('Newest first').isChecked(), 'the newest-first choice was not kept');
    await page.getByLabel('Newest first').uncheck();
    await page.context().close();
  },
};

// User and device text is only ever text (issue 42): every record a person or a device
// names is created through the API with markup in its name, every screen is visited (the
// map's tooltips opened), and no element made from that markup may exist — while the
// markup itself must be readable on the page as text. And the map's panes (issue 42, 43):
// the world outline lies under the markers, tracks and geofences, so a real mouse reaches
// a marker on the map, the alert page and the replay.
import { assert, base, call, login, newPage, SECOND, tenant, unique } from '../lib.mjs';

const PASSWORD = 'a-long-e2e-password';

/** Markup that would make elements (and set window.__xss) if it were ever written as HTML
 * (two kinds, taking turns; names are at most 100 characters). */
let kind = 0;
const hostile = (what) =>
  ++kind % 2
    ? `<b id=pwn>${what}</b><img src=x onerror=window.__xss=1>`
    : `<iframe srcdoc="<b id=pwn>x</b>"></iframe><b class=pwn>${what}</b>`;

const deviceId = () => `30023403${String(unique()).padStart(7, '0')}`;

async function at(tc, id, lat, lon, extra = {}, sent = new Date()) {
  await call('POST', `/V2/${tc}/devices/${id}/momessages?process=true`, [
    { MessageType: 'Position', SequenceNumber: unique(), SentFromDevice: sent.toISOString(), Position: { Latitude: lat, Longitude: lon }, ...extra },
  ]);
}

/** No element made from the markup, no script run from it; `texts` readable on the page. */
async function onlyText(page, where, texts = []) {
  const seen = await page.evaluate((texts) => ({
    made: [...document.querySelectorAll('#pwn, .pwn, img[src="x"], iframe, [onerror], [srcdoc]')].map((e) => e.outerHTML.slice(0, 120)),
    xss: typeof window.__xss,
    // Shown: in the page's rendered text, or as an option of a list.
    missing: texts.filter((t) => !document.body.innerText.includes(t) && ![...document.querySelectorAll('option')].some((o) => o.text.includes(t))),
  }), texts);
  assert(seen.made.length === 0, `${where}: elements made from a name: ${seen.made.join(' | ')}`);
  assert(seen.xss === 'undefined', `${where}: the markup ran`);
  assert(seen.missing.length === 0, `${where}: not shown as text: ${seen.missing.join(' | ')}`);
}

/** Waits until `texts` are all readable on the page (then checks it). */
async function shows(page, where, texts) {
  await page.waitForFunction((texts) => texts.every((t) => document.body.innerText.includes(t) ||
    [...document.querySelectorAll('option')].some((o) => o.text.includes(t))), texts, { timeout: 10 * SECOND })
    .catch(() => undefined);
  await onlyText(page, where, texts);
}

/** Opens the tooltip of the shape `selector` (a hover, dispatched on it whatever lies above). */
async function tooltipOf(page, selector, text, where) {
  const shape = page.locator(selector).first();
  await shape.waitFor({ state: 'attached' });
  const box = await shape.boundingBox();
  const init = box ? { clientX: box.x + box.width / 2, clientY: box.y + box.height / 2 } : {};
  await shape.dispatchEvent('mouseover', init);
  await shape.dispatchEvent('mousemove', init);
  await page.locator('.leaflet-tooltip', { hasText: text }).first().waitFor({ state: 'attached', timeout: 5 * SECOND })
    .catch(() => undefined);
  await onlyText(page, `${where} (tooltip)`, [text]);
  await shape.dispatchEvent('mouseout', init);
}

/** The element a real pointer meets at the centre of `selector`'s shape. */
async function under(page, selector) {
  const shape = page.locator(selector).first();
  await shape.waitFor({ state: 'attached' });
  await shape.scrollIntoViewIfNeeded();
  const box = await shape.boundingBox();
  assert(box, `${selector} has no box`);
  const x = box.x + box.width / 2;
  const y = box.y + box.height / 2;
  const hit = await page.evaluate(([x, y]) => {
    const el = document.elementFromPoint(x, y);
    const pane = el?.closest('.leaflet-pane:not(.leaflet-map-pane)');
    return { tag: el?.tagName.toLowerCase() ?? 'nothing', cls: el?.getAttribute('class') ?? '', device: el?.getAttribute('data-device') ?? '', pane: pane?.className ?? '' };
  }, [x, y]);
  return { x, y, hit };
}

/** The world outline is drawn (its canvas on the map). */
async function outlineDrawn(page) {
  await page.locator('.leaflet-outline-pane canvas').first().waitFor({ state: 'attached', timeout: 10 * SECOND });
}

export const scenarios = {
  async 'hostile-names-render-as-text'() {
    const H = {};
    for (const what of ['tenant', 'subtenant', 'manager', 'worker', 'emergency contact', 'emergency info', 'group', 'device', 'ordinary device',
      'child device', 'geofence', 'other geofence', 'notification', 'contact', 'list', 'token', 'sos text', 'mt text', 'note', 'session note']) {
      H[what] = hostile(`${what.slice(0, 12)} ${unique()}`);
    }
    const tc = await tenant('1000', H.tenant);
    const child = await tenant(tc, H.subtenant);
    const manager = { username: `hostile${unique()}@e2e.example`, password: PASSWORD };
    await call('POST', `/V2/${tc}/users`, {
      Username: manager.username, Password: PASSWORD, UserRoleId: 'Manager', IsPortalEnabled: true, FirstName: H.manager, LastName: 'Smith',
    });
    const workerName = `worker${unique()}@e2e.example`;
    const { location: workerAt } = await call('POST', `/V2/${tc}/users`, {
      Username: workerName, Password: PASSWORD, UserRoleId: 'User', IsPortalEnabled: false, FirstName: H.worker,
    });
    const worker = workerAt.split('/').pop();
    await call('PUT', `/V2/${tc}/userprofile/${worker}`, { EmergencyContactName: H['emergency contact'], EmergencyInformation: H['emergency info'] });
    const { location: groupAt } = await call('POST', `/V2/${tc}/groups`, { Name: H.group });
    const group = groupAt.split('/').pop();
    const { location: contactAt } = await call('POST', `/V2/${tc}/addressbookcontacts`, {
      ContactName: H.contact, ContactEntries: [{ Address: 'mail:duty@e2e.example' }],
    });
    const contact = contactAt.split('/').pop();
    await call('POST', `/V2/${tc}/addressbookdistributionlists`, { ListName: H.list, Recipients: [{ Type: 'TenantContact', ContactId: contact }] });
    await call('POST', `/V2/${tc}/eventnotifications`, {
      NotificationName: H.notification, EventsExpression: 'Emergency', Severity: '2', RaiseAlert: true,
      Recipients: [{ Type: 'TenantContact', ContactId: contact }],
    });
    await call('POST', `/V2/${tc}/apitokens`, { Name: H.token, Permissions: ['Read'] });
    await call('POST', `/V2/${tc}/geofences`, { Name: H.geofence, GeofenceType: 'circle', CircleCentre: { Lat: 45.0, Lon: 6.0 }, CircleRadius: 20000 });
    await call('POST', `/V2/${tc}/geofences`, {
      Name: H['other geofence'], GeofenceType: 'polygon',
      PolygonPositions: [[{ Lat: 40.0, Lon: -4.0 }, { Lat: 40.5, Lon: -4.0 }, { Lat: 40.5, Lon: -3.5 }]],
    });
    const sosDevice = deviceId();
    await call('POST', `/V2/${tc}/devices`, { DeviceId: sosDevice, DeviceType: 'InReach', FriendlyName: H.device, GroupId: group, UserId: worker });
    const ordinary = deviceId();
    await call('POST', `/V2/${tc}/devices`, { DeviceId: ordinary, DeviceType: 'InReach', FriendlyName: H['ordinary device'] });
    const childDevice = deviceId();
    await call('POST', `/V2/${child}/devices`, { DeviceId: childDevice, DeviceType: 'InReach', FriendlyName: H['child device'] });
    const minutesAgo = (m) => new Date(Date.now() - m * 60 * SECOND);
    await at(tc, sosDevice, 46.0, 7.0, {}, minutesAgo(20));
    await at(tc, sosDevice, 46.01, 7.01, {}, minutesAgo(10));
    await at(tc, ordinary, 52.0, 13.0);
    await at(child, childDevice, -33.9, 18.4);
    await call('POST', `/V2/${tc}/devices/${sosDevice}/mtmessages`, { Type: 'Text', Message: H['mt text'] });
    // The worker is working alone: the session's note ("where / what") is their text too.
    await call('POST', `/V2/${tc}/devices/${sosDevice}/monitoring`, { DurationMinutes: 60, CheckInIntervalMinutes: 30, Note: H['session note'] });

    const page = await newPage();
    page.on('dialog', (d) => void d.dismiss());
    await login(page, manager);
    // The queue, as the SOS arrives live (its announcement names the device).
    await at(tc, sosDevice, 46.02, 7.02, { MessageType: 'FreeText', EmergencyState: 'Active', Message: H['sos text'] });
    const row = page.locator(`tr[data-device="${sosDevice}"]`);
    await row.waitFor({ timeout: 15 * SECOND });
    await shows(page, 'the queue', [H.device, H.notification]);
    const { json: open } = await call('GET', `/V2/${tc}/alerts?status=Open`);
    const alertId = open[0].AlertId;
    await call('POST', `/V2/${tc}/alerts/${alertId}/notes`, { Text: H.note });

    // The alert page: summary, people, timeline, the map and its tooltip.
    await row.getByRole('link').click();
    await page.locator('[data-testid=alert-summary][data-status=Open]').waitFor();
    await shows(page, 'the alert page', [H.notification, H.device, H.worker, H['emergency contact'], H['emergency info'], H.note, H['session note']]);
    await tooltipOf(page, 'path.alert-position', 'Alert position', 'the alert page');

    // The map: each marker's tooltip, the geofences' tooltips, the cluster icons.
    await page.getByRole('link', { name: 'Map' }).click();
    await page.locator('[data-testid=device-map][data-devices="3"][data-ready=true][data-geofences="2"]').waitFor();
    await onlyText(page, 'the map');
    await tooltipOf(page, `path[data-device="${ordinary}"]`, H['ordinary device'], 'the map, an ordinary device');
    await tooltipOf(page, `path[data-device="${sosDevice}"]`, H.device, 'the map, a device in emergency');
    await tooltipOf(page, `path[data-device="${childDevice}"]`, H['child device'], 'the map, a subtenant\'s device');
    await tooltipOf(page, 'path.geofence', H.geofence, 'the map, a geofence');
    // Zoomed out, the devices gather in clusters (their icons are elements too).
    await page.locator('.leaflet-control-zoom-out').click();
    await page.waitForTimeout(500);
    await onlyText(page, 'the map zoomed out');
    // Left while a zoom still animates: nothing may throw (Leaflet ends a zoom on a timer
    // that reads the panes a removed map no longer has).
    await page.locator('.leaflet-control-zoom-in').click();

    // The Working alone board: the person, the device, the session's note.
    await page.getByRole('link', { name: 'Working alone' }).click();
    await page.locator(`tr[data-session="${tc}/${sosDevice}"]`).waitFor();
    await shows(page, 'the Working alone board', [H.device, H.worker, H['session note']]);

    // The device list, a device's page (messages, MT messages) and its replay.
    await page.getByRole('link', { name: 'Devices' }).click();
    await page.locator(`table.devices tbody tr`).nth(2).waitFor();
    await shows(page, 'the device list', [H.device, H['ordinary device'], H['child device'], H.group]);
    await page.goto(`${base}/devices/${tc}/${sosDevice}`);
    await page.locator('[data-testid=device-messages] tbody tr').nth(2).waitFor();
    await shows(page, 'the device page', [H.device, H['sos text'], H['mt text']]);
    await page.getByRole('button', { name: 'Show the track' }).click();
    await page.locator('[data-testid=replay-message]', { hasText: 'positions' }).waitFor();
    await onlyText(page, 'the replay', [H.device]);

    // The configuration screens: geofences (another's tooltip while one is edited),
    // notifications, the address book.
    await page.goto(`${base}/config/geofences`);
    await page.locator('[data-testid=geofence-list] tbody tr').nth(1).waitFor();
    await shows(page, 'the geofences page', [H.geofence, H['other geofence']]);
    await page.getByRole('button', { name: `Edit ${H.geofence}` }).click();
    await shows(page, 'the geofence editor', [`Editing ${H.geofence}`]);
    await page.goto(`${base}/config/notifications`);
    await page.locator('[data-testid=notification-list] tbody tr').first().waitFor();
    await shows(page, 'the notifications page', [H.notification]);
    await page.getByRole('button', { name: `Edit ${H.notification}` }).click();
    await shows(page, 'the notification editor', [H.contact]);
    await page.goto(`${base}/config/addressbook`);
    await page.locator('[data-testid=contact-list] tbody tr').first().waitFor();
    await shows(page, 'the address book', [H.contact, H.list]);

    // The admin screens: reports (devices and groups offered by name), users, tokens,
    // webhooks, deliveries; the tenant switcher (names of the tenant and its subtenant).
    await page.goto(`${base}/reports`);
    await page.getByRole('button', { name: 'Show' }).click();
    await page.locator('[data-testid=report-table], [data-testid=report-empty]').first().waitFor();
    await shows(page, 'the reports page', [H.device, H.group]);
    await page.goto(`${base}/users`);
    await page.locator(`tr[data-user="${manager.username}"]`).waitFor();
    await shows(page, 'the users page', [H.manager, H.worker]);
    await page.goto(`${base}/tokens`);
    await page.locator('[data-testid=tokens] tbody tr').first().waitFor();
    await shows(page, 'the API tokens page', [H.token]);
    await page.goto(`${base}/webhooks`);
    await page.locator('main h1').waitFor();
    await onlyText(page, 'the webhooks page');
    await page.goto(`${base}/deliveries`);
    await page.locator('[data-testid=deliveries] tbody tr, tr[data-delivery]').first().waitFor();
    await onlyText(page, 'the deliveries page');
    await page.locator('[data-testid=tenant-switcher] option').nth(1).waitFor({ state: 'attached' });
    await shows(page, 'the tenant switcher', [H.tenant, H.subtenant]);
    await page.context().close();
  },

  async 'map-markers-above-the-outline'() {
    const tc = await tenant('1000', 'E2E panes');
    const manager = { username: `panes${unique()}@e2e.example`, password: PASSWORD };
    await call('POST', `/V2/${tc}/users`, { Username: manager.username, Password: PASSWORD, UserRoleId: 'Manager', IsPortalEnabled: true });
    await call('POST', `/V2/${tc}/eventnotifications`, {
      NotificationName: 'SOS', EventsExpression: 'Emergency', Severity: '2', RaiseAlert: true, Recipients: [],
    });
    const ordinary = deviceId();
    await call('POST', `/V2/${tc}/devices`, { DeviceId: ordinary, DeviceType: 'InReach', FriendlyName: 'Ordinary van' });
    await at(tc, ordinary, 48.0, 2.0);
    const urgent = deviceId();
    await call('POST', `/V2/${tc}/devices`, { DeviceId: urgent, DeviceType: 'InReach', FriendlyName: 'Urgent van' });
    const minutesAgo = (m) => new Date(Date.now() - m * 60 * SECOND);
    await at(tc, urgent, 40.0, -3.7, {}, minutesAgo(30));
    await at(tc, urgent, 40.03, -3.67, {}, minutesAgo(20));
    await at(tc, urgent, 40.06, -3.64, { MessageType: 'FreeText', EmergencyState: 'Active' });

    const page = await newPage();
    await login(page, manager);
    await page.getByRole('link', { name: 'Map' }).click();
    await page.locator('[data-testid=device-map][data-devices="2"][data-ready=true]').waitFor();
    await outlineDrawn(page);
    // The panes in order: outline < overlay (markers, tracks, geofences) < clusters < emergencies < tooltips.
    const z = await page.evaluate(() => Object.fromEntries(['outline', 'overlay', 'marker', 'urgent', 'tooltip'].map((p) =>
      [p, Number(getComputedStyle(document.querySelector(`.leaflet-${p}-pane`)).zIndex)])));
    assert(z.outline < z.overlay && z.overlay < z.marker && z.marker < z.urgent && z.urgent < z.tooltip, `pane z-indexes: ${JSON.stringify(z)}`);
    // A real pointer at the ordinary device's marker meets the marker, not the outline:
    // hovering opens its tooltip, clicking opens the device.
    const { x, y, hit } = await under(page, `path[data-device="${ordinary}"]`);
    assert(hit.device === ordinary, `at the marker's centre: ${JSON.stringify(hit)}`);
    await page.mouse.move(x, y);
    await page.locator('.leaflet-tooltip', { hasText: 'Ordinary van' }).waitFor({ timeout: 3 * SECOND });
    await page.mouse.click(x, y);
    await page.waitForURL(new RegExp(`/devices/${tc}/${ordinary}$`), { timeout: 3 * SECOND });
    await page.getByRole('heading', { name: 'Ordinary van' }).waitFor();

    // The alert page's map: the alert's marker and its track above the outline.
    const { json: open } = await call('GET', `/V2/${tc}/alerts?status=Open`);
    await page.goto(`${base}/alerts/${tc}/${open[0].AlertId}`);
    await page.locator('[data-testid=track-note]', { hasText: 'Track: 3 positions' }).waitFor();
    await outlineDrawn(page);
    // (The track's last point lies on the alert's position, drawn over it.)
    const alertHit = (await under(page, 'path.alert-position')).hit;
    assert(/alert-position|track-point/.test(alertHit.cls) && /leaflet-overlay-pane/.test(alertHit.pane), `at the alert's marker: ${JSON.stringify(alertHit)}`);
    const dot = (await under(page, 'path.track-point')).hit;
    assert(/leaflet-overlay-pane/.test(dot.pane), `at a track point: ${JSON.stringify(dot)}`);

    // The replay: its marker above the outline.
    await page.goto(`${base}/devices/${tc}/${urgent}`);
    await page.getByRole('button', { name: 'Show the track' }).click();
    await page.locator('[data-testid=replay-message]', { hasText: '3 positions' }).waitFor();
    await outlineDrawn(page);
    const replayHit = (await under(page, 'path.replay-position')).hit;
    assert(/replay-position/.test(replayHit.cls), `at the replay's marker: ${JSON.stringify(replayHit)}`);
    await page.context().close();
  },
};

// The map scenarios: devices set up through the API on the map, a posted position moving
// its marker, geofences drawn and hidden, axe; the alert actions with the keyboard only;
// the shell, queue, alert page and map at phone width.
import { assert, axe, call, login, newPage, SECOND, sos, sosNotification, tenant, unique } from '../lib.mjs';

/** A tenant of its own with a Manager who sees only it (other scenarios' devices stay off its map). */
async function ownTenant(description) {
  const tc = await tenant('1000', description);
  const user = { username: `map${unique()}@e2e.example`, password: 'a-long-e2e-password' };
  await call('POST', `/V2/${tc}/users`, { Username: user.username, Password: user.password, UserRoleId: 'Manager', IsPortalEnabled: true });
  return { tc, user };
}

async function deviceAt(tc, name, lat, lon, extra = {}) {
  const id = `30023402${String(unique()).padStart(7, '0')}`;
  await call('POST', `/V2/${tc}/devices`, { DeviceId: id, DeviceType: 'InReach', FriendlyName: name });
  await position(tc, id, lat, lon, extra);
  return id;
}

async function position(tc, id, lat, lon, extra = {}) {
  await call('POST', `/V2/${tc}/devices/${id}/momessages`, [
    { MessageType: 'Position', SequenceNumber: unique(), SentFromDevice: new Date().toISOString(), Position: { Latitude: lat, Longitude: lon }, ...extra },
  ]);
}

/** Presses Tab until `selector` has the focus (a keyboard user's way there). */
async function tabTo(page, selector, most = 60) {
  for (let i = 0; i < most; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
  }
  throw new Error(`${selector} never took the focus within ${most} tabs`);
}

async function fitsWidth(page, what) {
  const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
  assert(scroll <= width + 1, `${what} is ${scroll} px wide at a ${width} px viewport`);
}

export const scenarios = {
  async 'map-devices-live'() {
    const { tc, user } = await ownTenant('E2E map');
    const nairobi = await deviceAt(tc, `Nairobi van ${unique()}`, -1.29, 36.82);
    await deviceAt(tc, `Lima van ${unique()}`, -12.05, -77.04);
    const oslo = await deviceAt(tc, `Oslo van ${unique()}`, 59.91, 10.75, { EmergencyState: 'Active', MessageType: 'FreeText' });
    await call('POST', `/V2/${tc}/geofences`, { Name: 'Depot', GeofenceType: 'circle', CircleCentre: { Lat: -1.3, Lon: 36.8 }, CircleRadius: 50000 });
    await call('POST', `/V2/${tc}/geofences`, {
      Name: 'Yard', GeofenceType: 'polygon',
      PolygonPositions: [[{ Lat: 59.9, Lon: 10.7 }, { Lat: 59.95, Lon: 10.7 }, { Lat: 59.95, Lon: 10.8 }]],
    });

    const page = await newPage();
    await login(page, user);
    await page.getByRole('link', { name: 'Map' }).click();
    const map = page.locator('[data-testid=device-map][data-devices="3"][data-ready=true]');
    await map.waitFor();
    // Each device at its place, named and coloured by its state.
    await page.locator(`path[data-device="${nairobi}"][aria-label*="Reporting"]`).waitFor();
    await page.locator(`path[data-device="${oslo}"].state-emergency[aria-label*="Emergency"]`).waitFor();
    await page.locator('[data-testid=map-count]', { hasText: '3 devices on the map' }).waitFor();
    // Geofences drawn, and hidden by their toggle.
    await page.locator('[data-testid=device-map][data-geofences="2"]').waitFor();
    await page.locator('path.geofence[aria-label="Geofence Depot"]').waitFor({ state: 'attached' });
    await page.locator('path.geofence[aria-label="Geofence Yard"]').waitFor({ state: 'attached' });
    await page.getByLabel('Show geofences').uncheck();
    await page.locator('path.geofence').first().waitFor({ state: 'detached' });
    await page.getByLabel('Show geofences').check();
    await page.locator('path.geofence[aria-label="Geofence Depot"]').waitFor({ state: 'attached' });
    await axe(page, 'the map');

    // A position posted through the API moves the marker (Nairobi → Tokyo).
    const before = await page.locator(`path[data-device="${nairobi}"]`).getAttribute('d');
    await position(tc, nairobi, 35.68, 139.69);
    const moved = page.locator(`path[data-device="${nairobi}"][aria-label*="139.69"]`);
    await moved.waitFor({ timeout: 2 * SECOND });
    assert((await moved.getAttribute('d')) !== before, 'the marker was not redrawn at its new place');
    // A device created meanwhile appears too.
    await deviceAt(tc, `Perth van ${unique()}`, -31.95, 115.86);
    await page.locator('[data-testid=device-map][data-devices="4"]').waitFor({ timeout: 2 * SECOND });
    await page.context().close();
  },

  async 'alert-actions-keyboard-only'() {
    const { tc, user } = await ownTenant('E2E keyboard');
    await sosNotification(tc);
    const device = await deviceAt(tc, `Keyboard van ${unique()}`, 51.49, -0.14);
    await position(tc, device, 51.495, -0.13);
    await sos(tc, device);
    const { json: open } = await call('GET', `/V2/${tc}/alerts?status=Open`);
    const id = open[0].AlertId;

    const page = await newPage();
    await login(page, user);
    // From the queue to the alert, and its actions, without the mouse.
    await page.locator(`tr[data-alert-id="${id}"]`).waitFor();
    await tabTo(page, `tr[data-alert-id="${id}"] a`);
    await page.keyboard.press('Enter');
    await page.locator('[data-testid=alert-summary][data-status=Open]').waitFor();
    // The track around the alert: the device's three positions.
    await page.locator('[data-testid=track-note]', { hasText: 'Track: 3 positions' }).waitFor();
    await tabTo(page, '#ack-note');
    await page.keyboard.type('On my way (keyboard)');
    await page.keyboard.press('Tab');
    assert(await page.evaluate(() => document.activeElement?.textContent === 'Acknowledge'), 'Tab after the note reaches Acknowledge');
    await page.keyboard.press('Enter');
    await page.locator('[data-testid=alert-summary][data-status=Acknowledged]').waitFor({ timeout: 2 * SECOND });
    await page.locator('[data-testid=timeline] li[data-kind=Acknowledged]', { hasText: 'On my way (keyboard)' }).waitFor();
    await tabTo(page, '#outcome');
    // No outcome is preselected: the first is the prompt, then Genuine, then False alarm.
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await tabTo(page, '#resolution');
    await page.keyboard.type('Pressed by mistake');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.locator('[data-testid=alert-summary][data-status=Resolved]').waitFor({ timeout: 2 * SECOND });
    const { json: resolved } = await call('GET', `/V2/${tc}/alerts/${id}`);
    assert(resolved.AcknowledgedBy === user.username, JSON.stringify(resolved));
    assert(resolved.Outcome === 'FalseAlarm' && resolved.Resolution === 'Pressed by mistake', JSON.stringify(resolved));
    await page.context().close();
  },

  async 'phone-width'() {
    const { tc, user } = await ownTenant('E2E phone');
    await sosNotification(tc);
    const device = await deviceAt(tc, `Phone van ${unique()}`, 48.85, 2.35);
    await sos(tc, device);
    const page = await newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await login(page, user);
    const row = page.locator(`tr[data-device="${device}"]`);
    await row.waitFor();
    await fitsWidth(page, 'the queue');
    await row.getByRole('link').click();
    await page.locator('[data-testid=alert-summary][data-status=Open]').waitFor();
    await page.getByRole('button', { name: 'Acknowledge' }).waitFor();
    await fitsWidth(page, 'the alert page');
    await axe(page, 'the alert page at phone width');
    await page.getByRole('link', { name: 'Map' }).click();
    await page.locator('[data-testid=device-map][data-devices="1"]').waitFor();
    await fitsWidth(page, 'the map');
    const box = await page.locator('[data-testid=device-map]').boundingBox();
    assert(box && box.width >= 300 && box.height >= 200, `the map is ${JSON.stringify(box)}`);
    await page.context().close();
  },
};



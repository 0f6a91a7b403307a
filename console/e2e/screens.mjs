// Every screen of the console over a realistic scene, shared by scripts/screenshots.mjs
// (PNGs of each screen at two widths in two themes) and scenarios/design.mjs (axe, the
// phone's width and touch targets on each). The scene is set through the public API only:
// an operations tenant with two subtenants, ten devices with tracks, an open SOS with its
// message, an acknowledged alert, a silent device, users with emergency contacts,
// geofences, a notification, the address book, a token and a webhook, three people working
// alone.
import { base, call, origin, SECOND, serveDist, tenant, unique } from './lib.mjs';

export const PASSWORD = 'a-long-operator-password';
export const WIDTHS = [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
];
export const THEMES = ['light', 'dark'];

const minutesAgo = (m) => new Date(Date.now() - m * 60 * SECOND).toISOString();
const idOf = (location) => location.split('/').pop();

async function report(tc, id, lat, lon, sent, extra = {}) {
  await call('POST', `/V2/${tc}/devices/${id}/momessages?process=true`, [
    { MessageType: 'Position', SequenceNumber: unique(), SentFromDevice: sent, Position: { Latitude: lat, Longitude: lon }, ...extra },
  ]);
}

/** A track of `n` positions ending `endMinutesAgo` ago, heading from (lat, lon) by (dLat, dLon) a step. */
async function track(tc, id, lat, lon, dLat, dLon, n, endMinutesAgo, every = 10) {
  const messages = [];
  for (let i = 0; i < n; i++) {
    messages.push({
      MessageType: 'Position', SequenceNumber: unique(), SentFromDevice: minutesAgo(endMinutesAgo + (n - 1 - i) * every),
      Position: { Latitude: lat + dLat * i, Longitude: lon + dLon * i, Speed: 12 + i, Course: 40 }, Battery: 90 - i * 3,
    });
  }
  await call('POST', `/V2/${tc}/devices/${id}/momessages?process=true`, messages);
}

async function user(tc, first, last, role, extra = {}) {
  const username = `${first}.${last}.${unique()}@northsea.example`.toLowerCase();
  const { location } = await call('POST', `/V2/${tc}/users`, {
    Username: username, Password: PASSWORD, UserRoleId: role, IsPortalEnabled: role !== 'User', FirstName: first, LastName: last, ...extra,
  });
  return { username, password: PASSWORD, id: idOf(location) };
}

async function device(tc, name, extra = {}) {
  const id = `30023405${String(unique()).padStart(7, '0')}`;
  await call('POST', `/V2/${tc}/devices`, { DeviceId: id, DeviceType: 'InReach', FriendlyName: name, ...extra });
  return id;
}

/** Sets the scene; answers the operator (a Manager of the operations tenant) and where things are. */
export async function seedScene() {
  const ops = await tenant('1000', 'North Sea Operations');
  const aberdeen = await tenant(ops, 'Aberdeen depot');
  const shetland = await tenant(ops, 'Shetland crews');
  const operator = await user(ops, 'Nina', 'Night', 'Manager');
  const lead = await user(ops, 'Bea', 'Boss', 'Manager');
  await call('PUT', `/V2/${ops}/userprofile/${lead.id}`, { CellPhone: '+447700900001' });
  const worker = await user(aberdeen, 'Will', 'Worker', 'User', { ManagerUserId: lead.id });
  await call('PUT', `/V2/${aberdeen}/userprofile/${worker.id}`, {
    CellPhone: '+447700900002',
    EmergencyContactName: 'Erin Worker', EmergencyContactTelephoneNumber: '+447700900003', EmergencyContactAddress: 'erin@family.example',
    EmergencyContactName2: 'Sam Neighbour', EmergencyContactTelephoneNumber2: '+447700900004', EmergencyContactAddress2: '1 Quay Road, Aberdeen',
    EmergencyInformation: 'Diabetic (insulin in the van glovebox). Works alone on the rigs at weekends.',
  });
  const rigger = await user(shetland, 'Rory', 'Rigger', 'User');
  await call('PUT', `/V2/${shetland}/userprofile/${rigger.id}`, {
    EmergencyContactName: 'Mhairi Rigger', EmergencyContactTelephoneNumber: '+447700900005',
  });
  await user(ops, 'Olive', 'Observer', 'ReadOnly');

  const { location: contactAt } = await call('POST', `/V2/${ops}/addressbookcontacts`, {
    ContactName: 'Duty desk', ContactEntries: [{ Address: 'mail:duty@northsea.example' }, { Address: 'sms:+447700900010' }],
  });
  const contact = idOf(contactAt);
  await call('POST', `/V2/${ops}/addressbookcontacts`, { ContactName: 'Coastguard liaison', ContactEntries: [{ Address: 'mail:liaison@coastguard.example' }] });
  await call('POST', `/V2/${ops}/addressbookdistributionlists`, { ListName: 'Night shift', Recipients: [{ Type: 'TenantContact', ContactId: contact }] });
  for (const tc of [aberdeen, shetland]) {
    const { location } = await call('POST', `/V2/${tc}/addressbookcontacts`, { ContactName: 'Duty desk', ContactEntries: [{ Address: 'mail:duty@northsea.example' }] });
    await call('POST', `/V2/${tc}/eventnotifications`, {
      NotificationName: 'SOS', EventsExpression: 'Emergency', Severity: '2', RaiseAlert: true, Recipients: [{ Type: 'TenantContact', ContactId: idOf(location) }],
    });
  }
  await call('POST', `/V2/${ops}/eventnotifications`, {
    NotificationName: 'Emergency e-mail to the duty desk', EventsExpression: 'Emergency', Severity: '1', RaiseAlert: false,
    Recipients: [{ Type: 'TenantContact', ContactId: contact }],
  });
  await call('POST', `/V2/${ops}/geofences`, { Name: 'Aberdeen harbour', GeofenceType: 'circle', CircleCentre: { Lat: 57.144, Lon: -2.08 }, CircleRadius: 3000 });
  await call('POST', `/V2/${ops}/geofences`, {
    Name: 'Sullom Voe terminal', GeofenceType: 'polygon',
    PolygonPositions: [[{ Lat: 60.45, Lon: -1.32 }, { Lat: 60.48, Lon: -1.25 }, { Lat: 60.44, Lon: -1.2 }, { Lat: 60.42, Lon: -1.28 }]],
  });
  await call('POST', `/V2/${ops}/apitokens`, { Name: 'Control room wallboard', Permissions: ['Read'] });
  await call('POST', `/V2/${ops}/apitokens`, { Name: 'Dispatch integration', Permissions: ['Read', 'DeviceMessages'] }).catch(() => undefined);
  await call('PUT', `/V2/${ops}/webhooks`, {
    Urls: [{ Url: 'https://dispatch.northsea.example/hooks/safetrack', Device: true, EventNotification: true, MoMessage: true, MtMessage: false, Tenant: false, User: false }],
    Authentication: 'None',
  }).catch(() => undefined);

  // Ten devices: tracks around Aberdeen, Shetland and the North Sea.
  const van = await device(aberdeen, 'Scaffold crew van', { UserId: worker.id, PhoneNumber: '+881631234567' });
  await track(aberdeen, van, 57.10, -2.20, 0.004, 0.01, 12, 6);
  const crews = [
    [aberdeen, 'Harbour patrol', 57.14, -2.09, 0.002, 0.003],
    [aberdeen, 'Pipeline inspector', 57.30, -2.40, 0.01, -0.01],
    [aberdeen, 'Depot forklift 2', 57.16, -2.12, 0.0004, 0.0004],
    [shetland, 'Sullom Voe boat', 60.46, -1.28, 0.003, 0.006],
    [shetland, 'Lerwick ferry crew', 60.15, -1.14, 0.01, 0.002],
    [ops, 'Rig Alpha medic', 58.0, 1.3, 0.0, 0.0005],
    [ops, 'Helicopter liaison', 57.2, -2.2, 0.05, 0.08],
  ];
  const ids = [];
  for (const [tc, name, lat, lon, dLat, dLon] of crews) {
    const id = await device(tc, name);
    await track(tc, id, lat, lon, dLat, dLon, 8, 2 + ids.length * 3);
    ids.push([tc, id]);
  }
  const silent = await device(shetland, 'Unst lone surveyor', { CheckInIntervalMinutes: 30, UserId: rigger.id });
  await track(shetland, silent, 60.76, -0.88, 0.002, 0.002, 5, 180);
  await device(ops, 'Spare pendant (unissued)', { DeviceType: 'Spot' });

  // An alert acknowledged by the lead (older), then the open SOS with its message.
  const boat = ids[3];
  await report(boat[0], boat[1], 60.47, -1.26, minutesAgo(40), { MessageType: 'FreeText', EmergencyState: 'Active', Message: 'Engine failure, drifting' });
  const { json: boatAlerts } = await call('GET', `/V2/${boat[0]}/alerts?deviceId=${boat[1]}&status=Open`);
  const acked = boatAlerts[0]?.AlertId;
  if (acked) await call('POST', `/V2/${boat[0]}/alerts/${acked}/acknowledge`, { Note: 'Coastguard informed, lifeboat launched' }, lead);
  await report(aberdeen, van, 57.148, -2.09, minutesAgo(3), { MessageType: 'FreeText', EmergencyState: 'Active', Message: 'Fell from the scaffold, leg hurts, cannot move' });
  const { json: vanAlerts } = await call('GET', `/V2/${aberdeen}/alerts?deviceId=${van}&status=Open`);
  // People working alone (DESIGN §11): the van's worker on a shift (its SOS's alert page
  // shows the session's panel), the surveyor checking in every half hour, and a patrol
  // whose next check-in is a minute away (due soon).
  await call('POST', `/V2/${aberdeen}/devices/${van}/monitoring`, {
    DurationMinutes: 480, CheckInIntervalMinutes: 60, GraceMinutes: 5, ReminderMinutes: 5, Note: 'Scaffold inspection, north quay',
  });
  await call('POST', `/V2/${shetland}/devices/${silent}/monitoring`, {
    DurationMinutes: 240, CheckInIntervalMinutes: 30, GraceMinutes: 5, ReminderMinutes: 5, Note: 'Survey of the Unst cliffs, no signal below the ridge',
  });
  await call('POST', `/V2/${ids[0][0]}/devices/${ids[0][1]}/monitoring`, {
    DurationMinutes: 120, CheckInIntervalMinutes: 2, GraceMinutes: 1, ReminderMinutes: 1, Note: 'Harbour wall night patrol',
  });
  return {
    operator, tenants: { ops, aberdeen, shetland },
    sos: { tc: aberdeen, id: vanAlerts[0]?.AlertId, device: van },
    acknowledged: { tc: boat[0], id: acked, device: boat[1] },
  };
}

/** Every screen: where it is, what says it has drawn, and what to do first (if anything). */
export function screens(scene) {
  const { sos } = scene;
  // Generous: a screen loaded on first use (the config screens' chunk) on a busy CI machine.
  const shown = (selector) => async (page) => page.locator(selector).first().waitFor({ timeout: 20 * SECOND });
  return [
    { name: 'queue', path: '/alerts', ready: shown(`tr[data-alert-id="${sos.id}"]`) },
    { name: 'alert', path: `/alerts/${sos.tc}/${sos.id}`, ready: shown('[data-testid=alert-summary]'), settle: 1200 },
    { name: 'monitoring', path: '/monitoring', ready: shown('table.monitoring tbody tr') },
    { name: 'map', path: '/map', ready: shown('.leaflet-container'), settle: 2000 },
    { name: 'devices', path: '/devices', ready: shown('table.devices tbody tr') },
    { name: 'device', path: `/devices/${sos.tc}/${sos.device}`, ready: shown('table.messages tbody tr'), settle: 1500 },
    {
      name: 'replay', path: `/devices/${sos.tc}/${sos.device}`, ready: shown('table.messages tbody tr'), settle: 1500,
      act: async (page) => {
        await page.locator('[data-testid=replay-form] button[type=submit]').click();
        await page.locator('[data-testid=replay-play]:not([disabled])').waitFor({ timeout: 10 * SECOND });
        await page.locator('[data-testid=replay-slider]').fill('6');
        await page.locator('[data-testid=replay-form]').evaluate((e) => e.scrollIntoView({ block: 'start' }));
      },
      viewportOnly: true,
    },
    { name: 'users', path: '/users', ready: shown('table tbody tr') },
    { name: 'tokens', path: '/tokens', ready: shown('table tbody tr') },
    { name: 'webhooks', path: '/webhooks', ready: shown('[data-testid=webhook-urls] li') },
    { name: 'deliveries', path: '/deliveries', ready: shown('table tbody tr, .empty:not([hidden])') },
    {
      name: 'reports', path: '/reports', ready: shown('form'),
      act: async (page) => {
        await page.getByRole('button', { name: /^(Show|Afficher)$/ }).click();
        await page.locator('[data-testid=report-table], [data-testid=report-empty]').first().waitFor({ timeout: 10 * SECOND });
      },
    },
    { name: 'geofences', path: '/config/geofences', ready: shown('table.records tbody tr'), settle: 1500 },
    { name: 'notifications', path: '/config/notifications', ready: shown('table.records tbody tr') },
    { name: 'addressbook', path: '/config/addressbook', ready: shown('table.records tbody tr') },
  ];
}

/** A fresh context at `width` in `theme`: the theme chosen before the first script runs. */
/* A null theme leaves the stored choice alone; `storageState` carries a session over. */
export async function themedContext(browser, width, theme, { locale = 'en-GB', storageState } = {}) {
  const context = await browser.newContext({
    locale, viewport: { width: width.width, height: width.height }, colorScheme: theme === 'dark' ? 'dark' : 'light',
    deviceScaleFactor: 1, hasTouch: width.name === 'phone', isMobile: false, storageState,
  });
  if (theme) {
    await context.addInitScript((t) => {
      try { localStorage.setItem('safetrack.theme', t); } catch { /* no storage */ }
    }, theme);
  }
  await context.route('**/*', (route) => (new URL(route.request().url()).origin !== origin && !route.request().url().startsWith('data:') ? route.abort() : route.fallback()));
  if (process.env.CONSOLE_DIST) await serveDist(context, process.env.CONSOLE_DIST);
  context.setDefaultTimeout(10 * SECOND);
  return context;
}

/** Logs in through the login page. */
export async function logIn(page, who) {
  await page.goto(`${base}/login`);
  await page.locator('#username').fill(who.username);
  await page.locator('#password').fill(who.password);
  await page.locator('form.login button[type=submit]').click();
  await page.waitForURL(/\/alerts/);
  await page.locator('[data-testid=stream-state][data-state=live]').waitFor({ timeout: 10 * SECOND });
}

/** Opens a screen and waits until it has drawn (`settle`: then how long for maps and
 * animations to come to rest; the screenshots wait longer than the checks). */
export async function visit(page, screen, settle = screen.settle ?? 500) {
  await page.goto(base + screen.path);
  await screen.ready(page);
  if (screen.act) await screen.act(page);
  await page.waitForTimeout(settle);
}

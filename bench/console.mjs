// The browser benchmark of the operator console (run by bench/console.sh, which starts the
// release server): DEVICES devices in scope, RATE position events per second arriving on
// the stream for SECONDS (posted through the API by bench/console_load.mjs), in Debian's
// headless Chromium driven by playwright-core. Measured in the page:
//   - first load: from "Log in" to the alert queue shown, then the map with every device
//     placed (the Map link clicked as soon as the queue shows);
//   - on the map, then on the queue, each for SECONDS under the load: the median and p99
//     frame time (requestAnimationFrame deltas) and main-thread tasks over 200 ms
//     (PerformanceObserver 'longtask');
//   - SOS latency: SOS SOS messages raised during the queue run, from the ingest answer
//     (the POST's response, in this process) to the alert's row in the queue (a
//     MutationObserver in the page; both clocks are this machine's wall clock).
// Prints one JSON object (the figures) as its last line.
import { createRequire } from 'node:module';
import { spawn } from 'node:child_process';

const require = createRequire(new URL('../console/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const base = process.env.BASE;
const [username, ...rest] = (process.env.ADMIN ?? '').split(':');
const password = rest.join(':');
const DEVICES = Number(process.env.DEVICES ?? 10000);
const RATE = Number(process.env.RATE ?? 500);
const SECONDS = Number(process.env.SECONDS ?? 60);
const SOS = Number(process.env.SOS ?? 100);
const auth = 'Basic ' + Buffer.from(`${username}:${password}`).toString('base64');

async function call(method, path, body) {
  const response = await fetch(base + path, {
    method,
    headers: { Authorization: auth, Accept: 'application/json', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

/** Runs `work(i)` for i in [0, n) with `width` at a time. */
async function parallel(n, width, work) {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) await work(next++);
  }));
}

let seed = 7;
function random() {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : null;
}
const round = (x) => (x === null ? null : Math.round(x * 10) / 10);

// --- The scene: devices across Europe with a last position, geofences, the SOS rule. ---
const seeding = Date.now();
const existing = await call('GET', '/V2/1000/devices');
if (existing.length < DEVICES) {
  await parallel(DEVICES, 16, async (i) => {
    await call('POST', '/V2/1000/devices', { DeviceId: `bench-${i}`, DeviceType: 'InReach', FriendlyName: `Bench ${i}`, CheckInIntervalMinutes: 60 });
    await call('POST', `/V2/1000/devices/bench-${i}/momessages`, [{ MessageType: 'Position', SequenceNumber: 1, SentFromDevice: new Date().toISOString(),
      Position: { Latitude: 36 + random() * 34, Longitude: -10 + random() * 40 } }]);
  });
  for (let g = 0; g < 20; g++) {
    await call('POST', '/V2/1000/geofences', { Name: `Zone ${g}`, GeofenceType: 'circle',
      CircleCentre: { Lat: 40 + (g % 5) * 5, Lon: -5 + Math.floor(g / 5) * 8 }, CircleRadius: 20000 });
  }
  await call('POST', '/V2/1000/eventnotifications', { NotificationName: 'SOS', EventsExpression: 'Emergency', Severity: '2', RaiseAlert: true, Recipients: [] });
}
console.error(`seeded ${DEVICES} devices in ${((Date.now() - seeding) / 1000).toFixed(0)} s`);

// --- The browser. ---
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'],
});
const context = await browser.newContext({ locale: 'en-GB', viewport: { width: 1280, height: 800 } });
context.setDefaultTimeout(120_000);
const page = await context.newPage();
const errors = [];
page.on('pageerror', (e) => errors.push(e.message));

await page.goto(base + '/login');
await page.getByLabel('Username').fill(username);
await page.getByLabel('Password').fill(password);
const loginClicked = Date.now();
await page.getByRole('button', { name: 'Log in' }).click();
await page.locator('[data-testid=queue-count], [data-testid=queue-empty]:visible').first().waitFor();
const queueShown = Date.now();
await page.getByRole('link', { name: 'Map' }).click();
await page.locator(`[data-testid=device-map][data-devices="${DEVICES}"][data-ready=true]`).waitFor();
const mapDrawn = Date.now();
await page.locator('[data-testid=stream-state][data-state=live]').waitFor();

/** Starts counting frames and long tasks in the page. */
async function startMeasuring() {
  await page.evaluate(() => {
    const bench = { frames: [], long: [], stop: false };
    window.__bench = bench;
    let last = performance.now();
    const frame = (now) => {
      bench.frames.push(now - last);
      last = now;
      if (!bench.stop) requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
    bench.observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) bench.long.push(e.duration);
    });
    bench.observer.observe({ type: 'longtask' });
  });
}
async function stopMeasuring() {
  const { frames, long } = await page.evaluate(() => {
    const bench = window.__bench;
    bench.stop = true;
    bench.observer.disconnect();
    return { frames: bench.frames, long: bench.long };
  });
  return {
    frames: frames.length,
    median_frame_ms: round(quantile(frames, 0.5)),
    p99_frame_ms: round(quantile(frames, 0.99)),
    long_tasks_over_50_ms: long.length,
    tasks_over_200_ms: long.filter((d) => d > 200).length,
    longest_task_ms: round(long.length ? Math.max(...long) : 0),
  };
}

function startLoad() {
  const child = spawn(process.execPath, [new URL('./console_load.mjs', import.meta.url).pathname, base, `${username}:${password}`,
    String(RATE), String(SECONDS), String(Math.min(SOS, DEVICES - 1)), String(DEVICES - 1)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  return new Promise((resolve) => child.on('exit', () => resolve(JSON.parse(out.trim().split('\n').pop() || '{}'))));
}

// --- Run 1: the map under the load. ---
// PROFILE=file: a CPU profile of the page during this run (and the functions taking the
// most time, on stderr), to find what a long task was.
const cdp = process.env.PROFILE ? await context.newCDPSession(page) : null;
if (cdp) {
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 500 });
  await cdp.send('Profiler.start');
}
await startMeasuring();
const mapLoad = await startLoad();
const onMap = await stopMeasuring();
if (cdp) {
  const { profile } = await cdp.send('Profiler.stop');
  const { writeFileSync } = await import('node:fs');
  writeFileSync(process.env.PROFILE, JSON.stringify(profile));
  const self = new Map();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const deltas = profile.timeDeltas;
  profile.samples.forEach((id, i) => {
    const f = byId.get(id).callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber}:${f.columnNumber}`;
    self.set(key, (self.get(key) ?? 0) + (deltas[i] ?? 0) / 1000);
  });
  const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 25);
  for (const [k, ms] of top) console.error(`${ms.toFixed(0).padStart(7)} ms  ${k}`);
}
const mapUpdates = Number(await page.locator('[data-testid=device-map]').getAttribute('data-updates'));

// --- Run 2: the queue under the load, with SOS raised meanwhile. ---
await page.getByRole('link', { name: 'Alerts' }).click();
await page.locator('[data-testid=queue-count]').waitFor();
await page.evaluate(() => {
  window.__rows = {};
  new MutationObserver((records) => {
    const now = Date.now();
    for (const r of records) {
      for (const n of r.addedNodes) {
        const device = n instanceof Element ? n.getAttribute('data-device') : null;
        if (device && !(device in window.__rows)) window.__rows[device] = now;
      }
    }
  }).observe(document.body, { childList: true, subtree: true });
});
await startMeasuring();
const queueLoadDone = startLoad();
const answered = {};
const sosEvery = (SECONDS * 1000 * 0.9) / SOS;
for (let k = 0; k < SOS; k++) {
  await new Promise((r) => setTimeout(r, sosEvery));
  const device = `bench-${k}`;
  await call('POST', `/V2/1000/devices/${device}/momessages?process=true`, [{ MessageType: 'FreeText', EmergencyState: 'Active',
    SequenceNumber: 500 + k, SentFromDevice: new Date().toISOString(), Position: { Latitude: 51.5, Longitude: -0.12 } }]);
  answered[device] = Date.now();
}
const queueLoad = await queueLoadDone;
await page.waitForTimeout(2000);
const onQueue = await stopMeasuring();
const rows = await page.evaluate(() => window.__rows);
const latencies = Object.entries(answered).map(([device, at]) => (device in rows ? rows[device] - at : null));
const seen = latencies.filter((l) => l !== null);

const result = {
  devices: DEVICES,
  rate: RATE,
  seconds: SECONDS,
  first_load_ms: mapDrawn - loginClicked,
  login_to_queue_ms: queueShown - loginClicked,
  queue_to_map_ms: mapDrawn - queueShown,
  map: { ...onMap, redraws: mapUpdates, load: mapLoad },
  queue: { ...onQueue, load: queueLoad },
  sos: { raised: SOS, in_queue: seen.length, p50_ms: round(quantile(seen, 0.5)), p99_ms: round(quantile(seen, 0.99)), max_ms: round(seen.length ? Math.max(...seen) : null) },
  page_errors: errors,
};
await browser.close();
console.log(JSON.stringify(result));

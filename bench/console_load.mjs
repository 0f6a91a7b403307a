// The load driver of bench/console.sh: posts position reports through the API at a steady
// rate, each a one-message batch for a device drawn at random, so that as many `device`
// (and `momessage`) events reach the stream. Runs as its own process so that its work
// never delays the timing of the main script.
//   node bench/console_load.mjs BASE USER:PASS RATE SECONDS FIRST_DEVICE LAST_DEVICE
// Prints one JSON line on exit: { posted, failed, seconds, rate, p50_ms, p99_ms }.
const [base, credentials, rateArg, secondsArg, firstArg, lastArg] = process.argv.slice(2);
const rate = Number(rateArg);
const seconds = Number(secondsArg);
const first = Number(firstArg);
const last = Number(lastArg);
const auth = 'Basic ' + Buffer.from(credentials).toString('base64');

let seed = 42;
/** A small deterministic generator (the same run every time). */
function random() {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}

let posted = 0;
let failed = 0;
let sequence = 1_000_000;
const latencies = [];

async function post(device) {
  const started = performance.now();
  const lat = 36 + random() * 34;
  const lon = -10 + random() * 40;
  try {
    const response = await fetch(`${base}/V2/1000/devices/bench-${device}/momessages`, {
      method: 'POST',
      headers: { Authorization: auth, 'Content-Type': 'application/json' },
      body: JSON.stringify([{ MessageType: 'Position', SequenceNumber: ++sequence, SentFromDevice: new Date().toISOString(),
        Position: { Latitude: lat, Longitude: lon, Speed: 40 } }]),
    });
    await response.arrayBuffer();
    if (response.ok) posted += 1;
    else failed += 1;
  } catch {
    failed += 1;
  }
  latencies.push(performance.now() - started);
}

const started = performance.now();
const tickMs = 10;
let due = 0;
const inFlight = new Set();
await new Promise((resolve) => {
  const timer = setInterval(() => {
    const elapsed = (performance.now() - started) / 1000;
    if (elapsed >= seconds) {
      clearInterval(timer);
      resolve();
      return;
    }
    // Catch up on what is due by now (timers drift), but never more than 1 s behind.
    due = Math.max(due, Math.floor(elapsed * rate) - rate);
    while (due < Math.floor(elapsed * rate)) {
      due += 1;
      const p = post(first + Math.floor(random() * (last - first + 1)));
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
  }, tickMs);
});
await Promise.all(inFlight);
const took = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const pick = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
console.log(JSON.stringify({ posted, failed, seconds: took, rate: posted / seconds, p50_ms: pick(0.5), p99_ms: pick(0.99) }));

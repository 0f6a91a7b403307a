#!/usr/bin/env bash
# Browser benchmark of the operator console: the release server on a fresh SQLite
# database with DEVICES devices (default 10,000) in tenant 1000, each with a last position,
# 20 geofences and an SOS rule; Debian's headless Chromium (playwright-core from
# console/node_modules) logs in and follows the stream while bench/console_load.mjs posts
# RATE position reports a second (default 500, one per request) for SECONDS (default 60),
# first with the map shown, then with the queue shown while SOS (default 100) SOS are
# raised. bench/console.mjs measures in the page: first load (login → queue → map with
# every device), median / p99 frame time, main-thread tasks over 200 ms after the first
# load, SOS latency (ingest answer → row in the queue, p50 / p99).
#   bench/console.sh            (DEVICES, RATE, SECONDS, SOS in the environment)
# Writes the figures to bench/results/console-latest.json (not committed) and prints a
# results-table row.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${BENCH_PORT:-18093}"
BASE="http://127.0.0.1:$PORT"
source bench/lib.sh
[ -x /usr/bin/chromium ] || { echo "installing chromium (Debian package)"; (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null; }
[ -d console/node_modules/playwright-core ] || (cd console && npm ci --silent)
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --quiet

start_server "$PORT" "sqlite://$WORK/console.db?mode=rwc"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
BASE="$BASE" ADMIN="$ADMIN:$PASS" node bench/console.mjs | tee "$WORK/console.json"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
stop_servers
mkdir -p bench/results && cp "$WORK/console.json" bench/results/console-latest.json
python3 - "$WORK/console.json" "$load_before" "$load_after" <<'EOF'
import json, sys, datetime
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
m, q, s = r["map"], r["queue"], r["sos"]
print()
print("| date | devices | events/s posted (map / queue run) | first load (ms) | median frame map / queue (ms) | tasks > 200 ms after load | longest task (ms) | SOS p50 / p99 (ms) | load average before → after |")
print(f"| {datetime.date.today()} | {r['devices']:,} | {m['load']['rate']:.0f} / {q['load']['rate']:.0f} | {r['first_load_ms']:,} | {m['median_frame_ms']} / {q['median_frame_ms']} | {m['tasks_over_200_ms'] + q['tasks_over_200_ms']} | {max(m['longest_task_ms'], q['longest_task_ms'])} | {s['p50_ms']} / {s['p99_ms']} ({s['in_queue']}/{s['raised']}) | {sys.argv[2]} → {sys.argv[3]} |")
EOF

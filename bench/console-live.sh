#!/usr/bin/env bash
# How soon the console shows a monitoring session's changes (DESIGN §11, issue 45: a
# check-in on one console clears it on another within 2 s). Runs the console's
# `monitoring-live` scenario (console/e2e/scenarios/monitoring.mjs: two boards and an
# alert page in headless Chromium, refused any read of the sessions once loaded) RUNS
# times against one release server on SQLite with a 2-second session minute, and prints,
# per change, the median and the worst of the time from the API call (or the alert seen)
# to the change on the page — measured here, on a machine left quiet, never asserted in
# the tests.
#   bench/console-live.sh [RUNS]        (default 5; BENCH_NO_BUILD=1, BENCH_BIN as lib.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-5}"
PORT="${BENCH_PORT:-18095}"
BASE="http://127.0.0.1:$PORT"
MINUTE_MS=2000
source bench/lib.sh
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --quiet
[ -e console/node_modules/.package-lock.json ] || (cd console && npm ci --no-audit --no-fund)
start_server "$PORT" "sqlite://$WORK/live.db?mode=rwc" --delivery-workers 0 --monitoring-minute-ms "$MINUTE_MS"
for run in $(seq "$RUNS"); do
  (cd console && SAFETRACK_URL="$BASE" SAFETRACK_ADMIN="$ADMIN:$PASS" SCENARIOS=monitoring-live \
    CHROMIUM=/usr/bin/chromium SAFETRACK_MONITORING_MINUTE_MS="$MINUTE_MS" node e2e/run.mjs) >"$WORK/run.out" || {
    cat "$WORK/run.out" >&2
    exit 1
  }
  grep '^live latency ms:' "$WORK/run.out" >>"$WORK/latencies"
  echo "run $run: $(grep '^live latency ms:' "$WORK/run.out")"
done
stop_servers
python3 - "$WORK/latencies" "$RUNS" <<'PY'
import statistics, sys
seen = {}
for line in open(sys.argv[1]):
    for part in line.split(':', 1)[1].split(','):
        what, ms = part.strip().rsplit('=', 1)
        seen.setdefault(what, []).append(int(ms))
print(f"| change ({sys.argv[2]} runs) | median (ms) | worst (ms) |")
print("|---|---:|---:|")
for what, values in seen.items():
    print(f"| {what} | {statistics.median(values):.0f} | {max(values)} |")
PY

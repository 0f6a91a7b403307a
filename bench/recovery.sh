#!/usr/bin/env bash
# A webhook receiver's outage and its end (issue 8: receiver down → retries with backoff
# → receiver up → each event delivered). Rerunnable:
#   bench/recovery.sh [events] [outage_seconds]
# Per backend: one device posts `events` MO messages in batches of 100, spread over an
# outage of `outage_seconds` during which the tenant's MoMessage webhook receiver refuses
# connections (each event's retries back off: 5 s, 20 s, 80 s, … with the default
# --retry-initial-seconds 5). Then the receiver starts, and the script reports how long
# after that the events arrived (median and last, from the receiver's arrival times of
# each distinct webhook-id) and how many arrived more than once.
# (RECOVERY_BACKENDS narrows a run, e.g. "SQLite"; BENCH_BIN/BENCH_NO_BUILD as in lib.sh.)
set -euo pipefail
cd "$(dirname "$0")/.."
EVENTS="${1:-2000}"
OUTAGE="${2:-60}"
PORT="${BENCH_PORT:-18290}"
HOOK_PORT=$((PORT + 1))
BASE="http://127.0.0.1:$PORT"
source bench/lib.sh
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --quiet --bin safetrack --example webhook_receiver
RECEIVER_BIN="${BENCH_RECEIVER_BIN:-./target/release/examples/webhook_receiver}"

# batch N: 100 position reports with sequence numbers N*100+1 … N*100+100.
batch() {
  python3 - "$1" <<'PY'
import json, sys
n = int(sys.argv[1])
print(json.dumps([{"MessageType": "AutomaticPositionReport", "SequenceNumber": n * 100 + i,
    "SentFromDevice": f"2026-02-01T00:{(n * 100 + i) // 60 % 60:02d}:{(n * 100 + i) % 60:02d}.{n:06d}Z",
    "Position": {"Latitude": 51.5, "Longitude": -0.12}} for i in range(1, 101)]))
PY
}

run() { # run DATABASE_URL: sets MEDIAN LAST DUPLICATES
  start_server "$PORT" "$1" --allow-private-webhooks
  post /V2/1000/devices '{"DeviceId":"bench-0","DeviceType":"InReach"}'
  curl -fs -o /dev/null -X PUT "$BASE/V2/1000/webhooks" -H "$AUTH" -H 'content-type: application/json' \
    -d "{\"Urls\":[{\"Url\":\"http://127.0.0.1:$HOOK_PORT/hook\",\"MoMessage\":true}]}"
  local batches=$((EVENTS / 100)) started
  started=$(date +%s.%N)
  for n in $(seq 0 $((batches - 1))); do
    batch "$n" >"$WORK/batch.json"
    curl -fs -o /dev/null -X POST "$BASE/V2/1000/devices/bench-0/momessages" -H "$AUTH" \
      -H 'content-type: application/json' --data-binary "@$WORK/batch.json"
    # Spread over the outage: the last batch goes a few seconds before its end.
    sleep "$(awk -v o="$OUTAGE" -v b="$batches" 'BEGIN {printf "%.3f", (o - 5) / b}')"
  done
  sleep "$(awk -v s="$started" -v o="$OUTAGE" -v now="$(date +%s.%N)" 'BEGIN {w = s + o - now; if (w < 0) w = 0; printf "%.3f", w}')"
  "$RECEIVER_BIN" "$HOOK_PORT" 0 >"$WORK/receiver.log" 2>&1 &
  RECEIVER=$!
  local up
  up=$(date +%s%N)
  for _ in $(seq 6000); do
    curl -fs "http://127.0.0.1:$HOOK_PORT/arrivals" >"$WORK/arrivals.csv" 2>/dev/null || true
    [ "$(cut -d, -f1 "$WORK/arrivals.csv" | sort -u | wc -l)" -ge "$EVENTS" ] && break
    sleep 0.1
  done
  read -r MEDIAN LAST DUPLICATES < <(python3 - "$WORK/arrivals.csv" "$up" "$EVENTS" <<'PY'
import statistics, sys
path, up, events = sys.argv[1], int(sys.argv[2]) // 1000, int(sys.argv[3])
first, requests = {}, 0
for line in open(path):
    event, at = line.strip().split(",")
    requests += 1
    first[event] = min(first.get(event, int(at)), int(at))
delays = sorted((at - up) / 1e6 for at in first.values())
if len(delays) < events:
    print(f"missing({len(delays)}/{events}) - -")
else:
    print(f"{statistics.median(delays):.1f} {delays[-1]:.1f} {requests - len(first)}")
PY
)
  kill "$RECEIVER" 2>/dev/null || true
  wait "$RECEIVER" 2>/dev/null || true
  RECEIVER=""
  stop_servers
}

ROWS=()
for backend in ${RECOVERY_BACKENDS:-SQLite PostgreSQL}; do
  if [ "$backend" = PostgreSQL ] && ! have_postgres; then continue; fi
  if [ "$backend" = SQLite ]; then url="sqlite://$WORK/recovery.db?mode=rwc"; else url=$(fresh_postgres "rec$RANDOM"); fi
  echo "recovery: $backend..."
  run "$url"
  case "$url" in postgres*) drop_postgres "$url" ;; esac
  ROWS+=("| $backend | $EVENTS | $OUTAGE | $MEDIAN | $LAST | $DUPLICATES |")
done

echo
echo "| backend | events | outage (s) | after the receiver is up: median (s) | last (s) | sent twice |"
echo "|---|---:|---:|---:|---:|---:|"
printf '%s\n' "${ROWS[@]}"
echo
echo "MoMessage webhooks queued during a receiver outage, default retry policy; 2 cores, $(date -u +%F)."

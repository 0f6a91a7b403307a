#!/usr/bin/env bash
# Delivery benchmark (issue 8). Rerunnable:
#   bench/deliveries.sh [deliveries] [receiver_delay_ms] [ingest_seconds] [paced_rate]
# Webhooks go to a local receiver (examples/webhook_receiver.rs) answering 200 after
# receiver_delay_ms; every posted MO message makes one MoMessage webhook delivery.
# 1. Drain: N deliveries (default 10,000) queued by a process without delivery workers
#    (--delivery-workers 0), then sent by one `serve` process (SQLite, PostgreSQL) or two
#    sharing one PostgreSQL: deliveries/s from the first arrival to the last.
# 2. Latency: N messages posted at paced_rate per second (default 1,000, under capacity):
#    created (the delivery's CreatedAt) → arrival at the receiver, p50 and p99.
# 3. The ingest load of bench/ingest.sh with the tenant's MoMessage webhooks off, then on
#    (each stored message also queues a delivery that the worker sends meanwhile).
#    ingest_seconds=0 skips this part; deliveries=0 skips parts 1 and 2.
#    DELIVERY_BACKENDS narrows the runs (e.g. "SQLite").
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-10000}"
DELAY_MS="${2:-0}"
INGEST_SECONDS="${3:-30}"
RATE="${4:-1000}"
PORT="${BENCH_PORT:-18090}"
PORT2=$((PORT + 1))
RECEIVER_PORT=$((PORT + 2))
BASE="http://127.0.0.1:$PORT"
HOOK="http://127.0.0.1:$RECEIVER_PORT"
FLAGS=(--allow-private-webhooks)
source bench/lib.sh
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --quiet --bin safetrack --example webhook_receiver

./target/release/examples/webhook_receiver "$RECEIVER_PORT" "$DELAY_MS" >"$WORK/receiver.log" 2>&1 &
RECEIVER=$!
for _ in $(seq 50); do curl -fs "$HOOK/count" >/dev/null 2>&1 && break; sleep 0.1; done

webhooks_on() {
  curl -fs -o /dev/null -X PUT "$BASE/V2/1000/webhooks" -H "$AUTH" -H 'content-type: application/json' \
    -d "{\"Urls\":[{\"Url\":\"$HOOK/hook\",\"MoMessage\":true}]}"
}
run_py() { python3 bench/deliveries_run.py "$@"; }

# setup_tenant: the device and the webhook settings, the receiver emptied.
setup_tenant() {
  post /V2/1000/devices '{"DeviceId":"bench-hook","DeviceType":"InReach"}'
  webhooks_on
  curl -fs -o /dev/null -X POST "$HOOK/reset"
}

# start_senders URL PROCESSES
start_senders() {
  start_server "$PORT" "$1" "${FLAGS[@]}"
  if [ "$2" -gt 1 ]; then start_server "$PORT2" "$1" "${FLAGS[@]}"; fi
}

# delivery_runs LABEL URL_MAKER PROCESSES: a drain run and a paced run, each on a fresh
# database from URL_MAKER; appends a row to ROWS and leaves the drain rate in DPS.
delivery_runs() {
  local label=$1 maker=$2 processes=$3 url dup p50 p99 pdup
  url=$($maker drain)
  start_server "$PORT" "$url" "${FLAGS[@]}" --delivery-workers 0
  setup_tenant
  run_py post "$BASE" "$ADMIN" "$PASS" "$N"
  stop_servers
  start_senders "$url" "$processes"
  read -r DPS dup < <(run_py drain "$HOOK" "$N")
  stop_servers
  drop_db "$url"
  url=$($maker paced)
  start_senders "$url" "$processes"
  setup_tenant
  read -r p50 p99 pdup < <(run_py paced "$BASE" "$ADMIN" "$PASS" "$N" "$RATE" "$HOOK")
  stop_servers
  drop_db "$url"
  ROWS+=("| $label | $DPS | $p50 | $p99 | $((dup + pdup)) |")
}
sqlite_url() { echo "sqlite://$WORK/deliveries-$1.db?mode=rwc"; }
postgres_url() { fresh_postgres "d$1$RANDOM"; }
drop_db() { case "$1" in postgres*) drop_postgres "$1" ;; esac; }

BACKENDS="${DELIVERY_BACKENDS:-SQLite PostgreSQL}"
ROWS=()
PG1=""
if [ "$N" -gt 0 ] && [[ " $BACKENDS " == *" SQLite "* ]]; then
  echo "deliveries: SQLite..."
  delivery_runs "SQLite, 1 process" sqlite_url 1
fi
if [ "$N" -gt 0 ] && [[ " $BACKENDS " == *" PostgreSQL "* ]] && have_postgres; then
  echo "deliveries: PostgreSQL, 1 process..."
  delivery_runs "PostgreSQL, 1 process" postgres_url 1
  PG1=$DPS
  echo "deliveries: PostgreSQL, 2 processes..."
  delivery_runs "PostgreSQL, 2 processes" postgres_url 2
  PG2=$DPS
fi

# ingest_run DATABASE_URL MODE: sets MPS and P99. MODE off: no webhooks; on: MoMessage
# webhooks, sent by this process's worker meanwhile; queued: the same, but this process
# only queues them (--delivery-workers 0), as an ingest front end beside sender processes.
ingest_run() {
  local workers=2
  if [ "$2" = queued ]; then workers=0; fi
  start_server "$PORT" "$1" "${FLAGS[@]}" --delivery-workers "$workers"
  seed_ingest
  if [ "$2" != off ]; then webhooks_on; fi
  curl -fs -o /dev/null -X POST "$HOOK/reset"
  local p50
  read -r MPS p50 P99 < <(load "$INGEST_SECONDS")
  # Webhooks the receiver got during the load, per second (sending may lag ingest).
  SENT=$(awk -v n="$(curl -fs "$HOOK/count")" -v s="$INGEST_SECONDS" 'BEGIN {printf "%.0f", n / s}')
  stop_servers
}
INGEST_ROWS=()
for backend in $BACKENDS; do
  if [ "$INGEST_SECONDS" = 0 ]; then break; fi
  if [ "$backend" = PostgreSQL ] && ! have_postgres; then continue; fi
  for mode in off on queued; do
    if [ "$backend" = SQLite ]; then url=$(sqlite_url "ingest-$mode"); else url=$(postgres_url "i$mode"); fi
    echo "ingest: $backend, webhooks $mode..."
    ingest_run "$url" "$mode"
    drop_db "$url"
    case $mode in
      off) OFF=$MPS; OFF_P99=$P99 ;;
      on) ON=$MPS; ON_P99=$P99; ON_SENT=$SENT ;;
      queued) INGEST_ROWS+=("| $backend | $OFF | $OFF_P99 | $ON | $ON_P99 | $(ratio "$ON" "$OFF") | $ON_SENT | $MPS | $P99 | $(ratio "$MPS" "$OFF") |") ;;
    esac
  done
done

{
  if [ "${#ROWS[@]}" -gt 0 ]; then
  echo "| $N webhook deliveries | drain: deliveries/s | paced $RATE/s: p50 created→delivered (ms) | p99 (ms) | duplicates |"
  echo "|---|---:|---:|---:|---:|"
  printf '%s\n' "${ROWS[@]}"
  fi
  if [ -n "$PG1" ]; then echo; echo "Two processes on PostgreSQL / one: $(ratio "$PG2" "$PG1")×."; fi
  if [ "${#INGEST_ROWS[@]}" -gt 0 ]; then
  echo
  echo "| ingest ($INGEST_SECONDS s) | webhooks off: msg/s | p99 (ms) | on, sent by the same process: msg/s | p99 (ms) | / off | webhooks sent meanwhile /s | on, queued only: msg/s | p99 (ms) | / off |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${INGEST_ROWS[@]}"
  fi
  echo
  echo "Receiver answers 200 after ${DELAY_MS} ms; $(nproc) cores, $(date -u +%Y-%m-%d)."
} | tee "$WORK/result.md"
mkdir -p bench/results && cp "$WORK/result.md" "bench/results/deliveries-latest-${DELAY_MS}ms.md"

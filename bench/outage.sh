#!/usr/bin/env bash
# Ingest while the webhook receiver is out (issue 8: one receiver must not hold up the
# rest). Rerunnable:
#   bench/outage.sh [seconds]
# (OUTAGE_BACKENDS / OUTAGE_RECEIVERS narrow a run, e.g. "PostgreSQL" / "hanging".)
# The ingest load of bench/ingest.sh, the tenant's MoMessage webhooks sent by the same
# process, with the receiver (1) answering at once, (2) down (connection refused), (3)
# hanging (answering after 60 s, past the 15 s timeout). Per run: messages/s, p99 POST,
# and the webhook attempts the worker made (from /metrics) — with a receiver out, every
# attempt is work on the single writer that ingest waits behind.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN="${1:-30}"
PORT="${BENCH_PORT:-18190}"
UP_PORT=$((PORT + 1))
HANG_PORT=$((PORT + 2))
DOWN_PORT=$((PORT + 3))
BASE="http://127.0.0.1:$PORT"
source bench/lib.sh
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --quiet --bin safetrack --example webhook_receiver

./target/release/examples/webhook_receiver "$UP_PORT" 0 >"$WORK/up.log" 2>&1 &
RECEIVER=$!
./target/release/examples/webhook_receiver "$HANG_PORT" 60000 >"$WORK/hang.log" 2>&1 &
SERVERS+=("$!")
HANG_RECEIVER=$!
for port in "$UP_PORT" "$HANG_PORT"; do
  for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/count" >/dev/null 2>&1 && break; sleep 0.1; done
done

# attempts: webhook attempts counted by the server's /metrics.
attempts() {
  curl -fs "$BASE/metrics" | awk '/^safetrack_delivery_attempts_total\{.*channel="Webhook"/ {n += $NF} END {printf "%d", n}'
}

run() { # run DATABASE_URL HOOK_PORT: sets MPS P99 ATTEMPTS
  local p50
  start_server "$PORT" "$1" --allow-private-webhooks
  seed_ingest
  curl -fs -o /dev/null -X PUT "$BASE/V2/1000/webhooks" -H "$AUTH" -H 'content-type: application/json' \
    -d "{\"Urls\":[{\"Url\":\"http://127.0.0.1:$2/hook\",\"MoMessage\":true}]}"
  read -r MPS p50 P99 < <(load "$SECONDS_PER_RUN")
  ATTEMPTS=$(attempts)
  # Stop the servers we started, not the hanging receiver.
  kill "$SERVER" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
  SERVERS=("$HANG_RECEIVER")
}

ROWS=()
for backend in ${OUTAGE_BACKENDS:-SQLite PostgreSQL}; do
  if [ "$backend" = PostgreSQL ] && ! have_postgres; then continue; fi
  for receiver in ${OUTAGE_RECEIVERS:-up down hanging}; do
    case $receiver in up) hook=$UP_PORT ;; down) hook=$DOWN_PORT ;; hanging) hook=$HANG_PORT ;; esac
    if [ "$backend" = SQLite ]; then url="sqlite://$WORK/outage-$receiver.db?mode=rwc"; else url=$(fresh_postgres "o$receiver$RANDOM"); fi
    echo "outage: $backend, receiver $receiver..."
    run "$url" "$hook"
    case "$url" in postgres*) drop_postgres "$url" ;; esac
    ROWS+=("| $backend | $receiver | $MPS | $P99 | $ATTEMPTS |")
  done
done

echo
echo "| backend | receiver | messages/s | p99 POST (ms) | webhook attempts in ${SECONDS_PER_RUN} s |"
echo "|---|---|---:|---:|---:|"
printf '%s\n' "${ROWS[@]}"
echo
echo "Ingest load of bench/ingest.sh, MoMessage webhooks sent by the same process; 2 cores, $(date -u +%F)."

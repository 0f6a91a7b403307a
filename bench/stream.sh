#!/usr/bin/env bash
# Live stream benchmark: what following the stream costs ingest. The ingest load of
# bench/ingest.sh (1,000 devices, batches of 100, 8 connections), each run twice in the
# same run: without any stream client (the baseline), then with one client following
# tenant 1000 — every event of the load — from the start. On SQLite the hub is fed by
# the process itself; on PostgreSQL (when one answers on 127.0.0.1:5432) by the
# database's announcements, the records read when the follower needs them.
#   bench/stream.sh [seconds]
# Prints messages/s and p99 POST latency per run, the ratio to the baseline, and how many
# events the follower received (a follower that falls 4,096 events behind is dropped).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${1:-20}"
PORT="${BENCH_PORT:-18092}"
BASE="http://127.0.0.1:$PORT"
source bench/lib.sh
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --quiet

# run_pair LABEL URL: baseline and followed runs on fresh databases; prints table rows.
run_pair() {
  local label=$1 url_base=$2 mps p50 p99 base_mps
  for follow in 0 1; do
    local url
    case "$url_base" in
      sqlite) url="sqlite://$WORK/stream-$follow.db?mode=rwc" ;;
      *) url=$(fresh_postgres "stream$follow") ;;
    esac
    start_server "$PORT" "$url"
    seed_ingest
    local events="—"
    if [ "$follow" = 1 ]; then
      curl -sN -H "$AUTH" "$BASE/V2/1000/stream" >"$WORK/sse.txt" &
      local follower=$!
      sleep 0.5
    fi
    read -r mps p50 p99 < <(load "$DURATION")
    if [ "$follow" = 1 ]; then
      sleep 2
      kill "$follower" 2>/dev/null || true
      events=$(grep -c '^event:' "$WORK/sse.txt" || true)
      if grep -q 'too far behind' "$WORK/sse.txt"; then events="$events (dropped)"; fi
    fi
    stop_servers
    [ "$url_base" = sqlite ] || drop_postgres "$url"
    if [ "$follow" = 0 ]; then
      base_mps=$mps
      echo "| $label, no stream client | $mps | $p99 | 1.00 | — |"
    else
      echo "| $label, one client following everything | $mps | $p99 | $(ratio "$mps" "$base_mps") | $events |"
    fi
  done
}

{
  echo "| run | messages/s | p99 POST (ms) | vs no client | events streamed |"
  echo "|---|---:|---:|---:|---:|"
  run_pair SQLite sqlite
  if have_postgres; then run_pair PostgreSQL postgres; fi
  echo
  echo "$BENCH_DEVICES devices, batches of $BENCH_BATCH, $CONNECTIONS connections, ${DURATION} s each; $(nproc) cores, $(date -u +%Y-%m-%d)."
} | tee "$WORK/result.md"
mkdir -p bench/results && cp "$WORK/result.md" bench/results/stream-latest.md

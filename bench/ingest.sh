#!/usr/bin/env bash
# Ingest benchmark (issue 7): 1,000 devices posting batches of 100 MO messages with
# positions over 8 connections, with 20 geofences and 10 enabled notifications (a few
# percent of messages match), against the ceiling measured in the same run: the same rows
# inserted by a plain client with no server (bench/sqlite_ceiling.py). Then the same load
# on PostgreSQL when one answers on 127.0.0.1:5432. Rerunnable:
#   bench/ingest.sh [seconds] [rss]
# With rss=1 the SQLite server's RSS is sampled every 10 s over the run (use a 300-second
# run to check that RSS stays flat). Installs wrk from Debian when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${1:-30}"
RSS="${2:-0}"
PORT="${BENCH_PORT:-18090}"
BASE="http://127.0.0.1:$PORT"
source bench/lib.sh
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --quiet

# The ceiling moves with the disk's fsync time (28-95 k rows/s between days here, and
# within an hour): it is measured before and after the SQLite server's run, and the
# server is compared with their mean.
echo "ceiling: plain SQLite client, transactions of $BENCH_BATCH rows..."
CEILING_BEFORE=$(python3 bench/sqlite_ceiling.py 200000 "$BENCH_BATCH")

echo "SQLite server..."
start_server "$PORT" "sqlite://$WORK/bench.db?mode=rwc"
seed_ingest
RSS_LOG=""
if [ "$RSS" != 0 ]; then RSS_LOG="$WORK/rss.log"; fi
read -r S_MPS S_P50 S_P99 < <(load "$DURATION" "$RSS_LOG")
S_RSS=$(awk '/VmHWM/ {print $2}' "/proc/$SERVER/status")
stop_servers
echo "ceiling again..."
CEILING_AFTER=$(python3 bench/sqlite_ceiling.py 200000 "$BENCH_BATCH")
CEILING=$(( (CEILING_BEFORE + CEILING_AFTER) / 2 ))

P_LINE=""
PG_URL=$(fresh_postgres ingest)
if [ -n "$PG_URL" ]; then
  echo "PostgreSQL server..."
  start_server "$PORT" "$PG_URL"
  seed_ingest
  read -r P_MPS P_P50 P_P99 < <(load "$DURATION")
  P_RSS=$(awk '/VmHWM/ {print $2}' "/proc/$SERVER/status")
  stop_servers
  drop_postgres "$PG_URL"
  P_LINE="| PostgreSQL server | $P_MPS | $P_P50 | $P_P99 | — | $((P_RSS / 1024)) MB |"
fi

{
  echo "| run | messages/s | p50 POST (ms) | p99 POST (ms) | vs ceiling | peak RSS |"
  echo "|---|---:|---:|---:|---:|---:|"
  echo "| ceiling: plain SQLite client, no server (mean of $CEILING_BEFORE before, $CEILING_AFTER after) | $CEILING | — | — | 1.00 | — |"
  echo "| SQLite server | $S_MPS | $S_P50 | $S_P99 | $(ratio "$S_MPS" "$CEILING") | $((S_RSS / 1024)) MB |"
  if [ -n "$P_LINE" ]; then echo "$P_LINE"; fi
  echo
  echo "$BENCH_DEVICES devices, batches of $BENCH_BATCH, $CONNECTIONS connections, ${DURATION} s, 20 geofences, 10 notifications; $(nproc) cores, $(date -u +%Y-%m-%d)."
  if [ -n "$RSS_LOG" ]; then echo "SQLite server RSS every 10 s (kB): $(tr '\n' ' ' <"$RSS_LOG")"; fi
} | tee "$WORK/result.md"
mkdir -p bench/results && cp "$WORK/result.md" bench/results/ingest-latest.md

#!/usr/bin/env bash
# MO messages' retention beside ingest (issue 49 §1), on SQLite. OLD_MESSAGES messages
# dated 2020 are written straight into a seeded database (the server stopped; the ingest
# scenario's 1,000 devices, 20 geofences, 10 notifications), which each run starts from:
#   A  without --message-retention-days: nothing to prune; the ingest load for SECONDS;
#   B  with --message-retention-days 30: the pruner deletes the old messages (1,000 per
#      write, yielding to ingest's waiting batches) while the same load runs.
# Prints ingest messages/s of each, B/A, and B's prune rate (old messages deleted per
# second during the load window); medians over ROUNDS, the order alternating.
#   bench/retention.sh [OLD_MESSAGES] [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
OLD="${1:-3000000}"
SECONDS_LOAD="${2:-60}"
ROUNDS="${3:-2}"
PORT="${BENCH_PORT:-18090}"
BASE="http://127.0.0.1:$PORT"
source bench/lib.sh
COMMIT="${BENCH_COMMIT:-$(git rev-parse --short HEAD)}"
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --quiet

echo "seeding the scenario and $OLD messages from 2020..."
start_server "$PORT" "sqlite://$WORK/template.db?mode=rwc"
seed_ingest
stop_servers
# 2020-01-01T00:00:00Z in microseconds, one message a second per device.
sqlite3 "$WORK/template.db" "
  WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $OLD - 1)
  INSERT INTO mo_messages (tenant_code, device_id, sent_at, received_at, message_time,
      message_type, latitude, longitude, doc, etag)
  SELECT '1000', 'bench-' || (i % $BENCH_DEVICES), 1577836800000000 + i * 1000000,
      1577836800000000 + i * 1000000, 1577836800000000 + i * 1000000,
      'AutomaticPositionReport', 51.0 + (i % 1000) / 10000.0, -1.0,
      '{\"MessageType\":\"AutomaticPositionReport\"}', 'bench'
  FROM n;
  PRAGMA wal_checkpoint(TRUNCATE);"
old_left() { sqlite3 "$WORK/run.db" "SELECT count(*) FROM mo_messages WHERE message_time < 1600000000000000"; }

# run KIND: one run from the template; prints "ingest_mps pruned_per_s".
run() {
  rm -f "$WORK"/run.db*
  cp "$WORK/template.db" "$WORK/run.db"
  local flags=()
  [ "$1" = B ] && flags=(--message-retention-days 30)
  start_server "$PORT" "sqlite://$WORK/run.db?mode=rwc" "${flags[@]}"
  local before after mps
  before=$(old_left)
  read -r mps _ _ < <(load "$SECONDS_LOAD")
  after=$(old_left)
  stop_servers
  echo "$mps $(awk -v b="$before" -v a="$after" -v s="$SECONDS_LOAD" 'BEGIN {printf "%.0f", (b - a) / s}')"
}

: >"$WORK/A" ; : >"$WORK/B"
for round in $(seq "$ROUNDS"); do
  order="A B"; [ $((round % 2)) -eq 0 ] && order="B A"
  for kind in $order; do
    line=$(run "$kind")
    echo "round $round $kind: $line"
    echo "$line" >>"$WORK/$kind"
  done
done
A_MPS=$(cut -d' ' -f1 "$WORK/A" | median)
B_MPS=$(cut -d' ' -f1 "$WORK/B" | median)
PRUNE=$(cut -d' ' -f2 "$WORK/B" | median)
{
  echo "| run | ingest messages/s (median) | old messages pruned/s (median) |"
  echo "|---|---:|---:|"
  echo "| A no retention | $A_MPS | — |"
  echo "| B --message-retention-days 30 | $B_MPS ($(ratio "$B_MPS" "$A_MPS") of A) | $PRUNE |"
  echo
  echo "$OLD messages from 2020 seeded; $BENCH_DEVICES devices, batches of $BENCH_BATCH, $CONNECTIONS connections, ${SECONDS_LOAD} s per run, $ROUNDS rounds; commit $COMMIT; $(nproc) cores, $(date -u +%Y-%m-%d)."
} | tee "$WORK/result.md"
mkdir -p bench/results && cp "$WORK/result.md" bench/results/retention-latest.md

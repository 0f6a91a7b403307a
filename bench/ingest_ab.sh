#!/usr/bin/env bash
# A/B of server builds on the ingest load (SQLite, webhooks off): alternates the given
# binaries for ROUNDS rounds and prints messages/s, p50 and p99 (ms) of each run. On a
# noisy machine compare the builds within rounds, and medians, never single runs.
#   bench/ingest_ab.sh ROUNDS SECONDS BIN_A BIN_B [BIN…]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="$1" SECONDS_PER_RUN="$2"
shift 2
PORT="${BENCH_PORT:-18090}"
BASE="http://127.0.0.1:$PORT"
source bench/lib.sh
for round in $(seq "$ROUNDS"); do
  for bin in "$@"; do
    BIN="$bin"
    rm -f "$WORK"/ab.db*
    start_server "$PORT" "sqlite://$WORK/ab.db?mode=rwc"
    seed_ingest
    echo "round $round $bin $(load "$SECONDS_PER_RUN")"
    stop_servers
  done
done

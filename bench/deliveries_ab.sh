#!/usr/bin/env bash
# A/B of server builds on the delivery benchmark (SQLite, one process): alternates the
# given binaries for ROUNDS rounds of bench/deliveries.sh's drain and paced runs with N
# deliveries, and prints each run's row (drain deliveries/s, paced p50/p99 ms,
# duplicates). Compare within rounds and medians, never single runs.
#   bench/deliveries_ab.sh ROUNDS N BIN_A BIN_B [BIN…]
# The webhook receiver is ./target/release/examples/webhook_receiver (built unless
# BENCH_NO_BUILD is set).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="$1" N="$2"
shift 2
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --quiet --example webhook_receiver
for round in $(seq "$ROUNDS"); do
  for bin in "$@"; do
    row=$(BENCH_BIN="$bin" BENCH_NO_BUILD=1 DELIVERY_BACKENDS=SQLite bench/deliveries.sh "$N" 0 0 |
      grep '^| SQLite')
    echo "round $round $bin $row"
  done
done

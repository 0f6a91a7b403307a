#!/usr/bin/env bash
# Offline reverse geocoding (issue 48 §1): the index's build time and memory, and lookups
# per second on one core (pinned with taskset when it is there) — examples/geocode.rs.
# Target: >= 1 M lookups/s on one core. Rerunnable:
#   bench/geocode.sh [lookups]      (default 2,000,000 per measurement)
set -euo pipefail
cd "$(dirname "$0")/.."
LOOKUPS="${1:-2000000}"
SAFETRACK_SKIP_CONSOLE=1 cargo build --release --quiet --example geocode
PIN=()
command -v taskset >/dev/null && PIN=(taskset -c 0)
echo "commit $(git rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
"${PIN[@]}" ./target/release/examples/geocode "$LOOKUPS"

#!/usr/bin/env bash
# Ingest benchmark (issue 7): 1,000 devices posting batches of 100 MO messages with
# positions over 8 connections, with 20 geofences and 10 enabled notifications (a few
# percent of messages match), against the ceiling measured in the same run: the same rows
# inserted by a plain client with no server (bench/sqlite_ceiling.py). Then the same load
# on PostgreSQL when one answers on 127.0.0.1:5432. Rerunnable:
#   bench/ingest.sh [seconds] [rss_sample_seconds]
# With rss_sample_seconds > 0 the server's RSS is sampled every 10 s over the run (use a
# 300-second run to check that RSS stays flat). Installs wrk from Debian when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${1:-30}"
RSS_SAMPLE="${2:-0}"
CONNECTIONS=8
PORT="${BENCH_PORT:-18090}"
BASE="http://127.0.0.1:$PORT"
ADMIN=bench-admin@example.com
PASS=bench-password-1
export BENCH_DEVICES=1000 BENCH_BATCH=100

if ! command -v wrk >/dev/null 2>&1; then
  echo "installing wrk (Debian package)"
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi
cargo build --release --quiet
WORK=$(mktemp -d)
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

AUTH="Authorization: Basic $(printf '%s:%s' "$ADMIN" "$PASS" | base64 -w0)"
post() { curl -fs -o /dev/null -X POST "$BASE$1" -H "$AUTH" -H 'content-type: application/json' -d "$2"; }

# Starts the server on $1 (database URL), seeds devices, geofences and notifications.
start_and_seed() {
  RUST_LOG=warn ./target/release/safetrack serve --listen "127.0.0.1:$PORT" --database-url "$1" \
    --admin-email "$ADMIN" --admin-password "$PASS" >"$WORK/server.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 100); do curl -fs "$BASE/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
  for g in $(seq 0 19); do
    lat=$(awk -v g="$g" 'BEGIN {printf "%.4f", 51.0 + (g % 5) * 0.08}')
    lon=$(awk -v g="$g" 'BEGIN {printf "%.4f", -1.0 + int(g / 5) * 0.1}')
    post /V2/1000/geofences "{\"Name\":\"Zone $g\",\"GeofenceType\":\"circle\",\"CircleCentre\":{\"Lat\":$lat,\"Lon\":$lon},\"CircleRadius\":300}"
  done
  # Ten rules; together they match a few percent of the messages.
  local rules=('Speed > 118' 'Emergency' 'Battery < 6' 'GeofenceEnter(\"Zone 3\")' 'GeofenceExit(\"Zone 7\")'
    'Property(\"battery\") = \"42\"' 'MissedCheckIn' 'FreeText' 'Speed > 119.5 AND Battery < 50' 'CheckIn')
  local i=0
  for expression in "${rules[@]}"; do
    i=$((i + 1))
    post /V2/1000/eventnotifications "{\"NotificationName\":\"Rule $i\",\"EventsExpression\":\"$expression\",\"RaiseAlert\":$([ $((i % 2)) -eq 0 ] && echo true || echo false),\"Severity\":\"1\",\"Recipients\":[{\"Type\":\"MessagingAddress\",\"MessagingAddress\":\"mail:ops@example.com\"}]}"
  done
  for d in $(seq 0 $((BENCH_DEVICES - 1))); do
    printf '{"DeviceId":"bench-%d","DeviceType":"InReach"}\n' "$d"
  done | xargs -d '\n' -P 4 -I{} curl -fs -o /dev/null -X POST "$BASE/V2/1000/devices" -H "$AUTH" -H 'content-type: application/json' -d '{}'
}

# Runs the load; prints "messages_per_second p50_ms p99_ms".
load() {
  local rss_log="$WORK/rss.log"
  : >"$rss_log"
  if [ "$RSS_SAMPLE" -gt 0 ]; then
    ( while kill -0 "$SERVER" 2>/dev/null; do awk '/VmRSS/ {print $2}' "/proc/$SERVER/status" >>"$rss_log"; sleep 10; done ) &
  fi
  wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency -H "$AUTH" -H 'content-type: application/json' \
    -s bench/ingest.lua "$BASE" >"$WORK/wrk.out"
  if grep -q "Non-2xx" "$WORK/wrk.out"; then cat "$WORK/wrk.out" >&2; tail -20 "$WORK/server.log" >&2; exit 1; fi
  local rps p50 p99
  rps=$(awk '/Requests\/sec/ {print $2}' "$WORK/wrk.out")
  ms() { awk -v q="$1" '$1==q {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; print v}' "$WORK/wrk.out"; }
  p50=$(ms 50%); p99=$(ms 99%)
  echo "$(awk -v r="$rps" -v b="$BENCH_BATCH" 'BEGIN {printf "%.0f", r*b}') $p50 $p99"
}

stop_server() { kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=""; }

echo "ceiling: plain SQLite client, transactions of $BENCH_BATCH rows..."
CEILING=$(python3 bench/sqlite_ceiling.py 200000 "$BENCH_BATCH")

echo "SQLite server..."
start_and_seed "sqlite://$WORK/bench.db?mode=rwc"
read -r S_MPS S_P50 S_P99 < <(load)
S_RSS=$(awk '/VmHWM/ {print $2}' "/proc/$SERVER/status")
RSS_SAMPLES=$(tr '\n' ' ' <"$WORK/rss.log")
S_ALERTS=$(curl -fs "$BASE/V2/1000/alerts?pageSize=1000" -H "$AUTH" | grep -o '"AlertId"' | wc -l || true)
stop_server

P_LINE=""
if psql -h 127.0.0.1 -U postgres -d test -Atc 'SELECT 1' >/dev/null 2>&1; then
  DB="safetrack_bench_$$"
  psql -h 127.0.0.1 -U postgres -d test -qc "CREATE DATABASE $DB"
  echo "PostgreSQL server..."
  start_and_seed "postgres://postgres@127.0.0.1:5432/$DB"
  read -r P_MPS P_P50 P_P99 < <(load)
  P_RSS=$(awk '/VmHWM/ {print $2}' "/proc/$SERVER/status")
  stop_server
  psql -h 127.0.0.1 -U postgres -d test -qc "DROP DATABASE $DB WITH (FORCE)"
  P_LINE="| PostgreSQL server | $P_MPS | $P_P50 | $P_P99 | — | $((P_RSS / 1024)) MB |"
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a/b}'; }
{
  echo "| run | messages/s | p50 POST (ms) | p99 POST (ms) | vs ceiling | peak RSS |"
  echo "|---|---:|---:|---:|---:|---:|"
  echo "| ceiling: plain SQLite client, no server | $CEILING | — | — | 1.00 | — |"
  echo "| SQLite server | $S_MPS | $S_P50 | $S_P99 | $(ratio "$S_MPS" "$CEILING") | $((S_RSS / 1024)) MB |"
  [ -n "$P_LINE" ] && echo "$P_LINE"
  echo
  echo "$BENCH_DEVICES devices, batches of $BENCH_BATCH, $CONNECTIONS connections, ${DURATION} s, 20 geofences, 10 notifications; $(nproc) cores, $(date -u +%Y-%m-%d)."
  [ "$RSS_SAMPLE" -gt 0 ] && echo "SQLite server RSS every 10 s (kB): $RSS_SAMPLES"
} | tee "$WORK/result.md"
mkdir -p bench/results && cp "$WORK/result.md" bench/results/ingest-latest.md

#!/usr/bin/env bash
# Reports benchmark (issue 10). Seeds a fresh SQLite database with DEVICES devices (through
# the API) and MESSAGES positions per device (straight into the database with
# bench/reports_seed.py, with the server stopped: far quicker than posting them, and the
# report path reads the same rows), then times, with the server up,
#   DevicesOverviewReport   (device state only)
#   AssetUtilisationReport  (every device's track in the window)
#   DriverBehaviourReport   (the same tracks through the violation detector)
# RUNS times each and prints the median, with the server's RSS before and after and its
# peak. Then the same on PostgreSQL when one answers on 127.0.0.1:5432 (a fresh database,
# the messages loaded with COPY, dropped afterwards). Rerunnable:
#   bench/reports.sh [devices] [messages_per_device] [runs]
# Defaults: 1000 devices × 1000 messages (1M messages), 5 runs. The issue's overview
# target is stated for 10M stored messages: bench/reports.sh 1000 10000.
# Set BENCH_NO_BUILD=1 to use the release binary already built (BENCH_BIN: another binary).
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICES="${1:-1000}"
MESSAGES="${2:-1000}"
RUNS="${3:-5}"
PORT="${BENCH_PORT:-18091}"
BASE="http://127.0.0.1:$PORT"
ADMIN=bench-admin@example.com
PASS=bench-password-1
AUTH="Authorization: Basic $(printf '%s:%s' "$ADMIN" "$PASS" | base64 -w0)"

BIN="${BENCH_BIN:-./target/release/safetrack}"
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --quiet
WORK=$(mktemp -d)
DB="$WORK/bench.db"
SERVER=""
cleanup() {
  [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null
  [ -n "${PG_DB:-}" ] && psql -h 127.0.0.1 -U postgres -d test -qc "DROP DATABASE IF EXISTS $PG_DB WITH (FORCE)" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

URL=""
start() {
  RUST_LOG=warn "$BIN" serve --listen "127.0.0.1:$PORT" \
    --database-url "$URL" --admin-email "$ADMIN" --admin-password "$PASS" \
    >>"$WORK/server.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 200); do curl -fs "$BASE/healthz" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "server did not start" >&2; cat "$WORK/server.log" >&2; exit 1
}
stop() { kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=""; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$SERVER/status"; }
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$SERVER/status"; }

psql_q() { psql -h 127.0.0.1 -U postgres -Atq "$@"; }

# seed_messages: the messages straight into the stopped server's database.
seed_messages() {
  case "$URL" in
    sqlite:*) python3 bench/reports_seed.py "$DB" "$DEVICES" "$MESSAGES" ;;
    *)
      local db=${URL##*/}
      python3 bench/reports_seed.py - "$DEVICES" "$MESSAGES" | psql_q -d "$db" -c \
        "COPY mo_messages (tenant_code, device_id, sequence_number, sent_at, received_at,
           message_time, message_type, latitude, longitude, speed, heading, doc, etag)
         FROM STDIN WITH (FORMAT csv)"
      # Each device's state: its last report (what the SQLite seeder sets row by row).
      psql_q -d "$db" -c "UPDATE device_states s SET last_message_time = m.message_time,
          last_message_id = m.id, latitude = m.latitude, longitude = m.longitude,
          speed = m.speed, battery = 80
        FROM (SELECT DISTINCT ON (device_id) device_id, id, message_time, latitude, longitude,
                speed FROM mo_messages ORDER BY device_id, message_time DESC) m
        WHERE s.device_id = m.device_id" -c "ANALYZE"
      ;;
  esac
}

# bench_backend LABEL: seeds $URL and times the reports on it.
bench_backend() {
  echo "== $1: seeding $DEVICES devices"
  start
  seq 0 $((DEVICES - 1)) | xargs -P 4 -I{} curl -fs -o /dev/null -X POST "$BASE/V2/1000/devices" \
    -H "$AUTH" -H 'content-type: application/json' \
    -d '{"DeviceId":"bench-{}","DeviceType":"InReach","FriendlyName":"Bench {}","Tags":{"VehicleType":"Van"}}'
  stop
  echo "seeding $MESSAGES messages per device ($((DEVICES * MESSAGES)) in all)"
  local seed_start seed_end
  seed_start=$(date +%s.%N)
  seed_messages
  seed_end=$(date +%s.%N)
  printf 'seeded in %.1f s\n' "$(echo "$seed_end - $seed_start" | bc)"
  start
  # Warm the caches (tenant, credentials) and the page cache once.
  curl -fs -o /dev/null -H "$AUTH" "$BASE/V2/1000/reports"

  local rss_before rss_after report name median rows
  rss_before=$(rss_kb)
  printf '\n| %s report | rows | median (s) of %d |\n|---|---:|---:|\n' "$1" "$RUNS"
  for report in "DevicesOverviewReport|$WINDOW" "AssetUtilisationReport|$WINDOW" \
    "DriverBehaviourReport|$WINDOW&GroupBy=Vehicle" "DriverBehaviourViolationReport|$WINDOW"; do
    name=${report%%|*}
    read -r median rows < <(time_report "$name" "${report#*|}")
    printf '| %s | %s | %s |\n' "$name" "$rows" "$median"
  done
  rss_after=$(rss_kb)
  printf '\nserver RSS: %d MB before the reports, %d MB after, peak %d MB\n\n' \
    $((rss_before / 1024)) $((rss_after / 1024)) $(($(hwm_kb) / 1024))
  stop
}

WINDOW="DateFrom=2026-03-01T00:00:00Z&DateTo=2026-04-01T00:00:00Z"
time_report() { # name query -> median seconds, rows
  local name=$1 query=$2 times=() rows
  for _ in $(seq "$RUNS"); do
    times+=("$(curl -fs -o "$WORK/out.json" -w '%{time_total}' -H "$AUTH" "$BASE/V2/1000/reports/$name?$query")")
  done
  rows=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$WORK/out.json")
  median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "$median $rows"
}

URL="sqlite://$DB?mode=rwc"
bench_backend SQLite
if psql_q -d test -c 'SELECT 1' >/dev/null 2>&1; then
  PG_DB="safetrack_bench_reports_$$"
  psql_q -d test -c "DROP DATABASE IF EXISTS $PG_DB WITH (FORCE)" -c "CREATE DATABASE $PG_DB" 2>/dev/null
  URL="postgres://postgres@127.0.0.1:5432/$PG_DB"
  bench_backend PostgreSQL
  psql_q -d test -c "DROP DATABASE IF EXISTS $PG_DB WITH (FORCE)"
fi

#!/usr/bin/env bash
# Device gateways (issue 35), SQLite, release build. 1,000 devices (DeviceType InReach,
# IridiumImei 300434000000000 + n), the ingest scenario's 20 geofences and 10
# notifications, one API token with DeviceMessages for every gateway:
#   - OsmAnd / Traccar Client, one position per request (bench/osmand.lua: GET with the
#     query string, token in the path) against POST /V2/1000/devices/{id}/momessages
#     with one message per request (bench/ingest.lua, batches of 1, the same token as
#     Bearer), and Traccar's JSON position forwarding, one position per request
#     (bench/traccar.lua: POST /gateways/traccar, the token as Bearer), ROUNDS rounds in
#     rotating order (A B C, B C A, C A B, …), medians and their ratios to momessages;
#   - Garmin IPC Outbound posts of 100 events of 100 devices (bench/garmin.lua);
#   - Iridium SBD DirectIP, one message per connection (bench/directip_load.py).
# Every run starts from a copy of the same seeded database; afterwards the stored MO
# messages are counted in it and compared with the reports answered 200 (or confirmed):
# fewer stored fails the script; more by at most what was in flight when the load
# stopped (connections, plus timeouts) is expected.
#   bench/gateways.sh [seconds] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${1:-20}"
ROUNDS="${2:-3}"
PORT="${BENCH_PORT:-18090}"
DIRECTIP_PORT="${BENCH_DIRECTIP_PORT:-18091}"
BASE="http://127.0.0.1:$PORT"
HTTP_CONNECTIONS=32
GARMIN_CONNECTIONS=8
DIRECTIP_CONCURRENCY=8
DIRECTIP_PROCESSES=2
source bench/lib.sh
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --quiet

echo "seeding..."
SEED="$WORK/seed"
mkdir -p "$SEED"
start_server "$PORT" "sqlite://$SEED/bench.db?mode=rwc"
BENCH_DEVICES=0 seed_ingest
for d in $(seq 0 $((BENCH_DEVICES - 1))); do
  printf '{"DeviceId":"bench-%d","DeviceType":"InReach","IridiumImei":"%015d"}\n' "$d" $((300434000000000 + d))
done | xargs -d '\n' -P 4 -I{} curl -fs -o /dev/null -X POST "$BASE/V2/1000/devices" -H "$AUTH" -H 'content-type: application/json' -d '{}'
TOKEN=$(curl -fs -X POST "$BASE/V2/1000/apitokens" -H "$AUTH" -H 'content-type: application/json' \
  -d '{"Name":"bench-gateways","Permissions":["DeviceMessages","Read"]}' | sed -E 's/.*"Token":"([^"]+)".*/\1/')
export BENCH_TOKEN="$TOKEN"
stop_servers

# fresh_run: a copy of the seeded database, served with the DirectIP listener on.
fresh_run() {
  rm -rf "$WORK/run" && cp -a "$SEED" "$WORK/run"
  start_server "$PORT" "sqlite://$WORK/run/bench.db?mode=rwc" \
    --directip-listen "127.0.0.1:$DIRECTIP_PORT" --directip-token "$TOKEN"
}

# stored: MO messages in the run's database (the server stopped).
stored() {
  python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM mo_messages").fetchone()[0])' "$WORK/run/bench.db"
}

# check_count WHAT ANSWERED STORED SLACK: fails when fewer were stored than answered, or
# more than ANSWERED + SLACK.
check_count() {
  local what=$1 answered=$2 stored=$3 slack=$4
  if [ "$stored" -lt "$answered" ] || [ "$stored" -gt $((answered + slack)) ]; then
    echo "COUNT MISMATCH ($what): $answered answered, $stored stored (at most $slack more expected)" >&2
    exit 1
  fi
  echo "  $what: $answered answered, $stored stored"
}

loadavg() { cut -d' ' -f1 /proc/loadavg; }

# http_side NAME: one run of the OsmAnd, Traccar or momessages side; appends "rps p99" to
# $WORK/NAME.
http_side() {
  local name=$1 rps p50 p99 answered unanswered count before after
  fresh_run
  before=$(loadavg)
  if [ "$name" = osmand ]; then
    read -r rps p50 p99 answered unanswered < <(wrk_run "$DURATION" "$HTTP_CONNECTIONS" bench/osmand.lua)
  elif [ "$name" = traccar ]; then
    read -r rps p50 p99 answered unanswered < <(wrk_run "$DURATION" "$HTTP_CONNECTIONS" bench/traccar.lua \
      -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json')
  else
    read -r rps p50 p99 answered unanswered < <(BENCH_BATCH=1 wrk_run "$DURATION" "$HTTP_CONNECTIONS" bench/ingest.lua \
      -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json')
  fi
  after=$(loadavg)
  stop_servers
  count=$(stored)
  echo "  $name: $rps req/s, p50 $p50 ms, p99 $p99 ms (load average $before → $after)"
  check_count "$name" "$answered" "$count" $((HTTP_CONNECTIONS + unanswered))
  echo "$rps $p99 $before $after" >>"$WORK/$name"
}

for round in $(seq "$ROUNDS"); do
  echo "round $round"
  case $((round % 3)) in
    1) http_side osmand; http_side traccar; http_side momessages ;;
    2) http_side traccar; http_side momessages; http_side osmand ;;
    0) http_side momessages; http_side osmand; http_side traccar ;;
  esac
done

echo "Garmin IPC Outbound, posts of 100 events..."
fresh_run
G_LOAD=$(loadavg)
read -r G_RPS G_P50 G_P99 G_ANSWERED G_UNANSWERED < <(BENCH_GARMIN_EVENTS=100 wrk_run "$DURATION" "$GARMIN_CONNECTIONS" bench/garmin.lua \
  -H "X-Outbound-Auth-Token: $TOKEN" -H 'content-type: application/json')
G_LOAD="$G_LOAD → $(loadavg)"
stop_servers
check_count garmin-events $((G_ANSWERED * 100)) "$(stored)" $(((GARMIN_CONNECTIONS + G_UNANSWERED) * 100))

echo "DirectIP, one message per connection..."
fresh_run
D_LOAD=$(loadavg)
read -r D_CPS D_P50 D_P99 D_ACCEPTED D_REFUSED D_FAILED < <(python3 bench/directip_load.py 127.0.0.1 "$DIRECTIP_PORT" "$DURATION" \
  "$DIRECTIP_CONCURRENCY" "$DIRECTIP_PROCESSES" "$BENCH_DEVICES")
D_LOAD="$D_LOAD → $(loadavg)"
stop_servers
if [ "$D_REFUSED" -ne 0 ] || [ "$D_FAILED" -ne 0 ]; then
  echo "DirectIP: $D_REFUSED refused, $D_FAILED without a confirmation" >&2
  exit 1
fi
check_count directip "$D_ACCEPTED" "$(stored)" 0

O_RPS=$(awk '{print $1}' "$WORK/osmand" | median)
O_P99=$(awk '{print $2}' "$WORK/osmand" | median)
T_RPS=$(awk '{print $1}' "$WORK/traccar" | median)
T_P99=$(awk '{print $2}' "$WORK/traccar" | median)
M_RPS=$(awk '{print $1}' "$WORK/momessages" | median)
M_P99=$(awk '{print $2}' "$WORK/momessages" | median)
{
  echo "| run | requests/s (median of $ROUNDS) | p99 (ms) | runs: requests/s (load average before → after) |"
  echo "|---|---:|---:|---|"
  echo "| POST …/momessages, one message per request | $M_RPS | $M_P99 | $(awk '{printf "%s (%s → %s); ", $1, $3, $4}' "$WORK/momessages") |"
  echo "| OsmAnd GET /gateways/osmand/{token}, one report per request | $O_RPS | $O_P99 | $(awk '{printf "%s (%s → %s); ", $1, $3, $4}' "$WORK/osmand") |"
  echo "| Traccar POST /gateways/traccar, one forwarded position per request | $T_RPS | $T_P99 | $(awk '{printf "%s (%s → %s); ", $1, $3, $4}' "$WORK/traccar") |"
  echo
  echo "OsmAnd / momessages: $(ratio "$O_RPS" "$M_RPS") (target ≥ 0.8); Traccar / momessages: $(ratio "$T_RPS" "$M_RPS")."
  echo "Garmin IPC Outbound, posts of 100 events ($GARMIN_CONNECTIONS connections): $((G_ANSWERED * 100 / ${DURATION%.*})) events/s ($G_RPS posts/s), p50 $G_P50 ms, p99 $G_P99 ms per post (load average $G_LOAD)."
  echo "DirectIP, one message per connection ($((DIRECTIP_CONCURRENCY * DIRECTIP_PROCESSES)) at once): $D_CPS connections/s, p50 $D_P50 ms, p99 $D_P99 ms connect to close, $D_ACCEPTED confirmed (load average $D_LOAD)."
  echo "Every answered report stored (counted in the database after each run)."
  echo
  echo "$BENCH_DEVICES devices, 20 geofences, 10 notifications, SQLite, $HTTP_CONNECTIONS connections (HTTP), ${DURATION} s per run; $(nproc) cores, $(date -u +%Y-%m-%d)."
} | tee "$WORK/result.md"
mkdir -p bench/results && cp "$WORK/result.md" bench/results/gateways-latest.md

# Shared by the bench/*.sh scripts (sourced, not run): starting a release
# server, seeding the ingest scenario and driving it with wrk. BENCH_BIN: the server binary
# to run (default the release build; for A/B runs of two builds, with BENCH_NO_BUILD=1).
ADMIN=bench-admin@example.com
PASS=bench-password-1
AUTH="Authorization: Basic $(printf '%s:%s' "$ADMIN" "$PASS" | base64 -w0)"
CONNECTIONS=8
BIN="${BENCH_BIN:-./target/release/safetrack}"
export BENCH_DEVICES="${BENCH_DEVICES:-1000}" BENCH_BATCH="${BENCH_BATCH:-100}"

if ! command -v wrk >/dev/null 2>&1; then
  echo "installing wrk (Debian package)"
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi
WORK=$(mktemp -d)
SERVERS=()
cleanup_bench() {
  for pid in "${SERVERS[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -n "${RECEIVER:-}" ] && kill "$RECEIVER" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup_bench EXIT

post() { curl -fs -o /dev/null -X POST "$BASE$1" -H "$AUTH" -H 'content-type: application/json' -d "$2"; }

# start_server PORT DATABASE_URL [serve flags...]: starts a release server in the
# background (its pid appended to SERVERS and left in SERVER) and waits for /healthz.
start_server() {
  local port=$1 url=$2
  shift 2
  if curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then
    echo "something already answers on port $port (a server left from another run?)" >&2
    exit 1
  fi
  RUST_LOG=warn "$BIN" serve --listen "127.0.0.1:$port" --database-url "$url" \
    --admin-email "$ADMIN" --admin-password "$PASS" "$@" >>"$WORK/server-$port.log" 2>&1 &
  SERVER=$!
  SERVERS+=("$SERVER")
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "server on $port did not start" >&2
  tail -20 "$WORK/server-$port.log" >&2
  exit 1
}

stop_servers() {
  for pid in "${SERVERS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  SERVERS=()
  SERVER=""
}

have_postgres() { psql -h 127.0.0.1 -U postgres -d test -Atc 'SELECT 1' >/dev/null 2>&1; }

# A fresh PostgreSQL database for one run (prints its URL), or nothing when none answers.
fresh_postgres() {
  have_postgres || return 0
  local db="safetrack_bench_$$_$1"
  psql -h 127.0.0.1 -U postgres -d test -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" 2>/dev/null
  psql -h 127.0.0.1 -U postgres -d test -qc "CREATE DATABASE $db"
  echo "postgres://postgres@127.0.0.1:5432/$db"
}
drop_postgres() { psql -h 127.0.0.1 -U postgres -d test -qc "DROP DATABASE IF EXISTS ${1##*/} WITH (FORCE)"; }

# The ingest scenario on $BASE: 20 geofences, 10 notifications, $BENCH_DEVICES devices.
seed_ingest() {
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

# load SECONDS [RSS_LOG]: wrk against $BASE; prints "messages_per_second p50_ms p99_ms".
# With RSS_LOG, the server's RSS is appended to it every 10 s.
load() {
  local seconds=$1 rss_log=${2:-}
  if [ -n "$rss_log" ]; then
    ( while kill -0 "$SERVER" 2>/dev/null; do awk '/VmRSS/ {print $2}' "/proc/$SERVER/status" >>"$rss_log"; sleep 10; done ) &
  fi
  wrk -t2 -c"$CONNECTIONS" -d"${seconds}s" --latency -H "$AUTH" -H 'content-type: application/json' \
    -s bench/ingest.lua "$BASE" >"$WORK/wrk.out"
  if grep -q "Non-2xx" "$WORK/wrk.out"; then cat "$WORK/wrk.out" >&2; tail -20 "$WORK"/server-*.log >&2; exit 1; fi
  local rps p50 p99
  rps=$(awk '/Requests\/sec/ {print $2}' "$WORK/wrk.out")
  ms() { awk -v q="$1" '$1==q {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; print v}' "$WORK/wrk.out"; }
  p50=$(ms 50%); p99=$(ms 99%)
  echo "$(awk -v r="$rps" -v b="$BENCH_BATCH" 'BEGIN {printf "%.0f", r*b}') $p50 $p99"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a/b}'; }

# wrk_run SECONDS CONNECTIONS SCRIPT [wrk args...]: wrk (2 threads) with a Lua script
# against $BASE; prints "requests_per_second p50_ms p99_ms answered unanswered": answered
# within the run, and socket errors (timeouts: such a request may still have been
# stored). A non-2xx answer fails the run.
wrk_run() {
  local seconds=$1 connections=$2 script=$3
  shift 3
  wrk -t2 -c"$connections" -d"${seconds}s" --latency "$@" -s "$script" "$BASE" >"$WORK/wrk.out"
  if grep -q "Non-2xx" "$WORK/wrk.out"; then cat "$WORK/wrk.out" >&2; tail -20 "$WORK"/server-*.log >&2; exit 1; fi
  ms() { awk -v q="$1" '$1==q {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; print v}' "$WORK/wrk.out"; }
  echo "$(awk '/Requests\/sec/ {printf "%.0f", $2}' "$WORK/wrk.out") $(ms 50%) $(ms 99%) $(awk '/requests in/ {print $1}' "$WORK/wrk.out") $(awk '/Socket errors/ {gsub(/,/, ""); print $4 + $6 + $8 + $10; f=1} END {if (!f) print 0}' "$WORK/wrk.out")"
}

median() { sort -g | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

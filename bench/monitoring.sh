#!/usr/bin/env bash
# Monitoring sessions beside ingest (issue 45): 10,000 devices each with a current session
# checking in every minute (CheckInIntervalMinutes 1, GraceMinutes 0, ReminderMinutes 0:
# the only reminder an interval of 1 allows), on SQLite, in one server process:
#
#   A  no sessions: the server's CPU idle, then the ingest load (bench/ingest.lua: 1,000 of
#      the devices, batches of 100, 8 connections; 20 geofences, 10 notifications, one of
#      them on MissedCheckIn) for A_SECONDS;
#   B  10,000 sessions started through the API (parallel POSTs, timed), each checked in
#      through the API once every CHECKIN_PERIOD seconds (default 90; the devices spread
#      evenly over it), so every session's MissedCheckIn falls due 60 s after each
#      check-in and fires 30 s before the next one: 10,000 × 60 / 90 ≈ 111 timers and 111
#      check-ins a second. After a warm-up, the server's CPU with the sessions and no
#      ingest, then the same ingest load for B_SECONDS; then every session's history
#      lines are read back (`GET /V2/1000/monitoring/{id}/events`): the lateness of each
#      fired timer is Detail.FiredAt − At; then the sessions are ended (timed).
#
# Rounds alternate the order (A B, B A, …) so a drift of the machine's speed, or the
# database's growth, does not lean on one side. CPU: utime + stime of the server process
# from /proc/<pid>/stat over the window, as % of one core. Prints a table and writes it to
# bench/results/monitoring-latest.md (not committed).
#   bench/monitoring.sh [A_SECONDS] [B_SECONDS] [ROUNDS]
# MONITORING_SESSIONS (10000), CHECKIN_PERIOD (90; 0: no check-ins), WARM_SECONDS (70),
# QUIET_SECONDS (60; 0: no CPU window without ingest), CHECKIN_VIA (api: POST
# …/monitoring/checkins, each its own audited transaction; messages: the device's MO
# CheckIn, one message a POST to …/momessages?process=true, riding ingest's group commit —
# the scenario's notification on CheckIn, which would raise an alert on each, is deleted
# first, so both ways do the same work apart from the path).
set -euo pipefail
cd "$(dirname "$0")/.."
A_SECONDS="${1:-120}"
B_SECONDS="${2:-180}"
ROUNDS="${3:-2}"
SESSIONS="${MONITORING_SESSIONS:-10000}"
PERIOD="${CHECKIN_PERIOD:-90}"
VIA="${CHECKIN_VIA:-api}"
case "$VIA" in api | messages) ;; *) echo "CHECKIN_VIA is api or messages" >&2; exit 1 ;; esac
WARM="${WARM_SECONDS:-70}"
QUIET="${QUIET_SECONDS:-60}"
SETTINGS='{"DurationMinutes":480,"CheckInIntervalMinutes":1,"GraceMinutes":0,"ReminderMinutes":0,"Note":"bench"}'
PORT="${BENCH_PORT:-18090}"
BASE="http://127.0.0.1:$PORT"
source bench/lib.sh
# The commit the server was built from, taken before the build (HEAD may move during a
# run in a shared checkout); BENCH_COMMIT names it for a BENCH_BIN built elsewhere.
COMMIT="${BENCH_COMMIT:-$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src Cargo.toml Cargo.lock migrations 2>/dev/null || echo '+uncommitted changes')}"
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --quiet
HZ=$(getconf CLK_TCK)

api() { python3 bench/monitoring_run.py "$1" "$BASE" "$ADMIN" "$PASS" "${@:2}"; }
ticks() { awk '{print $14 + $15}' "/proc/$SERVER/stat"; }
now() { date +%s.%N; }
loadavg() { cut -d' ' -f1 /proc/loadavg; }
# cpu_pct TICKS_BEFORE TICKS_AFTER FROM TO: % of one core.
cpu_pct() { awk -v a="$1" -v b="$2" -v f="$3" -v t="$4" -v hz="$HZ" 'BEGIN {printf "%.1f", 100 * (b - a) / hz / (t - f)}'; }

# quiet SECONDS: the server's CPU (% of one core) with no load from us.
quiet() {
  local c0 c1 f t
  c0=$(ticks); f=$(now); sleep "$1"; t=$(now); c1=$(ticks)
  cpu_pct "$c0" "$c1" "$f" "$t"
}

# ingest SECONDS: "messages/s p50 p99 cpu% from to load_before load_after".
ingest() {
  local c0 c1 f t l0 mps p50 p99
  l0=$(loadavg); c0=$(ticks); f=$(now)
  read -r mps p50 p99 < <(load "$1")
  [ -n "$mps" ] || exit 1
  t=$(now); c1=$(ticks)
  echo "$mps $p50 $p99 $(cpu_pct "$c0" "$c1" "$f" "$t") $f $t $l0 $(loadavg)"
}

start_server "$PORT" "sqlite://$WORK/monitoring.db?mode=rwc"
BENCH_DEVICES=0 seed_ingest
if [ "$VIA" = messages ]; then echo "CheckIn notifications deleted: $(api drop-checkin-rule)"; fi
t0=$(now)
api devices "$SESSIONS"
DEVICES_SECONDS=$(awk -v a="$t0" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}')
echo "$SESSIONS devices created in $DEVICES_SECONDS s"

ROWS=()
run_a() {
  local idle line
  idle=$(quiet 20)
  line=$(ingest "$A_SECONDS")
  echo "A round $1: idle cpu $idle %, ingest $line"
  ROWS+=("A $1 $idle $line")
}

run_b() {
  local setup driver quiet_cpu line late teardown checkins
  setup=$(api start "$SESSIONS" "$WORK/ids" "$SETTINGS")
  echo "B round $1: $SESSIONS sessions started in $setup s"
  # Not through api(): the TERM below must reach python, not a subshell.
  # CHECKIN_PERIOD=0: nobody checks in; each session's one MissedCheckIn falls due 60 s
  # after its start, all 10,000 within the set-up's seconds (the worker's drain rate).
  if [ "$PERIOD" != 0 ]; then
    python3 bench/monitoring_run.py checkins "$BASE" "$ADMIN" "$PASS" "$SESSIONS" "$PERIOD" "$VIA" >"$WORK/checkins.out" &
    driver=$!
  fi
  sleep "$WARM"
  if [ "$QUIET" != 0 ]; then quiet_cpu=$(quiet "$QUIET"); else quiet_cpu="—"; fi
  line=$(ingest "$B_SECONDS")
  checkins="0 0"
  if [ "$PERIOD" != 0 ]; then
    kill -TERM "$driver"
    wait "$driver"
    checkins=$(cat "$WORK/checkins.out")
  fi
  read -r _ _ _ _ from to _ _ <<<"$line"
  late=$(api lateness "$WORK/ids" "$from-$to")
  teardown=$(api end "$SESSIONS")
  echo "B round $1: sessions-only cpu $quiet_cpu %, ingest $line"
  echo "B round $1: check-ins sent / sent > 1 s late: $checkins; ended in $teardown s"
  echo "B round $1: lateness $late"
  ROWS+=("B $1 $quiet_cpu $line")
  LATE+=("$1 $setup $teardown $checkins $late")
}
LATE=()

for round in $(seq "$ROUNDS"); do
  if [ $((round % 2)) -eq 1 ]; then run_a "$round"; run_b "$round"; else run_b "$round"; run_a "$round"; fi
done
stop_servers

{
  echo "| round | run | messages/s | p50 POST (ms) | p99 POST (ms) | server CPU, ingest (% of a core) | server CPU, no ingest | load avg (before → after) | vs A of the round |"
  echo "|---|---|---:|---:|---:|---:|---:|---|---:|"
  for round in $(seq "$ROUNDS"); do
    a=$(printf '%s\n' "${ROWS[@]}" | awk -v r="$round" '$1=="A" && $2==r {print $4}')
    for kind in A B; do
      printf '%s\n' "${ROWS[@]}" | awk -v r="$round" -v k="$kind" -v a="$a" -v n="$SESSIONS" '$1==k && $2==r {
        printf "| %s | %s | %d | %s | %s | %s | %s | %s → %s | %.2f |\n", r, (k=="A" ? "A: no sessions" : "B: " n " sessions"), $4, $5, $6, $7, $3 " (" (k=="A" ? "idle" : "sessions") ")", $10, $11, $4 / a }'
    done
  done
  echo
  for entry in "${LATE[@]}"; do
    read -r round setup teardown sent behind json <<<"$entry"
    echo "Round $round: $SESSIONS sessions started in $setup s, ended in $teardown s; $sent check-ins sent ($behind more than 1 s after their slot); history: $json"
  done
  echo
  echo "$SESSIONS sessions (CheckInIntervalMinutes 1, GraceMinutes 0, ReminderMinutes 0), check-ins every $PERIOD s (via $VIA); ingest: 1,000 devices, batches of $BENCH_BATCH, $CONNECTIONS connections; A ${A_SECONDS} s, B ${B_SECONDS} s; $(nproc) cores; $(date -u +%Y-%m-%d); server built from $COMMIT."
} | tee "$WORK/result.md"
mkdir -p bench/results && cp "$WORK/result.md" bench/results/monitoring-latest.md

#!/usr/bin/env bash
# Password-guessing bursts (issue 30): ROUNDS rounds of PARALLEL wrong logins at once
# (half for unknown usernames, half wrong passwords of one real user, each a different
# credential so none waits for another's check), against a server with
# --max-concurrent-password-checks CAP (0: one per core). Reports the answers (401 / 429),
# the server's peak RSS against its RSS before, and GET /healthz latency during the
# bursts against before. Rerunnable:
#   bench/logins.sh            (BENCH_BIN=path to run another build; default release)
#   PARALLEL=50 ROUNDS=10 CAP=0 bench/logins.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PARALLEL="${PARALLEL:-50}"
ROUNDS="${ROUNDS:-10}"
CAP="${CAP:-0}"
PORT="${BENCH_PORT:-18090}"
BASE="http://127.0.0.1:$PORT"
ADMIN=bench-admin@example.com
PASS=bench-password-1
BIN="${BENCH_BIN:-./target/release/safetrack}"
[ -n "${BENCH_BIN:-}" ] || cargo build --release --quiet

DATA=$(mktemp -d)
RUST_LOG=warn "$BIN" serve --listen "127.0.0.1:$PORT" --data-dir "$DATA" \
  --admin-email "$ADMIN" --admin-password "$PASS" \
  --max-concurrent-password-checks "$CAP" >"$DATA/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$DATA"' EXIT
for _ in $(seq 100); do curl -fs "$BASE/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
AUTH="Authorization: Basic $(printf '%s:%s' "$ADMIN" "$PASS" | base64 -w0)"
curl -fs -o /dev/null -X POST "$BASE/V2/1000/users" -H "$AUTH" -H 'content-type: application/json' \
  -d '{"Username":"target@example.com","Password":"target-password-1"}'

rss_mb() { awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$SERVER/status"; }
# Milliseconds of N sequential GET /healthz, one a line.
healthz_ms() {
  for _ in $(seq "$1"); do
    curl -s -o /dev/null -w '%{time_total}\n' "$BASE/healthz" | awk '{printf "%.1f\n", $1 * 1000}'
    sleep 0.02
  done
}
summary() { sort -n | awk '{v[NR] = $1} END {printf "median %s ms, max %s ms (%d samples)", v[int((NR + 1) / 2)], v[NR], NR}'; }

BEFORE_RSS=$(rss_mb)
BEFORE_HEALTH=$(healthz_ms 20 | summary)

# Peak RSS, sampled every 20 ms while the bursts run.
( peak=0; while kill -0 "$SERVER" 2>/dev/null && [ ! -e "$DATA/done" ]; do
    r=$(rss_mb); [ "$r" -gt "$peak" ] && peak=$r; echo "$peak" >"$DATA/peak"; sleep 0.02
  done ) &
SAMPLER=$!
healthz_ms 1000000 >"$DATA/health-during" 2>/dev/null &
PROBE=$!

START=$(date +%s.%N)
for round in $(seq "$ROUNDS"); do
  for i in $(seq "$PARALLEL"); do
    if [ $((i % 2)) -eq 0 ]; then user="nobody-$round-$i@example.com"; else user=target@example.com; fi
    echo "$user:wrong-password-$round-$i"
  done | xargs -P "$PARALLEL" -I{} curl -s -o /dev/null -w '%{http_code}\n' -u {} "$BASE/V2/1000" \
    >>"$DATA/codes"
done
END=$(date +%s.%N)
kill "$PROBE" 2>/dev/null || true
touch "$DATA/done"; wait "$SAMPLER" 2>/dev/null || true

echo "bursts: $ROUNDS x $PARALLEL wrong logins, cap $CAP ($(nproc) cores), $(awk -v a="$START" -v b="$END" 'BEGIN {printf "%.1f", b - a}') s"
echo "answers: $(sort "$DATA/codes" | uniq -c | awk '{printf "%s x %s  ", $2, $1}')"
echo "RSS: before $BEFORE_RSS MB, peak during $(cat "$DATA/peak") MB, after $(rss_mb) MB"
echo "/healthz before: $BEFORE_HEALTH"
echo "/healthz during: $(summary <"$DATA/health-during")"
echo "real user's stored FailedPasswordAttemptCount: $(curl -fs "$BASE/V2/1000/users/target@example.com" -H "$AUTH" | sed -E 's/.*"FailedPasswordAttemptCount":([0-9]+).*/\1/')"

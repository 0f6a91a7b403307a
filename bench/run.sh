#!/usr/bin/env bash
# Throughput/latency benchmark: starts the release server on a fresh SQLite database and
# measures, at 32 connections, authenticated GET /V2/{t}/users/{id} (HTTP Basic, an API
# token, a session cookie) and GET /V2/{t} against GET /healthz (the framework ceiling) in the same run. Rerunnable:
#   bench/run.sh [duration_seconds]
# Installs wrk from Debian packages when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${1:-15}"
CONNECTIONS=32
THREADS=2
PORT="${BENCH_PORT:-18080}"
BASE="http://127.0.0.1:$PORT"
ADMIN=bench-admin@example.com
PASS=bench-password-1

if ! command -v wrk >/dev/null 2>&1; then
  echo "installing wrk (Debian package)"
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi

cargo build --release --quiet
DATA=$(mktemp -d)
RUST_LOG=warn ./target/release/safetrack serve --listen "127.0.0.1:$PORT" --data-dir "$DATA" \
  --admin-email "$ADMIN" --admin-password "$PASS" >"$DATA/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$DATA"' EXIT
for _ in $(seq 100); do curl -fs "$BASE/healthz" >/dev/null 2>&1 && break; sleep 0.1; done

AUTH="Authorization: Basic $(printf '%s:%s' "$ADMIN" "$PASS" | base64 -w0)"
curl -fs -o /dev/null -X POST "$BASE/V2/1000/users" -H "$AUTH" -H 'content-type: application/json' \
  -d '{"Username":"bench.user@example.com","Password":"bench-user-password","FirstName":"Bench"}'
USER_ID=$(curl -fs "$BASE/V2/1000/users/bench.user@example.com" -H "$AUTH" | sed -E 's/.*"UserId":"([0-9]+)".*/\1/')

# Prints "requests_per_second p99_ms" for one endpoint.
measure() {
  local url=$1; shift
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency "$@" "$url" >"$DATA/wrk.out"
  local rps p99
  rps=$(awk '/Requests\/sec/ {print $2}' "$DATA/wrk.out")
  p99=$(awk '$1=="99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; print v}' "$DATA/wrk.out")
  if grep -q "Non-2xx" "$DATA/wrk.out"; then echo "non-2xx responses for $url" >&2; cat "$DATA/wrk.out" >&2; exit 1; fi
  echo "$rps $p99"
}

# An API token (Bearer) and a browser session (cookie) of the same administrator.
new_token() {
  curl -fs -X POST "$BASE/V2/1000/apitokens" -H "$AUTH" -H 'content-type: application/json' \
    -d "{\"Name\":\"$1\",\"Permissions\":[\"Read\"]}" | sed -E 's/.*"Token":"([^"]+)".*/\1/'
}
BEARER="Authorization: Bearer $(new_token bench)"
SESSION_ID=$(curl -fs -D - -o /dev/null -X POST "$BASE/auth/session" -H 'content-type: application/json' \
  -d "{\"Username\":\"$ADMIN\",\"Password\":\"$PASS\"}" \
  | sed -nE 's/^set-cookie: safetrack_session=([^;]*);.*/\1/ip')
COOKIE="Cookie: safetrack_session=$SESSION_ID"

# Warm-up (fills the credential cache and the page cache).
wrk -t1 -c4 -d2s -H "$AUTH" "$BASE/V2/1000/users/$USER_ID" >/dev/null

# A cold token (its first use) against a warm Basic read: the median of 9 single requests.
single_ms() { curl -fs -o /dev/null -w '%{time_total}\n' "$@" | awk '{printf "%.3f\n", $1*1000}'; }
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
COLD_MS=$(for i in $(seq 9); do single_ms "$BASE/V2/1000/users/$USER_ID" -H "Authorization: Bearer $(new_token cold$i)"; done | median)
WARM_MS=$(for i in $(seq 9); do single_ms "$BASE/V2/1000/users/$USER_ID" -H "$AUTH"; done | median)

read -r H_RPS H_P99 < <(measure "$BASE/healthz")
read -r U_RPS U_P99 < <(measure "$BASE/V2/1000/users/$USER_ID" -H "$AUTH")
read -r T_RPS T_P99 < <(measure "$BASE/V2/1000" -H "$AUTH")
read -r B_RPS B_P99 < <(measure "$BASE/V2/1000/users/$USER_ID" -H "$BEARER")
read -r C_RPS C_P99 < <(measure "$BASE/V2/1000/users/$USER_ID" -H "$COOKIE")
RSS_KB=$(awk '/VmHWM/ {print $2}' "/proc/$SERVER/status")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.0f%%", 100*a/b}'; }
{
  echo "| endpoint | req/s | p99 (ms) | vs /healthz |"
  echo "|---|---:|---:|---:|"
  echo "| GET /healthz (baseline) | $H_RPS | $H_P99 | 100% |"
  echo "| GET /V2/1000/users/{id} (Basic auth) | $U_RPS | $U_P99 | $(ratio "$U_RPS" "$H_RPS") |"
  echo "| GET /V2/1000 (Basic auth) | $T_RPS | $T_P99 | $(ratio "$T_RPS" "$H_RPS") |"
  echo "| GET /V2/1000/users/{id} (API token) | $B_RPS | $B_P99 | $(ratio "$B_RPS" "$H_RPS") |"
  echo "| GET /V2/1000/users/{id} (session cookie) | $C_RPS | $C_P99 | $(ratio "$C_RPS" "$H_RPS") |"
  echo
  echo "One request alone (median of 9): a token's first use ${COLD_MS} ms, a warm Basic read ${WARM_MS} ms."
  echo
  echo "Peak server RSS: $((RSS_KB / 1024)) MB. ${CONNECTIONS} connections, ${THREADS} wrk threads, ${DURATION} s each, SQLite, $(nproc) cores, $(date -u +%Y-%m-%d)."
} | tee "$DATA/result.md"
mkdir -p bench/results && cp "$DATA/result.md" "bench/results/latest.md"

#!/usr/bin/env bash
# Itinerary listing benchmark (issue 9). Builds the release server, starts it on a fresh
# SQLite database, seeds 10,000 itineraries with 5 segments each (2 flights, 2 journeys,
# 1 hotel) and one traveler, owned by 100 users, then measures with wrk
#   GET /V2/1000/itineraries?startDate=…&endDate=…&byTravelerOnly=true
# as one user (a one-month window: about 8 itineraries, 40 segments), against /healthz
# in the same run. Rerunnable:
#   bench/itineraries.sh [duration_seconds]
#
# Seeding: users, one itinerary and a risk region go through the API; the 10,000
# itineraries are written with one SQL script (sqlite3) while the server is stopped —
# 60,000 API writes would take minutes of fsyncs (about 3 ms each here). The script then
# proves the seeded rows are what the API writes: it copies a seeded itinerary's segments
# through the API into a new itinerary and compares the two (see bench/README.md).
# Installs wrk from Debian packages when missing; needs curl, jq and sqlite3.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${1:-10}"
PORT="${BENCH_PORT:-18081}"
BASE="http://127.0.0.1:$PORT"
ADMIN=bench-admin@example.com
PASS=bench-password-1
USERS=100
ITINERARIES=10000

if ! command -v wrk >/dev/null 2>&1; then
  echo "installing wrk (Debian package)"
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi
for tool in curl jq sqlite3; do
  command -v "$tool" >/dev/null || { echo "$tool is required" >&2; exit 1; }
done

cargo build --release --quiet
DATA=$(mktemp -d)
SERVER=
start_server() {
  RUST_LOG=warn ./target/release/safetrack serve --listen "127.0.0.1:$PORT" --data-dir "$DATA" \
    --admin-email "$ADMIN" --admin-password "$PASS" >>"$DATA/server.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 100); do curl -fs "$BASE/healthz" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "server did not start" >&2; cat "$DATA/server.log" >&2; exit 1
}
stop_server() { kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; }
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$DATA"' EXIT

auth() { printf 'Authorization: Basic %s' "$(printf '%s:%s' "$1" "$2" | base64 -w0)"; }
ADMIN_AUTH=$(auth "$ADMIN" "$PASS")
api() { # method path [body]: fails on a non-2xx answer
  curl -fsS -X "$1" "$BASE$2" -H "$ADMIN_AUTH" -H 'content-type: application/json' ${3:+-d "$3"}
}

start_server
echo "creating $USERS users"
for i in $(seq 0 $((USERS - 1))); do
  api POST /V2/1000/users "{\"Username\":\"bench.user$i@example.com\",\"Password\":\"bench-user-password\",\"UserRoleId\":\"User\"}"
done
stop_server

echo "seeding $ITINERARIES itineraries x 5 segments (SQL)"
SEED_START=$(date +%s.%N)
sqlite3 "$DATA/safetrack.db" <<SQL
PRAGMA foreign_keys = ON;
BEGIN;
CREATE TEMP TABLE bench_users AS
  SELECT id, username, ROW_NUMBER() OVER (ORDER BY id) - 1 AS k FROM users
  WHERE username_key LIKE 'bench.user%';
-- Itinerary n belongs to user n % 100; each user's itineraries start every 3.65 days
-- through 2026 (staggered by 10 minutes per user) and last 2 days 7 hours.
CREATE TEMP TABLE plan AS
  WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $ITINERARIES - 1)
  SELECT i, u.id AS owner, u.username AS email,
         1767225600000000 + (i / $USERS) * 315360000000 + (i % $USERS) * 600000000 AS t0
  FROM n JOIN bench_users u ON u.k = i % $USERS;
INSERT INTO itineraries (tenant_code, owner_user_id, approval_state, pnr_key, overall_risk,
    doc, etag, created_at, updated_at)
  SELECT '1000', owner, i % 3, printf('PNR%05d', i), 0,
         json_object('PnrNumber', printf('PNR%05d', i), 'Notes', 'seeded'),
         lower(hex(randomblob(8))), t0, t0
  FROM plan ORDER BY i;
CREATE TEMP TABLE seeded AS
  SELECT p.*, it.id AS itinerary_id FROM plan p
  JOIN itineraries it ON it.pnr_key = printf('PNR%05d', p.i);
-- Segments: (kind, start, end, positions, document). Times are UTC; the zones are UTC,
-- so the local times equal them without the Z.
CREATE TEMP VIEW segment_plan AS
  SELECT itinerary_id, 0 AS n, 'flight' AS kind, t0 + 8 * 3600000000 AS s, t0 + 10 * 3600000000 AS e,
         51.47 AS lat1, -0.4543 AS lon1, 49.0097 AS lat2, 2.5479 AS lon2, email FROM seeded
  UNION ALL SELECT itinerary_id, 1, 'journey', t0 + 37800000000, t0 + 41400000000,
         49.0097, 2.5479, 48.8625, 2.3358, email FROM seeded
  UNION ALL SELECT itinerary_id, 2, 'hotel', t0 + 54000000000, t0 + 208800000000,
         48.8625, 2.3358, NULL, NULL, email FROM seeded
  UNION ALL SELECT itinerary_id, 3, 'journey', t0 + 210600000000, t0 + 214200000000,
         48.8625, 2.3358, 49.0097, 2.5479, email FROM seeded
  UNION ALL SELECT itinerary_id, 4, 'flight', t0 + 219600000000, t0 + 226800000000,
         49.0097, 2.5479, 51.47, -0.4543, email FROM seeded;
CREATE TEMP VIEW segment_docs AS
  SELECT *, strftime('%Y-%m-%dT%H:%M:%S', s / 1000000, 'unixepoch') AS sl,
            strftime('%Y-%m-%dT%H:%M:%S', e / 1000000, 'unixepoch') AS el
  FROM segment_plan;
INSERT INTO itinerary_segments (itinerary_id, kind, start_at, end_at, lat1, lon1, lat2, lon2, doc, updated_at)
  SELECT itinerary_id, kind, s, e, lat1, lon1, lat2, lon2,
    CASE kind
      WHEN 'flight' THEN json_object('FlightNumber', 'BA30' || n, 'Origin', 'A' || n,
        'Destination', 'B' || n, 'OriginLatitude', lat1, 'OriginLongitude', lon1,
        'DestinationLatitude', lat2, 'DestinationLongitude', lon2,
        'DepartureTimeZoneId', 'UTC', 'DepartureTimeLocal', sl, 'DepartureTime', sl || 'Z',
        'ArrivalTimeZoneId', 'UTC', 'ArrivalTimeLocal', el, 'ArrivalTime', el || 'Z')
      WHEN 'journey' THEN json_object('JourneyType', 'Taxi', 'Name', 'Transfer ' || n,
        'OriginLatitude', lat1, 'OriginLongitude', lon1,
        'DestinationLatitude', lat2, 'DestinationLongitude', lon2,
        'DepartureTimeZoneId', 'UTC', 'DepartureTimeLocal', sl, 'DepartureTime', sl || 'Z',
        'ArrivalTimeZoneId', 'UTC', 'ArrivalTimeLocal', el, 'ArrivalTime', el || 'Z')
      ELSE json_object('Name', 'Hotel du Louvre', 'Latitude', lat1, 'Longitude', lon1,
        'CountryCode', 'FR', 'TimeZoneId', 'UTC', 'CheckInTimeLocal', sl,
        'CheckInTime', sl || 'Z', 'CheckOutTimeLocal', el, 'CheckOutTime', el || 'Z')
    END, s
  FROM segment_docs ORDER BY itinerary_id, n;
INSERT INTO itinerary_travelers (itinerary_id, email_key, doc)
  SELECT itinerary_id, lower(email), json_object('EmailAddress', email) FROM seeded;
UPDATE itineraries SET
  start_at = (SELECT MIN(s.start_at) FROM itinerary_segments s WHERE s.itinerary_id = itineraries.id),
  end_at = (SELECT MAX(s.end_at) FROM itinerary_segments s WHERE s.itinerary_id = itineraries.id);
COMMIT;
SQL
SEED_SECONDS=$(awk -v a="$SEED_START" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
start_server

# The seeded rows are what the API writes: copy one itinerary's segments through the API.
SAMPLE=$(api GET "/V2/1000/itineraries?pnrNumber=PNR00007" | jq '.[0]')
LOCATION=$(curl -fsS -o /dev/null -w '%header{location}' -X POST "$BASE/V2/1000/itineraries" \
  -H "$ADMIN_AUTH" -H 'content-type: application/json' -d '{"PnrNumber":"COPY1"}')
for kind in Flights Journeys Hotels; do
  for row in $(jq -r ".${kind}[] | tojson | @base64" <<<"$SAMPLE"); do
    api POST "$LOCATION/$(tr '[:upper:]' '[:lower:]' <<<"$kind")" "$(base64 -d <<<"$row")" >/dev/null
  done
done
COPY=$(api GET "$LOCATION")
strip='{Start, End, Flights: [.Flights[] | del(.Id)], Journeys: [.Journeys[] | del(.Id)], Hotels: [.Hotels[] | del(.Id)]}'
if [ "$(jq -S "$strip" <<<"$SAMPLE")" != "$(jq -S "$strip" <<<"$COPY")" ]; then
  echo "seeded itinerary differs from the same one written through the API" >&2
  diff <(jq -S "$strip" <<<"$SAMPLE") <(jq -S "$strip" <<<"$COPY") >&2 || true
  exit 1
fi
api DELETE "$LOCATION"
echo "seeded rows match the API's (PNR00007 copied through the API)"

# A risk region around Paris, created through the API: its write rescores every itinerary.
REGION_START=$(date +%s.%N)
api POST /V2/1000/riskregions '{"GeometryId":"paris","Name":"Paris","RiskLevel":3,
  "Polygon":[[{"Lat":48.5,"Lon":2.0},{"Lat":48.5,"Lon":3.0},{"Lat":49.5,"Lon":3.0},{"Lat":49.5,"Lon":2.0}]]}'
REGION_SECONDS=$(awk -v a="$REGION_START" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
[ "$(api GET "/V2/1000/itineraries?pnrNumber=PNR09999" | jq '.[0].OverallRisk')" = 3 ] \
  || { echo "OverallRisk not rescored" >&2; exit 1; }

USER_AUTH=$(auth bench.user7@example.com bench-user-password)
WINDOW="startDate=2026-06-01T00:00:00Z&endDate=2026-06-30T23:59:59Z"
LIST="$BASE/V2/1000/itineraries?$WINDOW&byTravelerOnly=true"
RESPONSE=$(curl -fsS "$LIST" -H "$USER_AUTH")
COUNT=$(jq length <<<"$RESPONSE")
SEGMENTS=$(jq '[.[] | (.Flights + .Journeys + .Hotels) | length] | add' <<<"$RESPONSE")
BYTES=$(printf '%s' "$RESPONSE" | wc -c)
TOTAL=$(api GET "/V2/1000/itinerariesList?pageSize=1000&page=10" | jq length)
[ "$TOTAL" = 1000 ] || { echo "expected 10,000 itineraries" >&2; exit 1; }

# Prints "requests_per_second p50_ms p99_ms" for one endpoint.
measure() {
  local connections=$1 url=$2; shift 2
  wrk -t"$(( connections < 2 ? 1 : 2 ))" -c"$connections" -d"${DURATION}s" --latency "$@" "$url" >"$DATA/wrk.out"
  if grep -q "Non-2xx" "$DATA/wrk.out"; then echo "non-2xx responses for $url" >&2; cat "$DATA/wrk.out" >&2; exit 1; fi
  local ms='{v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; print v}'
  echo "$(awk '/Requests\/sec/ {print $2}' "$DATA/wrk.out") $(awk '$1=="50%" '"$ms" "$DATA/wrk.out") $(awk '$1=="99%" '"$ms" "$DATA/wrk.out")"
}

wrk -t1 -c4 -d2s -H "$USER_AUTH" "$LIST" >/dev/null # warm-up (credential cache, page cache)
read -r H1_RPS H1_P50 H1_P99 < <(measure 1 "$BASE/healthz")
read -r L1_RPS L1_P50 L1_P99 < <(measure 1 "$LIST" -H "$USER_AUTH")
read -r H32_RPS H32_P50 H32_P99 < <(measure 32 "$BASE/healthz")
read -r L32_RPS L32_P50 L32_P99 < <(measure 32 "$LIST" -H "$USER_AUTH")
RSS_KB=$(awk '/VmHWM/ {print $2}' "/proc/$SERVER/status")
{
  echo "| request | connections | req/s | median (ms) | p99 (ms) |"
  echo "|---|---:|---:|---:|---:|"
  echo "| GET /healthz (baseline) | 1 | $H1_RPS | $H1_P50 | $H1_P99 |"
  echo "| GET /itineraries, one user, one month | 1 | $L1_RPS | $L1_P50 | $L1_P99 |"
  echo "| GET /healthz (baseline) | 32 | $H32_RPS | $H32_P50 | $H32_P99 |"
  echo "| GET /itineraries, one user, one month | 32 | $L32_RPS | $L32_P50 | $L32_P99 |"
  echo
  echo "$ITINERARIES itineraries x 5 segments + 1 traveler, $USERS users; the listing returns $COUNT itineraries ($SEGMENTS segments, $BYTES bytes of JSON)."
  echo "Seeding (SQL) ${SEED_SECONDS} s; the risk-region POST that rescored all $ITINERARIES itineraries ${REGION_SECONDS} s."
  echo "Peak server RSS: $((RSS_KB / 1024)) MB. ${DURATION} s per measurement, SQLite, $(nproc) cores, $(date -u +%Y-%m-%d)."
} | tee "$DATA/result.md"
mkdir -p bench/results && cp "$DATA/result.md" "bench/results/itineraries-latest.md"

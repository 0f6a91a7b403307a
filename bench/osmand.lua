-- wrk script for bench/gateways.sh: OsmAnd / Traccar Client reports the way phones send
-- them, one position per request (GET with the query string, the token in the path),
-- from DEVICES devices in turn. Each report has a new timestamp in Unix milliseconds,
-- so the gateway's dedupe lookup runs and never hits.
local DEVICES = tonumber(os.getenv("BENCH_DEVICES") or "1000")
local TOKEN = os.getenv("BENCH_TOKEN") or ""
-- 2026-01-01T00:00:00Z in Unix milliseconds.
local BASE_MS = 1767225600000
local counter = 0
-- Each thread's state gets its number as the global `wrk_thread` (see ingest.lua).
local threads = 0

function setup(thread)
  thread:set("wrk_thread", threads)
  threads = threads + 1
end

function init(args)
  math.randomseed(wrk_thread * 7919 + os.time())
  counter = wrk_thread * 100000000
end

function request()
  counter = counter + 1
  local device = counter % DEVICES
  local lat = 51.0 + (device % 40) * 0.01 + math.random() * 0.01
  local lon = -1.0 + math.floor(device / 40) * 0.01 + math.random() * 0.01
  local path = string.format(
    "/gateways/osmand/%s?id=bench-%d&timestamp=%d&lat=%.6f&lon=%.6f&speed=%.1f&bearing=%d&altitude=%d&accuracy=%d&batt=%d",
    TOKEN, device, BASE_MS + counter, lat, lon, math.random() * 64.0, math.random(0, 359),
    math.random(0, 300), math.random(3, 30), math.random(5, 100))
  return wrk.format("GET", path)
end

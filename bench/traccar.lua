-- wrk script for bench/gateways.sh: Traccar's JSON position forwarding, one position per
-- request (POST /gateways/traccar, the body Traccar's PositionData writes, the token as
-- Bearer from the command line), from DEVICES devices (uniqueId bench-n) in turn. Each
-- position has a new deviceTime/fixTime, so the dedupe lookup runs and never hits.
local DEVICES = tonumber(os.getenv("BENCH_DEVICES") or "1000")
-- 2026-01-01T00:00:00Z in Unix seconds.
local BASE_S = 1767225600
local counter = 0
local threads = 0

function setup(thread)
  thread:set("wrk_thread", threads)
  threads = threads + 1
end

function init(args)
  math.randomseed(wrk_thread * 7919 + os.time())
  counter = wrk_thread * 100000000
end

local function iso(ms)
  return os.date("!%Y-%m-%dT%H:%M:%S", BASE_S + math.floor(ms / 1000)) .. string.format(".%03d+00:00", ms % 1000)
end

function request()
  counter = counter + 1
  local device = counter % DEVICES
  local lat = 51.0 + (device % 40) * 0.01 + math.random() * 0.01
  local lon = -1.0 + math.floor(device / 40) * 0.01 + math.random() * 0.01
  local at = iso(counter)
  local body = string.format(
    '{"position":{"id":0,"attributes":{"batteryLevel":%d,"sat":%d,"motion":true,"distance":12.5},' ..
    '"deviceId":%d,"protocol":"watch","serverTime":"%s","deviceTime":"%s","fixTime":"%s","valid":true,' ..
    '"latitude":%.6f,"longitude":%.6f,"altitude":%d,"speed":%.1f,"course":%d,"address":null,' ..
    '"accuracy":%d,"network":null,"geofenceIds":null},' ..
    '"device":{"id":%d,"attributes":{},"groupId":0,"calendarId":0,"name":"bench","uniqueId":"bench-%d",' ..
    '"status":"online","lastUpdate":"%s","positionId":0,"phone":null,"model":null,"contact":null,' ..
    '"category":null,"disabled":false,"expirationTime":null}}',
    math.random(5, 100), math.random(3, 12), device, at, at, at, lat, lon, math.random(0, 300),
    math.random() * 30.0, math.random(0, 359), math.random(3, 30), device, device, at)
  return wrk.format("POST", "/gateways/traccar", nil, body)
end

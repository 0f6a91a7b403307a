-- wrk script for bench/ingest.sh: every request posts a batch of BATCH MO messages with
-- positions for one of DEVICES devices (round robin), each message a new SequenceNumber
-- and SentFromDevice (so the dedupe lookup runs and never hits).
local DEVICES = tonumber(os.getenv("BENCH_DEVICES") or "1000")
local BATCH = tonumber(os.getenv("BENCH_BATCH") or "100")
local TENANT = os.getenv("BENCH_TENANT") or "1000"
local counter = 0
-- Counts threads in the main Lua state; each thread's state gets its number as the
-- global `wrk_thread` (a local here would shadow it: both threads would then send the
-- same keys, and half of all messages would be retries).
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
  local base_lat = 51.0 + (device % 40) * 0.01
  local base_lon = -1.0 + math.floor(device / 40) * 0.01
  local parts = {}
  -- Seconds since 2026-01-01 keep times increasing per device across requests.
  local t0 = counter * BATCH
  for i = 1, BATCH do
    local t = t0 + i
    local day = math.floor(t / 86400) % 28 + 1
    local rest = t % 86400
    parts[i] = string.format(
      '{"MessageType":"AutomaticPositionReport","SequenceNumber":%d,"SentFromDevice":"2026-02-%02dT%02d:%02d:%02d.%06dZ","Position":{"Latitude":%.6f,"Longitude":%.6f,"Speed":%.1f,"Heading":%d},"Properties":{"battery":"%d"}}',
      t, day, math.floor(rest / 3600), math.floor(rest / 60) % 60, rest % 60, counter % 1000000,
      base_lat + math.random() * 0.01, base_lon + math.random() * 0.01,
      math.random() * 120.0, math.random(0, 359), math.random(5, 100))
  end
  local body = "[" .. table.concat(parts, ",") .. "]"
  return wrk.format("POST", "/V2/" .. TENANT .. "/devices/bench-" .. device .. "/momessages", nil, body)
end

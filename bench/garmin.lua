-- wrk script for bench/gateways.sh: Garmin IPC Outbound posts of EVENTS events (Version
-- 2.0, message code 0 position reports), each event a different device (IridiumImei
-- IMEI_BASE + n) of DEVICES in turn; every event a new timeStamp (ms) for its device.
local DEVICES = tonumber(os.getenv("BENCH_DEVICES") or "1000")
local EVENTS = tonumber(os.getenv("BENCH_GARMIN_EVENTS") or "100")
local IMEI_BASE = 300434000000000
local BASE_MS = 1767225600000
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

function request()
  counter = counter + 1
  local events = {}
  for i = 1, EVENTS do
    local device = (counter * EVENTS + i) % DEVICES
    events[i] = string.format(
      '{"imei":"%015d","messageCode":0,"freeText":"","timeStamp":%d,"addresses":[],"point":{"latitude":%.6f,"longitude":%.6f,"altitude":%d,"gpsFix":2,"course":%d,"speed":%.1f},"status":{"autonomous":0,"lowBattery":%d,"intervalChange":0,"resetDetected":0}}',
      IMEI_BASE + device, BASE_MS + counter, 51.0 + (device % 40) * 0.01 + math.random() * 0.01,
      -1.0 + math.floor(device / 40) * 0.01 + math.random() * 0.01, math.random(0, 300),
      math.random(0, 359), math.random() * 120.0, math.random(0, 1))
  end
  return wrk.format("POST", "/gateways/garmin", nil,
    '{"Version":"2.0","Events":[' .. table.concat(events, ",") .. ']}')
end

#!/usr/bin/env python3
"""DirectIP load for bench/gateways.sh: Iridium's way, one MO message per TCP connection
(header + location + a short text payload), from DEVICES devices (IridiumImei
300434000000000 + n) in turn, CONCURRENCY connections at a time per process, for SECONDS.
Prints one line: connections/s, p50 and p99 of connect-to-close (ms), confirmations
accepted, refused, and connections that ended without a confirmation.

    bench/directip_load.py HOST PORT SECONDS [CONCURRENCY] [PROCESSES] [DEVICES]
"""
import asyncio
import multiprocessing
import struct
import sys
import time

IMEI_BASE = 300434000000000
# 2026-01-01T00:00:00Z: session times count up from it, one second per message of a device.
SESSION_BASE = 1767225600
ACCEPTED = bytes([1, 0, 4, 5, 0, 1, 1])


def element(iei, data):
    return struct.pack(">BH", iei, len(data)) + data


def frame(device, n, devices):
    imei = b"%015d" % (IMEI_BASE + device)
    momsn = (n // devices) % 65536
    header = struct.pack(">I", n & 0xFFFFFFFF) + imei + struct.pack(">BHHI", 0, momsn, 0, SESSION_BASE + n)
    # 51°30.123' N, 0°7.456' W, CEP 2 km.
    location = struct.pack(">BBHBHI", 0x01, 51, 30123 + device % 1000, 0, 7456, 2)
    payload = b"position report %d" % n
    body = element(1, header) + element(3, location) + element(2, payload)
    return struct.pack(">BH", 1, len(body)) + body


async def worker(host, port, deadline, first, step, devices, out):
    n = first
    while time.monotonic() < deadline:
        n += step
        started = time.monotonic()
        try:
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(frame(n % devices, n, devices))
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(), 30)
            writer.close()
        except (OSError, asyncio.TimeoutError):
            out["failed"] += 1
            continue
        out["latencies"].append((time.monotonic() - started) * 1000)
        if answer == ACCEPTED:
            out["accepted"] += 1
        elif len(answer) == 7:
            out["refused"] += 1
        else:
            out["failed"] += 1


def run_process(args):
    host, port, seconds, concurrency, devices, index, processes = args
    out = {"latencies": [], "accepted": 0, "refused": 0, "failed": 0}
    deadline = time.monotonic() + seconds

    async def main():
        step = concurrency * processes
        await asyncio.gather(*(
            worker(host, port, deadline, index * concurrency + w, step, devices, out)
            for w in range(concurrency)
        ))

    asyncio.run(main())
    return out


def main():
    host, port, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    concurrency = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    processes = int(sys.argv[5]) if len(sys.argv) > 5 else 2
    devices = int(sys.argv[6]) if len(sys.argv) > 6 else 1000
    started = time.monotonic()
    with multiprocessing.Pool(processes) as pool:
        results = pool.map(run_process, [
            (host, port, seconds, concurrency, devices, i, processes) for i in range(processes)
        ])
    elapsed = time.monotonic() - started
    latencies = sorted(l for r in results for l in r["latencies"])
    accepted = sum(r["accepted"] for r in results)
    refused = sum(r["refused"] for r in results)
    failed = sum(r["failed"] for r in results)

    def pct(q):
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] if latencies else 0.0

    print("%.0f %.2f %.2f %d %d %d" % (len(latencies) / elapsed, pct(0.5), pct(0.99), accepted, refused, failed))


if __name__ == "__main__":
    main()

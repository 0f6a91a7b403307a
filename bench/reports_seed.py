#!/usr/bin/env python3
"""Seeds MO messages for bench/reports.sh straight into a safetrack database (the server
stopped): a SQLite file given as `db`, or with `db` = `-` the rows as CSV on stdout, for
PostgreSQL's `COPY mo_messages (...) FROM STDIN` (bench/reports.sh then sets each device's
state to its last report in SQL): `devices` devices named bench-N, `messages` positions each, one every
30 s from 2026-03-02 06:00 UTC. Each track drives at 40-60 km/h, stops 6 minutes every
200 reports (a new trip), and has one minute at 130 km/h every 250 reports (a Speeding);
the last report carries Properties.odometer. The device state is set to the last report.
"""
import csv
import math
import sqlite3
import sys

db, devices, messages = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
KM_LAT = 1 / 111.195
START_US = 1772431200 * 1_000_000  # 2026-03-02T06:00:00Z
STEP_US = 30 * 1_000_000

csv_out = csv.writer(sys.stdout) if db == "-" else None
conn = None
if csv_out is None:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = OFF")
SQL = """INSERT INTO mo_messages (tenant_code, device_id, sequence_number, sent_at, received_at,
    message_time, message_type, latitude, longitude, speed, heading, doc, etag)
    VALUES ('1000', ?, ?, ?, ?, ?, 'AutomaticPositionReport', ?, ?, ?, ?, ?, 'bench')"""
PLAIN = '{"MessageType":"AutomaticPositionReport"}'
for d in range(devices):
    device = f"bench-{d}"
    lat, lon = 50.0 + (d % 100) * 0.05, -2.0 + (d // 100) * 0.05
    rows = []
    for i in range(messages):
        phase = i % 200
        if 188 <= phase < 200:
            speed = 0.0  # 12 reports = 6 minutes stopped
        elif i % 250 == 125:
            speed = 130.0
        else:
            speed = 50.0 + 10.0 * math.sin(i / 7.0)
        km = speed / 120.0  # distance covered in 30 s
        heading = (i // 50) * 30 % 360
        lat += km * KM_LAT * math.cos(math.radians(heading))
        lon += km * KM_LAT * math.sin(math.radians(heading)) / math.cos(math.radians(lat))
        t = START_US + d * 1_000_000 + i * STEP_US
        doc = PLAIN if i < messages - 1 else (
            '{"MessageType":"AutomaticPositionReport","Properties":{"odometer":"%.1f"}}' % (10000 + i * 0.4))
        rows.append((device, i, t, t, t, lat, lon, speed, float(heading), doc))
    if csv_out is not None:
        # The COPY column order: SQL's, its constants ('1000', the type, 'bench') filled in.
        for (dev, seq, sent, received, when, la, lo, sp, hd, doc) in rows:
            csv_out.writerow(["1000", dev, seq, sent, received, when, "AutomaticPositionReport",
                              la, lo, sp, hd, doc, "bench"])
        continue
    conn.executemany(SQL, rows)
    last_id = conn.execute("SELECT MAX(id) FROM mo_messages").fetchone()[0]
    conn.execute(
        """UPDATE device_states SET last_message_time = ?, last_message_id = ?, latitude = ?,
           longitude = ?, speed = ?, battery = 80 WHERE device_id = ?""",
        (rows[-1][2], last_id, lat, lon, rows[-1][7], device))
    if d % 100 == 99:
        conn.commit()
if conn is not None:
    conn.commit()
    conn.close()

"""The ceiling for ingest on SQLite: the same rows the server stores for a message
(about 12 columns plus the JSON record, a dedupe index and a listing index), inserted
into a fresh file in transactions of BATCH rows with WAL and synchronous=FULL, by a plain
client with no server. Prints rows per second."""
import json, os, random, sqlite3, sys, tempfile, time

rows_total = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 100
path = os.path.join(tempfile.mkdtemp(), "ceiling.db")
db = sqlite3.connect(path, isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=FULL")
db.execute("""CREATE TABLE mo_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, tenant_code TEXT,
  device_id TEXT, sequence_number BIGINT, sent_at BIGINT, received_at BIGINT, message_time BIGINT,
  message_type TEXT, latitude REAL, longitude REAL, speed REAL, heading REAL, emergency_state TEXT,
  doc TEXT, etag TEXT)""")
db.execute("""CREATE UNIQUE INDEX dedupe ON mo_messages (device_id, sequence_number, sent_at)
  WHERE sequence_number IS NOT NULL AND sent_at IS NOT NULL""")
db.execute("CREATE INDEX listing ON mo_messages (device_id, message_time, id)")
start = time.perf_counter()
seq = 0
for b in range(rows_total // batch):
    device = f"bench-{b % 1000}"
    rows = []
    for i in range(batch):
        seq += 1
        t = 1_770_000_000_000_000 + seq * 1_000_000
        doc = json.dumps({"MessageType": "AutomaticPositionReport", "SequenceNumber": seq,
                          "Position": {"Latitude": 51.5, "Longitude": -0.12, "Speed": 42.0, "Heading": 90},
                          "Properties": {"battery": "80"}})
        rows.append(("1000", device, seq, t, t, t, "AutomaticPositionReport",
                     51.0 + random.random(), -1.0 + random.random(), 42.0, 90.0, None, doc,
                     f"{random.getrandbits(64):016x}"))
    db.execute("BEGIN")
    db.executemany("""INSERT INTO mo_messages (tenant_code, device_id, sequence_number, sent_at,
      received_at, message_time, message_type, latitude, longitude, speed, heading, emergency_state,
      doc, etag) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)""", rows)
    db.execute("COMMIT")
elapsed = time.perf_counter() - start
print(f"{rows_total / elapsed:.0f}")

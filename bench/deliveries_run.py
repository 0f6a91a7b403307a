"""Drives bench/deliveries.sh against a server whose tenant sends one MoMessage webhook
per stored message to the receiver (examples/webhook_receiver.rs).

  post  BASE USER PASSWORD N          posts N messages (batches of 100) as fast as it can
  paced BASE USER PASSWORD N RATE RECEIVER
                                      posts N messages at RATE per second, waits for the N
                                      webhooks, prints "p50_ms p99_ms duplicates" of
                                      created (the delivery's CreatedAt) → arrival
  drain RECEIVER N                    waits for N webhooks already queued, prints
                                      "deliveries_per_second duplicates" from the first
                                      arrival to the last
"""
import base64, datetime, json, statistics, sys, time, urllib.request


def call(method, url, body=None, headers=None):
    request = urllib.request.Request(url, method=method, data=body, headers=headers or {})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.headers, response.read()


class Api:
    def __init__(self, base, user, password):
        self.base = base
        self.auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    def __call__(self, method, path, body=None, extra=None):
        headers = {"Authorization": self.auth, "Content-Type": "application/json",
                   "Accept": "application/json"}
        headers.update(extra or {})
        data = json.dumps(body).encode() if body is not None else None
        return call(method, self.base + path, data, headers)


def batches(n):
    seq = 0
    while seq < n:
        batch = []
        for _ in range(min(100, n - seq)):
            seq += 1
            minute, second = divmod(seq, 60)
            hour, minute = divmod(minute, 60)
            batch.append({"MessageType": "AutomaticPositionReport", "SequenceNumber": seq,
                          "SentFromDevice": f"2026-03-{1 + hour // 24:02d}T{hour % 24:02d}:{minute:02d}:{second:02d}Z",
                          "Position": {"Latitude": 51.5, "Longitude": -0.12, "Speed": 40.0, "Heading": 90}})
        yield batch


def post(api, n, rate=None):
    start = time.monotonic()
    for i, batch in enumerate(batches(n)):
        if rate:
            # Batch i is due at i * 100 / rate seconds.
            delay = start + i * 100 / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        api("POST", "/V2/1000/devices/bench-hook/momessages", batch)


def arrivals(receiver, n):
    deadline = time.time() + 600
    while int(call("GET", receiver + "/count")[1]) < n:
        if time.time() > deadline:
            sys.exit(f"only {int(call('GET', receiver + '/count')[1])} of {n} webhooks arrived in 10 minutes")
        time.sleep(0.05)
    first, duplicates = {}, 0
    for line in call("GET", receiver + "/arrivals")[1].decode().splitlines():
        event_id, at = line.split(",")
        if event_id in first:
            duplicates += 1
        else:
            first[event_id] = int(at) / 1e6
    return first, duplicates


def created_at(api):
    created, token = {}, None
    while True:
        headers, body = api("GET", "/V2/1000/deliveries?channel=Webhook&pageSize=1000",
                            extra={"X-CONTINUATIONTOKEN": token} if token else None)
        for d in json.loads(body):
            created[d["EventId"]] = datetime.datetime.fromisoformat(
                d["CreatedAt"].replace("Z", "+00:00")).timestamp()
        token = headers.get("X-CONTINUATIONTOKEN")
        if not token:
            return created


mode = sys.argv[1]
if mode == "post":
    post(Api(*sys.argv[2:5]), int(sys.argv[5]))
elif mode == "paced":
    api, n, rate, receiver = Api(*sys.argv[2:5]), int(sys.argv[5]), float(sys.argv[6]), sys.argv[7]
    post(api, n, rate)
    arrived, duplicates = arrivals(receiver, n)
    created = created_at(api)
    missing = set(created) - set(arrived)
    if missing or len(created) != n:
        sys.exit(f"{len(created)} deliveries stored, {len(missing)} of them never arrived")
    latencies = sorted((arrived[e] - created[e]) * 1000 for e in created)
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(f"{statistics.median(latencies):.0f} {p99:.0f} {duplicates}")
elif mode == "drain":
    receiver, n = sys.argv[2], int(sys.argv[3])
    arrived, duplicates = arrivals(receiver, n)
    if len(arrived) != n:
        sys.exit(f"{len(arrived)} distinct webhooks of {n}")
    span = max(arrived.values()) - min(arrived.values())
    print(f"{n / span:.0f} {duplicates}")
else:
    sys.exit(__doc__)

"""Drives bench/monitoring.sh (issue 45): devices, monitoring sessions, their check-ins
and their history lines, through the API, over keep-alive connections from a pool of
threads.

  devices  BASE USER PASSWORD N             creates devices bench-0 … bench-(N-1)
  start    BASE USER PASSWORD N IDS SETTINGS starts a session on each (SETTINGS: the POST
                                            body, JSON); prints "seconds" (the POSTs);
                                            then writes the session ids to IDS
  checkins BASE USER PASSWORD N PERIOD [VIA] checks every session in once every PERIOD
                                            seconds, the devices spread evenly over the
                                            period, until SIGTERM; prints "check-ins
                                            late_starts" (a check-in sent more than 1 s
                                            after its slot: the driver fell behind).
                                            VIA "api" (default): POST …/monitoring/checkins;
                                            "messages": the device's MO CheckIn, one a POST
                                            to …/momessages?process=true (ingest's path,
                                            batched into its group commit)
  drop-checkin-rule BASE USER PASSWORD      deletes the tenant's notifications whose
                                            EventsExpression is "CheckIn" (the ingest
                                            scenario's rule 10 raises an alert on every
                                            CheckIn message); prints how many
  end      BASE USER PASSWORD N             ends every device's session; prints "seconds"
  lateness BASE USER PASSWORD IDS WINDOWS   reads every session's history lines and prints
                                            the lateness (FiredAt - At) of the timers
                                            fired, overall and for those due inside
                                            WINDOWS ("from-to,from-to", Unix seconds), as
                                            JSON; and how many check-ins found their
                                            missed check-in not yet fired (a timer later
                                            than the gap the driver leaves)
"""
import base64, http.client, json, queue, signal, statistics, sys, threading, time
import urllib.parse

THREADS = 16


class Client:
    """One keep-alive connection per thread."""

    def __init__(self, base, user, password):
        url = urllib.parse.urlsplit(base)
        self.host, self.port = url.hostname, url.port
        self.headers = {
            "Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode(),
            "Content-Type": "application/json", "Accept": "application/json"}
        self.local = threading.local()

    def call(self, method, path, body=None, ok=(200, 201, 204), headers=None):
        for attempt in range(3):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
            try:
                data = json.dumps(body).encode() if body is not None else None
                conn.request(method, path, body=data, headers=dict(self.headers, **(headers or {})))
                response = conn.getresponse()
                payload = response.read()
            except (http.client.HTTPException, OSError):
                conn.close()
                self.local.conn = None
                if attempt == 2:
                    raise
                continue
            if response.status not in ok:
                raise RuntimeError(f"{method} {path}: {response.status} {payload[:300]!r}")
            return response, payload
        raise AssertionError


def parallel(jobs, work, threads=THREADS):
    """Runs work(job) for every job on `threads` threads; returns the results in order."""
    results = [None] * len(jobs)
    todo = queue.Queue()
    for i, job in enumerate(jobs):
        todo.put((i, job))
    errors = []

    def run():
        while not errors:
            try:
                i, job = todo.get_nowait()
            except queue.Empty:
                return
            try:
                results[i] = work(job)
            except Exception as e:  # reported once below
                errors.append(e)

    pool = [threading.Thread(target=run) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    if errors:
        raise errors[0]
    return results


def devices(api, n):
    def create(d):
        api.call("POST", "/V2/1000/devices", {"DeviceId": f"bench-{d}", "DeviceType": "InReach"})
    parallel(range(n), create)


def start(api, n, ids_path, settings):
    body = json.loads(settings)

    def begin(d):
        api.call("POST", f"/V2/1000/devices/bench-{d}/monitoring", body)

    def session_id(d):
        _, payload = api.call("GET", f"/V2/1000/devices/bench-{d}/monitoring")
        return json.loads(payload)["MonitoringSessionId"]
    t0 = time.monotonic()
    parallel(range(n), begin)
    seconds = time.monotonic() - t0
    # The POST answers with a Location only: the ids, read afterwards (not timed).
    ids = parallel(range(n), session_id)
    with open(ids_path, "w") as f:
        f.write("\n".join(ids) + "\n")
    print(f"{seconds:.1f}")


def end(api, n):
    def stop(d):
        api.call("DELETE", f"/V2/1000/devices/bench-{d}/monitoring?reason=bench")
    t0 = time.monotonic()
    parallel(range(n), stop)
    print(f"{time.monotonic() - t0:.1f}")


def utc_now():
    """Now as RFC 3339 UTC with microseconds (a device's SentFromDevice)."""
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}Z"


def checkins(api, n, period, via="api"):
    """Device d is checked in at t0 + (d / n + k) * period, k = 0, 1, …"""
    if via not in ("api", "messages"):
        sys.exit(f"checkins: VIA is api or messages, not {via!r}")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    t0 = time.monotonic()
    sent = [0] * THREADS
    late = [0] * THREADS

    def run(w):
        # Thread w takes the devices d ≡ w (mod THREADS), in slot order.
        mine = list(range(w, n, THREADS))
        k = 0
        while not stop.is_set():
            for d in mine:
                slot = t0 + (d / n + k) * period
                delay = slot - time.monotonic()
                if delay > 0:
                    if stop.wait(delay):
                        return
                elif delay < -1:
                    late[w] += 1
                if via == "api":
                    api.call("POST", f"/V2/1000/devices/bench-{d}/monitoring/checkins", {})
                else:
                    # A new SequenceNumber and SentFromDevice each time: never a retry.
                    message = {"MessageType": "CheckIn", "SequenceNumber": k + 1,
                               "SentFromDevice": utc_now()}
                    api.call("POST", f"/V2/1000/devices/bench-{d}/momessages?process=true",
                             [message])
                sent[w] += 1
            k += 1

    failed = []

    def guarded(w):
        try:
            run(w)
        except Exception as e:  # the server went away: stop, and say so
            failed.append(e)
            stop.set()

    pool = [threading.Thread(target=guarded, args=(w,), daemon=True) for w in range(THREADS)]
    for t in pool:
        t.start()
    while not stop.is_set():
        stop.wait(1)
    for t in pool:
        t.join(timeout=130)
    print(f"{sum(sent)} {sum(late)}")
    if failed:
        sys.exit(f"check-ins failed: {failed[0]}")


def drop_checkin_rule(api):
    _, payload = api.call("GET", "/V2/1000/eventnotifications")
    listed = json.loads(payload)
    gone = 0
    for rule in listed:
        if rule.get("EventsExpression", "").strip() == "CheckIn":
            api.call("DELETE", f"/V2/1000/eventnotifications/{rule['NotificationId']}")
            gone += 1
    print(gone)


def when(text):
    """An RFC 3339 UTC time as Unix seconds (any number of fraction digits)."""
    main, _, rest = text.rstrip("Z").partition(".")
    s = time.mktime(time.strptime(main, "%Y-%m-%dT%H:%M:%S")) - time.timezone
    return s + (float("0." + rest) if rest else 0.0)


def quantile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def lateness(api, ids_path, windows):
    ids = [line.strip() for line in open(ids_path) if line.strip()]
    spans = [tuple(float(x) for x in w.split("-")) for w in windows.split(",") if w]

    def lines(session):
        out, token = [], None
        while True:
            path = f"/V2/1000/monitoring/{session}/events?pageSize=1000"
            extra = {"X-CONTINUATIONTOKEN": token} if token else None
            response, payload = api.call("GET", path, headers=extra)
            out.extend(json.loads(payload))
            token = response.getheader("X-CONTINUATIONTOKEN")
            if not token:
                return out

    t0 = time.monotonic()
    histories = parallel(ids, lines)
    read_seconds = time.monotonic() - t0
    fired, in_windows, kinds, preempted = [], [], {}, 0
    for history in histories:
        pending_check_in = False
        for line in history:
            kind = line["Kind"]
            kinds[kind] = kinds.get(kind, 0) + 1
            if kind == "CheckIn":
                if pending_check_in:
                    preempted += 1  # two check-ins with no missed check-in between
                pending_check_in = True
            elif kind == "MissedCheckIn":
                pending_check_in = False
            detail = line.get("Detail") or {}
            if "FiredAt" in detail:
                at = when(line["At"])
                late = when(detail["FiredAt"]) - at
                fired.append(late)
                if any(a <= at < b for a, b in spans):
                    in_windows.append(late)

    def stats(values):
        values = sorted(values)
        if not values:
            return {"n": 0}
        return {"n": len(values), "median": round(statistics.median(values), 3),
                "p99": round(quantile(values, 0.99), 3), "max": round(values[-1], 3)}
    print(json.dumps({"sessions": len(ids), "read_seconds": round(read_seconds, 1),
                      "lines": kinds, "all": stats(fired), "in_windows": stats(in_windows),
                      "check_ins_before_their_missed_check_in_fired": preempted}))


def main():
    command, base, user, password, *rest = sys.argv[1:]
    api = Client(base, user, password)
    if command == "devices":
        devices(api, int(rest[0]))
    elif command == "start":
        start(api, int(rest[0]), rest[1], rest[2])
    elif command == "checkins":
        checkins(api, int(rest[0]), float(rest[1]), *rest[2:3])
    elif command == "drop-checkin-rule":
        drop_checkin_rule(api)
    elif command == "end":
        end(api, int(rest[0]))
    elif command == "lateness":
        lateness(api, rest[0], rest[1] if len(rest) > 1 else "")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

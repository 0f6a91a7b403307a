#!/usr/bin/env python3
"""Peak memory of `GET /users?photo=true` (issue 30, item 10): a server on a fresh SQLite
database, 25 users with the largest photo (4 MiB of Base64), then 4 parallel XML
listings that each follow X-CONTINUATIONTOKEN to the end. Prints the server's peak
resident memory (VmHWM) after seeding and after the listings. Rerunnable:
    bench/user_photos.py [path/to/safetrack]   (default: target/debug/safetrack)
"""
import base64, concurrent.futures, os, re, subprocess, sys, tempfile, time, urllib.request

BINARY = sys.argv[1] if len(sys.argv) > 1 else "target/debug/safetrack"
ADMIN, PASSWORD = "bench-admin@example.com", "bench-password-1"
AUTH = "Basic " + base64.b64encode(f"{ADMIN}:{PASSWORD}".encode()).decode()
USERS, PARALLEL = 25, 4


def request(base, method, path, body=None, headers=None):
    req = urllib.request.Request(base + path, data=body, method=method)
    req.add_header("Authorization", AUTH)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    with urllib.request.urlopen(req, timeout=600) as r:
        return r.headers, r.read()


def peak_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))


def walk(base):
    token, pages, users = None, 0, 0
    while True:
        headers = {"Accept": "application/xml"}
        if token:
            headers["X-CONTINUATIONTOKEN"] = token
        h, body = request(base, "GET", "/V2/1000/users?photo=true", headers=headers)
        pages += 1
        users += body.count(b"<User>")
        token = h.get("X-CONTINUATIONTOKEN")
        if not token:
            return pages, users


def main():
    data = tempfile.mkdtemp()
    server = subprocess.Popen(
        [BINARY, "serve", "--listen", "127.0.0.1:0", "--data-dir", data,
         "--admin-email", ADMIN, "--admin-password", PASSWORD],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={**os.environ, "RUST_LOG": "warn"})
    try:
        for line in server.stdout:
            m = re.match(rb"safetrack listening on (\S+)", line)
            if m:
                base = "http://" + m.group(1).decode()
                break
        time.sleep(0.5)
        photo = base64.b64encode(os.urandom(3 * 1024 * 1024)).decode()
        for i in range(USERS):
            body = ('{"Username":"u%d@example.com","Password":"bench-user-password","Photo":"%s"}'
                    % (i, photo)).encode()
            request(base, "POST", "/V2/1000/users", body, {"Content-Type": "application/json"})
        seeded = peak_kib(server.pid)
        start = time.time()
        with concurrent.futures.ThreadPoolExecutor(PARALLEL) as pool:
            walks = list(pool.map(lambda _: walk(base), range(PARALLEL)))
        elapsed = time.time() - start
        print(f"{BINARY}: peak RSS after seeding {seeded / 1024:.0f} MiB, after "
              f"{PARALLEL} parallel XML listings {peak_kib(server.pid) / 1024:.0f} MiB "
              f"(pages, users per listing: {walks[0]}; {elapsed:.1f} s)")
    finally:
        server.kill()
        server.wait()
        subprocess.run(["rm", "-rf", data])


main()

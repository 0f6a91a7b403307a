"""A local Web Push service for the tests (tests/api/push_delivery.rs): an independent
check of what the server sends. It makes subscriptions (a P-256 key pair and a 16-byte
auth secret, the browser's part, kept here), and for every push it checks the VAPID
`Authorization: vapid t=<JWT>, k=<key>` (RFC 8292: the ES256 signature verified by
py_vapid against `k`, `k` the server's public key, `aud` this service's origin, `exp`
within 24 hours) and decrypts the aes128gcm body (RFC 8291) with http_ece and the
subscription's private key. It records what it got and answers 201, or what it was told.

Control (JSON): POST /_subscribe {"VapidKey": "<base64url>"} -> {"Endpoint", "P256dh",
"Auth"}; POST /_answer {"Status": 410, "Count": 1}; GET /_received -> every push, in
order. Prints {"ready": <port>} on stdout once it listens on 127.0.0.1.
"""

import base64
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
import py_vapid
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

LOCK = threading.Lock()
SUBSCRIPTIONS = {}  # path -> (private key, auth secret, expected VAPID key)
ANSWERS = []  # statuses to answer next
RECEIVED = []


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64u(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def check_vapid(header, expected_key, origin):
    """What is wrong with the VAPID header, or None."""
    if not header.lower().startswith("vapid "):
        return "no vapid scheme: %r" % header[:20]
    params = {}
    for part in header[6:].split(","):
        name, _, value = part.strip().partition("=")
        params[name] = value
    token, key = params.get("t"), params.get("k")
    if not token or not key:
        return "t or k missing"
    if expected_key and key != expected_key:
        return "k is not the server's VAPID key"
    signed, _, signature = token.rpartition(".")
    verifier = py_vapid.Vapid.from_raw_public(key.encode())
    if not verifier.verify_token(signed.encode(), signature):
        return "the JWT signature does not verify with k"
    head, _, claims = signed.partition(".")
    head, claims = json.loads(unb64u(head)), json.loads(unb64u(claims))
    if head.get("alg") != "ES256":
        return "alg is %r" % head.get("alg")
    if claims.get("aud") != origin:
        return "aud is %r, not %r" % (claims.get("aud"), origin)
    exp = claims.get("exp", 0)
    if not time.time() < exp <= time.time() + 86400:
        return "exp %r is not within 24 hours" % exp
    return None


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body=None):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_GET(self):
        if self.path == "/_received":
            with LOCK:
                return self.answer(200, RECEIVED)
        self.answer(404, {})

    def do_POST(self):
        if self.path == "/_subscribe":
            return self.subscribe(json.loads(self.body() or b"{}"))
        if self.path == "/_answer":
            asked = json.loads(self.body())
            with LOCK:
                ANSWERS.extend([asked["Status"]] * asked.get("Count", 1))
            return self.answer(200, {})
        self.push(self.body())

    def subscribe(self, asked):
        private = ec.generate_private_key(ec.SECP256R1())
        public = private.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        auth = os.urandom(16)
        with LOCK:
            path = "/push/%d" % (len(SUBSCRIPTIONS) + 1)
            SUBSCRIPTIONS[path] = (private, auth, asked.get("VapidKey"))
        port = self.server.server_address[1]
        self.answer(
            200,
            {
                "Endpoint": "http://127.0.0.1:%d%s" % (port, path),
                "P256dh": b64u(public),
                "Auth": b64u(auth),
            },
        )

    def push(self, content):
        origin = "http://127.0.0.1:%d" % self.server.server_address[1]
        record = {
            "Path": self.path,
            "ContentEncoding": self.headers.get("Content-Encoding"),
            "Ttl": self.headers.get("TTL"),
            "Urgency": self.headers.get("Urgency"),
        }
        with LOCK:
            subscription = SUBSCRIPTIONS.get(self.path)
            status = ANSWERS.pop(0) if ANSWERS else 201
        if subscription is None:
            record["Error"] = "no such subscription"
            status = 404
        else:
            private, auth, expected = subscription
            record["VapidError"] = check_vapid(
                self.headers.get("Authorization", ""), expected, origin
            )
            try:
                plain = http_ece.decrypt(
                    content, private_key=private, auth_secret=auth, version="aes128gcm"
                )
                record["Payload"] = json.loads(plain)
            except Exception as error:  # recorded for the test to show
                record["DecryptError"] = repr(error)
        record["Answered"] = status
        with LOCK:
            RECEIVED.append(record)
        self.answer(status, {} if status >= 300 else None)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(json.dumps({"ready": server.server_address[1]}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())

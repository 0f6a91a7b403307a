"""A real SMTP server for the delivery tests (aiosmtpd): accepts every message and prints
each one as a JSON line on stdout (envelope, headers, plain-text body).

Usage: python smtp_sink.py PORT [REJECT_RCPT_SUBSTRING]
Recipients containing REJECT_RCPT_SUBSTRING are refused with 550 (a permanent failure).
"""
import email
import email.policy
import json
import sys
import threading

from aiosmtpd.controller import Controller


class Sink:
    def __init__(self, reject):
        self.reject = reject

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.reject and self.reject in address:
            return "550 5.1.1 mailbox unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        body = message.get_body(preferencelist=("plain",))
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "headers": {k: str(v) for k, v in message.items()},
            "body": body.get_content() if body is not None else "",
        }
        print(json.dumps(record), flush=True)
        return "250 Message accepted for delivery"


def main():
    port = int(sys.argv[1])
    reject = sys.argv[2] if len(sys.argv) > 2 else ""
    controller = Controller(Sink(reject), hostname="127.0.0.1", port=port)
    controller.start()
    print(json.dumps({"ready": port}), flush=True)
    # The controller serves from its own thread; this one only has to stay alive.
    threading.Event().wait()


if __name__ == "__main__":
    main()

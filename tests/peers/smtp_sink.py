"""A real SMTP server for the delivery tests (aiosmtpd): accepts every message and prints
each one as a JSON line on stdout (envelope, headers, plain-text body).

Usage: python smtp_sink.py [REJECT_RCPT_SUBSTRING]
Recipients containing REJECT_RCPT_SUBSTRING are refused with 550 (a permanent failure).
The sink picks its own free port and prints it first, as {"ready": PORT}.
"""
import email
import email.policy
import json
import socket
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


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main():
    reject = sys.argv[1] if len(sys.argv) > 1 else ""
    # aiosmtpd cannot bind port 0 (it checks readiness by connecting to the port it was
    # given), so a free port is picked and bound; another process may take it in between,
    # and then the next one is tried.
    for _ in range(50):
        port = free_port()
        controller = Controller(Sink(reject), hostname="127.0.0.1", port=port)
        try:
            controller.start()
            break
        except Exception:
            try:
                controller.stop()
            except Exception:
                pass
    else:
        sys.exit("no free port for the SMTP sink")
    print(json.dumps({"ready": port}), flush=True)
    # The controller serves from its own thread; this one only has to stay alive.
    threading.Event().wait()


if __name__ == "__main__":
    main()

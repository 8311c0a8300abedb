"""A push service double on loopback, and a browser's side of a push subscription: the
keys a browser makes, and the decryption of what arrives (http_ece, as a browser does)."""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


class Device:
    """What a browser keeps for a push subscription: its key pair and auth secret."""

    def __init__(self, endpoint: str):
        self.endpoint = endpoint
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)

    def subscription(self) -> dict:
        """As PushSubscription.toJSON() gives it to the page."""
        public = self.key.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
        return {"endpoint": self.endpoint, "keys": {"p256dh": b64(public), "auth": b64(self.auth)}}

    def read(self, body: bytes) -> dict:
        """The notification as the browser decrypts it."""
        plain = http_ece.decrypt(
            body, private_key=self.key, auth_secret=self.auth, version="aes128gcm"
        )
        return json.loads(plain)


class PushDouble:
    """Receives pushes on 127.0.0.1: each POST kept (path, headers, body); answers
    `status` (201 by default), after `delay` seconds."""

    def __init__(self):
        self.received: list[tuple[str, dict, bytes]] = []
        self.status = 201
        self.delay = 0.0
        double = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                time.sleep(double.delay)
                headers = {k.lower(): v for k, v in self.headers.items()}
                double.received.append((self.path, headers, body))
                self.send_response(double.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def device(self, name: str) -> Device:
        return Device(f"{self.url}/push/{name}")

    def wait(self, count: int, timeout: float = 10.0) -> list:
        """The pushes once `count` have arrived (bounded wait)."""
        deadline = time.monotonic() + timeout
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return list(self.received)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

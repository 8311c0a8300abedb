"""A network link that can die silently: a TCP relay on loopback between a browser and
the server. Cut, it stops passing bytes both ways and closes nothing, as a phone whose
network died looks to both ends (no FIN, no RST: only silence)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

POLL = 0.1  # seconds: how often a relay looks at the cut and stop flags


class Link:
    def __init__(self, target_port: int):
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(POLL)
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.dead = threading.Event()
        self.stopped = threading.Event()
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self.accept, daemon=True).start()

    def cut(self) -> None:
        self.dead.set()

    def restore(self) -> None:
        self.dead.clear()

    def stop(self) -> None:
        self.stopped.set()
        with contextlib.suppress(OSError):
            self.listener.close()
        for s in list(self.sockets):
            with contextlib.suppress(OSError):
                s.close()

    def accept(self) -> None:
        while not self.stopped.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            except OSError:
                client.close()
                continue
            self.sockets += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self.relay, args=(src, dst), daemon=True).start()

    def relay(self, src: socket.socket, dst: socket.socket) -> None:
        src.settimeout(POLL)
        try:
            while not self.stopped.is_set():
                if self.dead.is_set():
                    time.sleep(POLL)  # bytes wait in the kernel's buffers, unread
                    continue
                try:
                    data = src.recv(65536)
                except TimeoutError:
                    continue
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

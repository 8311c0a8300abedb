"""What gunicorn's worker does around each request, made cheaper (installed by
gunicorn.conf.py in each worker, once the app is loaded).

gunicorn writes an answer's status line and headers with one send and its body with
another: two system calls per request, and on the other side two reads, for answers
that are mostly a few KB. Here the headers and a body of known length go out in one
send; gunicorn still decides every byte of both (Connection, Date, the length cap)."""

from __future__ import annotations


class _Gathered:
    """Stands in for the socket while gunicorn writes one answer: keeps what it sends."""

    def __init__(self):
        self.parts: list[bytes] = []

    def sendall(self, data: bytes) -> None:
        self.parts.append(data)


def one_send(response_class) -> None:
    """Have `response_class` (gunicorn.http.wsgi.Response) send its headers together
    with the first body write, when the body is not chunked."""
    write = response_class.write
    if getattr(write, "one_send", False):
        return  # installed already

    def write_with_headers(self, data):
        if self.headers_sent or self.chunked:
            return write(self, data)
        sock, gathered = self.sock, _Gathered()
        self.sock = gathered
        try:
            write(self, data)
        finally:
            self.sock = sock
        sock.sendall(b"".join(gathered.parts))

    write_with_headers.one_send = True
    response_class.write = write_with_headers

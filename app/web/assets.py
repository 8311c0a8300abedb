"""Static files and compression: content-hashed asset URLs (cached for a year), and
Flask-Compress for text responses (Brotli when the browser takes it, else gzip), so
the table page and its assets travel small even without a reverse proxy in front."""

from __future__ import annotations

import gzip
import hashlib
from functools import lru_cache
from pathlib import Path

import brotli
from flask import current_app, request, url_for
from flask_compress import Compress
from werkzeug.http import parse_accept_header

# htmx answers (the partials every move and page link gets) are compressed at the
# fastest level, by our own answer hook (`compress_answer`); Flask-Compress leaves an
# answer that has a Content-Encoding alone and only adds `Vary`. On a move's answer
# (about 8 KB of HTML) Brotli's quality 6 took ~190 us for 1.3 KB, quality 1 ~40 us for
# 1.7 KB. Whole pages (once per visit, within the page weight budget) and static files
# (once per browser: cached a year) are Flask-Compress's, at its configured levels.
ANSWER_BR = {"quality": 1, "lgwin": 18}  # a 256 KB window: an answer is far smaller
ANSWER_GZIP_LEVEL = 1

try:
    # ISA-L's gzip (`isal`, which also deflates the pushes): an 8 KB answer in 1,783
    # bytes for 152 K instructions, where Brotli's quality 1 took 1,813 bytes and 248 K
    # (callgrind). With it, gzip goes first for answers when the browser takes both.
    from isal import igzip
except ImportError:
    igzip = None


def compress_answer(response):
    """An htmx answer compressed at the answer levels (after_request hook)."""
    if response.is_streamed or request.headers.get("HX-Request") != "true":
        return response
    config = current_app.config
    headers = response.headers
    if (
        not 200 <= response.status_code < 300
        or "Content-Encoding" in headers
        or "ETag" in headers  # conditional answers: Flask-Compress's own handling
        or response.mimetype not in config["COMPRESS_MIMETYPES"]
    ):
        return response
    accepted = request.headers.get("Accept-Encoding", "")
    chosen = parse_accept_header(accepted).best_match(
        _answer_encodings(config["COMPRESS_ALGORITHM"])
    )
    if chosen not in ("br", "gzip"):
        return response
    data = response.get_data()
    if len(data) < config["COMPRESS_MIN_SIZE"]:
        return response
    if chosen == "br":
        data = brotli.compress(data, **ANSWER_BR)
    elif igzip is not None:
        data = igzip.compress(data, ANSWER_GZIP_LEVEL)
    else:
        data = gzip.compress(data, ANSWER_GZIP_LEVEL)
    response.set_data(data)
    headers["Content-Encoding"] = chosen
    return response


def _answer_encodings(offered: list[str]) -> list[str]:
    """The configured encodings, gzip first when ISA-L makes it the cheaper."""
    if igzip is None or "gzip" not in offered:
        return offered
    return ["gzip", *(e for e in offered if e != "gzip")]


compress = Compress()


@lru_cache(maxsize=64)
def _version(path: str, mtime: float) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:10]


def init_app(app) -> None:
    app.config.setdefault("COMPRESS_ALGORITHM", ["br", "gzip"])
    # Static files are sent as streams: compress those too, with the same choice.
    app.config.setdefault("COMPRESS_ALGORITHM_STREAMING", ["br", "gzip"])
    app.config.setdefault("COMPRESS_MIN_SIZE", 512)
    app.config.setdefault("COMPRESS_BR_LEVEL", 6)  # smaller than gzip for our assets, ~4 ms
    compress.init_app(app)
    # Registered after Flask-Compress's hook, so it runs before it (Flask runs answer
    # hooks last registered first).
    app.after_request(compress_answer)

    known: dict[str, str] = {}  # filename -> hash, once per process unless debugging

    @app.template_global()
    def asset(filename: str) -> str:
        """A static file's URL with its content hash: safe to cache for a year. Pages
        name a few each, so the hash is looked up once (the file is looked at again on
        every call only in debug mode, where it is being edited)."""
        v = known.get(filename)
        if v is None:
            path = Path(app.static_folder) / filename
            v = _version(str(path), path.stat().st_mtime)
            if not app.debug:
                known[filename] = v
        return url_for("static", filename=filename, v=v)

"""Static files and compression: content-hashed asset URLs (cached for a year), our own
scripts and styles sent minified (rjsmin, rcssmin: read as written, no build step),
scripts and styles compressed once (Zopfli, Brotli), and Flask-Compress for other text
responses (Brotli when the browser takes it, else gzip), so the table page and its
assets travel small even without a reverse proxy in front."""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
from functools import lru_cache
from pathlib import Path

import brotli
import rcssmin
import rjsmin
import zopfli.gzip
from flask import abort, current_app, request, send_from_directory, url_for
from flask_compress import Compress
from werkzeug.http import parse_accept_header
from werkzeug.security import safe_join

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


# Comments and spaces out of what a browser loads: our script and stylesheets are
# written to be read (and the table page has a weight budget).
MINIFY = {".js": rjsmin.jsmin, ".css": rcssmin.cssmin}
# Scripts and styles are compressed once per process at the smallest sizes the formats
# allow (Zopfli's gzip, Brotli's quality 11: about 0.1 s for htmx, once), since every
# browser fetches them once and keeps them a year.
PACKED = {".js", ".css"}


@lru_cache(maxsize=64)
def _packed(path: str, mtime: float) -> dict[str, bytes]:
    """A static file as it is sent: ours minified; as is, gzipped, and in Brotli."""
    suffix = Path(path).suffix
    if suffix in MINIFY and not path.endswith(".min.js"):
        body = MINIFY[suffix](Path(path).read_text(encoding="utf-8")).encode()
    else:
        body = Path(path).read_bytes()
    return {
        "identity": body,
        "gzip": zopfli.gzip.compress(body),
        "br": brotli.compress(body, quality=11),
    }


def static_file(filename: str):
    """/static/<filename>: scripts and styles minified (ours) and compressed once, the
    rest (icons) as Flask sends files; each cached by the browser as long as Flask's
    setting says."""
    folder = current_app.config["STATIC_FOLDER"]
    max_age = current_app.get_send_file_max_age(filename)
    if Path(filename).suffix not in PACKED:
        return send_from_directory(folder, filename, max_age=max_age)
    path = safe_join(folder, filename)
    if path is None or not Path(path).is_file():
        abort(404)
    packed = _packed(path, Path(path).stat().st_mtime)
    accepted = parse_accept_header(request.headers.get("Accept-Encoding", ""))
    encoding = accepted.best_match(["br", "gzip"]) or "identity"
    response = current_app.response_class(
        packed[encoding], mimetype=mimetypes.guess_type(filename)[0]
    )
    if encoding != "identity":
        response.headers["Content-Encoding"] = encoding  # Flask-Compress leaves it be
    response.vary.add("Accept-Encoding")
    response.cache_control.public = True
    response.cache_control.max_age = max_age
    response.add_etag()
    return response.make_conditional(request)


def init_app(app) -> None:
    app.add_url_rule("/static/<path:filename>", endpoint="static", view_func=static_file)
    app.config.setdefault("COMPRESS_ALGORITHM", ["br", "gzip"])
    # Static files are sent as streams: compress those too, with the same choice.
    app.config.setdefault("COMPRESS_ALGORITHM_STREAMING", ["br", "gzip"])
    app.config.setdefault("COMPRESS_MIN_SIZE", 512)
    app.config.setdefault("COMPRESS_BR_LEVEL", 6)  # smaller than gzip for our assets, ~4 ms
    app.config.setdefault("COMPRESS_LEVEL", 9)  # gzip for whole pages: once per visit
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
            path = Path(app.config["STATIC_FOLDER"]) / filename
            v = _version(str(path), path.stat().st_mtime)
            if not app.debug:
                known[filename] = v
        return url_for("static", filename=filename, v=v)

"""gzip for text responses, so the table page and its assets travel small even without
a reverse proxy in front. Static files are compressed once per version (ETag)."""

from __future__ import annotations

import gzip
import hashlib
from functools import lru_cache
from pathlib import Path

from flask import request, url_for

TEXT_TYPES = {
    "text/html",
    "text/css",
    "application/javascript",
    "text/javascript",
    "application/json",
    "image/svg+xml",
    "application/manifest+json",
}
_cache: dict[str, bytes] = {}


@lru_cache(maxsize=64)
def _version(path: str, mtime: float) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:10]


def init_app(app) -> None:
    @app.template_global()
    def asset(filename: str) -> str:
        """A static file's URL with its content hash: safe to cache for a year."""
        path = Path(app.static_folder) / filename
        return url_for("static", filename=filename, v=_version(str(path), path.stat().st_mtime))

    @app.after_request
    def _gzip(response):
        if (
            response.status_code < 200
            or response.status_code in (204, 304)
            or response.is_streamed
            and not response.direct_passthrough
            or response.mimetype not in TEXT_TYPES
            or "gzip" not in request.headers.get("Accept-Encoding", "")
            or "Content-Encoding" in response.headers
            or request.path.endswith("/ws")
        ):
            return response
        etag = response.headers.get("ETag") if request.path.startswith("/static/") else None
        response.direct_passthrough = False
        data = response.get_data()
        if len(data) < 512:
            return response
        packed = _cache.get(etag) if etag else None
        if packed is None:
            packed = gzip.compress(data, 6)
            if etag and len(_cache) < 64:
                _cache[etag] = packed
        response.set_data(packed)
        response.headers["Content-Encoding"] = "gzip"
        response.headers["Content-Length"] = str(len(packed))
        response.vary.add("Accept-Encoding")
        return response

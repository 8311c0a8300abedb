"""Static files and compression: content-hashed asset URLs (cached for a year), and
Flask-Compress for text responses (Brotli when the browser takes it, else gzip), so
the table page and its assets travel small even without a reverse proxy in front."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from flask import url_for
from flask_compress import Compress

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

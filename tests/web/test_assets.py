"""Compression (Flask-Compress: Brotli or gzip) and content-hashed asset URLs; the table
page with every asset stays under its 30 KB gzipped budget."""

from __future__ import annotations

import gzip
import re

import brotli

from app.web import assets
from tests.conftest import ROOT
from tests.web.web_helpers import seat_table, start

BUDGET = 30 * 1024


def assets_of(html: str) -> list[str]:
    return re.findall(r'(?:href|src)="(/static/[^"]+)"', html)


def test_pages_are_compressed_as_the_browser_asks(browser):
    ann, _bob = seat_table(browser, ("Ann", "Bob"), bots=("greedy",))
    start(ann)
    plain = ann.client.get(f"/t/{ann.code}")
    assert "Content-Encoding" not in plain.headers
    for encoding, unpack in (("gzip", gzip.decompress), ("br", brotli.decompress)):
        response = ann.client.get(f"/t/{ann.code}", headers={"Accept-Encoding": encoding})
        assert response.headers["Content-Encoding"] == encoding
        assert "Accept-Encoding" in response.headers["Vary"]
        body = unpack(response.data).decode()
        assert body.startswith("<!doctype html>") and body.rstrip().endswith("</html>")
        assert ann.code in body and len(response.data) < len(body) / 3
    # Brotli is preferred when the browser takes both.
    both = ann.client.get(f"/t/{ann.code}", headers={"Accept-Encoding": "gzip, br"})
    assert both.headers["Content-Encoding"] == "br"


def test_assets_have_content_hashed_urls_cached_for_a_year(client):
    html = client.get("/").data.decode()
    urls = assets_of(html)
    assert urls and all(re.search(r"\?v=[0-9a-f]{10}$", u) for u in urls)
    for url in urls:
        response = client.get(url, headers={"Accept-Encoding": "gzip"})
        assert response.status_code == 200
        assert "max-age=31536000" in response.headers["Cache-Control"]
        if response.mimetype in ("text/css", "text/javascript") and len(response.data) > 512:
            assert response.headers["Content-Encoding"] == "gzip"
            gzip.decompress(response.get_data())  # a whole gzip stream


def test_the_table_page_with_every_asset_is_under_30_kb_gzipped(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"), bots=("greedy", "strong"))
    start(ann)
    page = ann.client.get(f"/t/{ann.code}", headers={"Accept-Encoding": "gzip"})
    html = gzip.decompress(page.data).decode()
    total = len(page.data)
    for url in assets_of(html):
        response = ann.client.get(url, headers={"Accept-Encoding": "gzip"})
        total += len(response.get_data())
    assert total < BUDGET, total


def test_htmx_answers_are_compressed_as_the_browser_asks(browser):
    """A move's answer (an htmx partial) is compressed at the fastest level, still as the
    browser asks: gzip (ISA-L's, as small as Brotli's fastest and cheaper; Brotli
    without it), else Brotli, else not at all."""
    ann, _bob = seat_table(browser, ("Ann", "Bob"), bots=("greedy",))
    start(ann)
    htmx = {"HX-Request": "true"}
    plain = ann.client.get(f"/t/{ann.code}", headers=htmx)
    assert "Content-Encoding" not in plain.headers
    partial = countdown_out(plain.get_data(as_text=True))
    assert partial.startswith('<section id="table"')
    first = "gzip" if assets.igzip is not None else "br"
    for accept, encoding, unpack in (
        ("gzip, deflate, br", first, gzip.decompress if first == "gzip" else brotli.decompress),
        ("br", "br", brotli.decompress),
        ("gzip", "gzip", gzip.decompress),
    ):
        response = ann.client.get(f"/t/{ann.code}", headers={**htmx, "Accept-Encoding": accept})
        assert response.headers["Content-Encoding"] == encoding
        assert "Accept-Encoding" in response.headers["Vary"]
        assert int(response.headers["Content-Length"]) == len(response.data)
        assert countdown_out(unpack(response.data).decode()) == partial
        assert len(response.data) < len(partial) / 3


def countdown_out(html: str) -> str:
    """The partial without its countdown's seconds (they change between two answers)."""
    return re.sub(r'data-left="\d+">\d+', "", html)


def test_our_scripts_and_styles_are_sent_minified_the_vendored_ones_as_they_are(client):
    static = ROOT / "static"
    for name in ("skymo-1.js", "skymo-1.css", "skymo-pages-1.css"):
        source = (static / name).read_text()
        sent = client.get(f"/static/{name}")
        assert sent.status_code == 200 and sent.cache_control.max_age >= 86400
        body = sent.get_data(as_text=True)
        assert len(body) < 0.95 * len(source), name
        assert "/*" not in body and "\n  " not in body, name
        # Conditional requests: the browser's copy is still good.
        again = client.get(f"/static/{name}", headers={"If-None-Match": sent.headers["ETag"]})
        assert again.status_code == 304
    htmx = client.get("/static/htmx-2.0.11.min.js")
    assert htmx.get_data() == (static / "htmx-2.0.11.min.js").read_bytes()
    assert client.get("/static/icon-32.png").data == (static / "icon-32.png").read_bytes()
    for missing in ("/static/none.js", "/static/../app/__init__.py", "/static/%2e%2e/README.md"):
        assert client.get(missing).status_code == 404, missing


def test_scripts_and_styles_are_compressed_once_as_the_browser_asks(client):
    """Each in the smallest form the browser takes (Brotli, else gzip, else as is), the
    same bytes every time (compressed once per process), cached by encoding."""
    for name in ("skymo-1.js", "htmx-2.0.11.min.js", "skymo-1.css"):
        plain = client.get(f"/static/{name}").get_data()
        for encoding, decode in (("br", brotli.decompress), ("gzip", gzip.decompress)):
            sent = client.get(f"/static/{name}", headers={"Accept-Encoding": encoding})
            assert sent.headers["Content-Encoding"] == encoding
            assert "Accept-Encoding" in sent.headers["Vary"]
            assert decode(sent.get_data()) == plain
            assert len(sent.get_data()) < 0.5 * len(plain)
            again = client.get(f"/static/{name}", headers={"Accept-Encoding": encoding})
            assert again.get_data() == sent.get_data()
        both = client.get(f"/static/{name}", headers={"Accept-Encoding": "gzip, br"})
        assert both.headers["Content-Encoding"] == "br"

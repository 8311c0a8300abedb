"""The installable app (app/web/pwa.py): manifest, service worker, offline page, icons."""

from __future__ import annotations

import re
import struct

import pytest

from tests.web.web_helpers import parse


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_the_manifest_has_what_installing_needs(client):
    doc = parse(client.get("/").data)
    link = doc.find("link", rel="manifest")
    response = client.get(link.attrs["href"])
    assert response.status_code == 200
    assert response.mimetype == "application/manifest+json"
    manifest = response.get_json()
    assert manifest["name"] and manifest["short_name"] == "Skymo"
    assert manifest["start_url"] == "/" and manifest["display"] == "standalone"
    assert re.fullmatch(r"#[0-9a-f]{6}", manifest["theme_color"])
    sizes = {}
    for icon in manifest["icons"]:
        data = client.get(icon["src"]).data
        width, height = png_size(data)
        assert f"{width}x{height}" == icon["sizes"] and icon["type"] == "image/png"
        sizes.setdefault(icon.get("purpose", "any"), set()).add(width)
    assert sizes == {"any": {192, 512}, "maskable": {512}}


def test_the_service_worker_covers_the_site_and_caches_the_assets(client):
    page = client.get("/").data.decode()
    script = parse(page).find("script", data_sw="/sw.js")
    assert script is not None  # registered from the layout
    response = client.get("/sw.js")
    assert response.status_code == 200 and response.mimetype == "application/javascript"
    assert response.headers["Cache-Control"] == "no-cache"
    body = response.data.decode()
    # every asset the layout and the table page load is cached, and the offline page
    for src in re.findall(r'(?:src|href)="(/static/[^"]+)"', page):
        assert src in body, src
    assert '"/offline?lang=en"' in body
    assert "caches.match(OFFLINE)" in body


@pytest.mark.parametrize("lang, says", [("pt-BR", "Sem conexão"), ("nl", "Geen verbinding")])
def test_the_worker_keeps_the_offline_page_in_the_pages_language(client, lang, says):
    """The worker fetches its offline page without cookies: its URL names the language
    of the page that registered it."""
    client.get(f"/?lang={lang}")
    body = client.get("/sw.js").data.decode()
    assert f'"/offline?lang={lang}"' in body and f"-{lang}" in body  # its own cache
    offline = client.application.test_client().get(f"/offline?lang={lang}")  # no cookie
    assert says in offline.data.decode()


def test_the_offline_page(client):
    response = client.get("/offline")
    assert response.status_code == 200
    assert "No connection" in response.data.decode()

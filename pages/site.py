"""What every page of the site shares, public pages, the portal and the OAuth pages alike:
the one stylesheet (read once, served with its tag) and the layout's words and links
(header, language switch, footer), which `pages/base.html` reads through `layout(locale)`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import urlencode

from flask import Response, request

from edge.compression import Kept
from edge.conditional import matches
from edge.context import settings
from openapi.schemas import attribution
from pages.words import text_for

# Compressed once per process (sent in that form by edge/compression.py).
STYLESHEET = Kept.of((Path(__file__).parent / "static" / "site.css").read_bytes())
STYLESHEET_TAG = f'"{hashlib.blake2b(STYLESHEET.identity, digest_size=8).hexdigest()}"'
# The address pages link to names the content: a changed stylesheet is a new address, so
# browsers may keep one for a year without asking again.
STYLESHEET_PATH = "/assets/site.css"
STYLESHEET_URL = f"{STYLESHEET_PATH}?v={STYLESHEET_TAG.strip(chr(34))}"
KEPT_FOR_A_YEAR = "public, max-age=31536000, immutable"
# An address without the current version (an old page, a hand-typed URL): an hour.
KEPT_FOR_AN_HOUR = "public, max-age=3600"


def stylesheet() -> Response:
    """The stylesheet, or a 304 when the browser holds this version."""
    current = request.args.get("v") == STYLESHEET_TAG.strip('"')
    headers = {"ETag": STYLESHEET_TAG, "X-Content-Type-Options": "nosniff",
               "Cache-Control": KEPT_FOR_A_YEAR if current else KEPT_FOR_AN_HOUR}
    if matches(request.headers.get("If-None-Match", ""), STYLESHEET_TAG):
        return Response(status=304, headers=headers)
    return Response(STYLESHEET.identity, mimetype="text/css", headers=headers)


def layout(locale: str) -> dict:
    """The header's and footer's words and links in `locale`, for the page being rendered."""
    words = text_for(locale)
    site = settings().site_url
    other = words["other_lang"]
    query = [(key, value) for key, value in request.args.items(multi=True) if key != "lang"]
    return {
        "words": words, "stylesheet": STYLESHEET_URL, "home": f"{site}/?lang={locale}",
        "docs": f"{site}/docs", "portal": f"{site}/portal?lang={locale}",
        "terms": f"{site}/terms?lang={locale}", "sources": f"{site}/sources?lang={locale}",
        "attribution": attribution(settings()),
        "switch": f"{request.path}?{urlencode([*query, ('lang', other)])}", "other": other,
    }

"""Text folding for search: case- and accent-insensitive keys ("Ampère" -> "ampere")."""

from __future__ import annotations

import re
import unicodedata

_SPACES = re.compile(r"\s+")


def fold(text: str | None) -> str:
    """Lower-case `text` without accents and with single spaces, for search keys."""
    if not text:
        return ""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _SPACES.sub(" ", stripped.casefold()).strip()


def slugify(text: str) -> str:
    """A url slug: folded, with runs of other characters turned into single dashes."""
    return re.sub(r"[^a-z0-9]+", "-", fold(text)).strip("-") or "x"


def like_pattern(text: str) -> str:
    """A LIKE pattern matching `text` anywhere, with LIKE's wildcards escaped (escape `\\`)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"

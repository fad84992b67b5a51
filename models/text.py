"""Text folding for search: case- and accent-insensitive keys ("Ampère" -> "ampere")."""

from __future__ import annotations

import functools
import re
import sys
import unicodedata

_SPACES = re.compile(r"\s+")


def fold(text: str | None) -> str:
    """Lower-case `text` without accents and with single spaces, for search keys."""
    if not text:
        return ""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _SPACES.sub(" ", stripped.casefold()).strip()


@functools.cache
def fold_sql(text: str) -> str:
    """PostgreSQL's `fold` of the SQL text expression `text`: the same steps on the same
    characters (NFKD, combining marks dropped, case folded, runs of white space made one
    space, trimmed), for what plain SQL writes (migration 0028). PostgreSQL has no case
    folding: its `lower` (of a UTF-8 locale), then what folding changes in lower-case text
    (`ς` -> `σ`, `ß` -> `ss`, ...). The character classes and tables come from this
    Python's Unicode data, as written in ASCII escapes."""
    every = characters()
    kept = [c for c in every if not unicodedata.combining(c)
            and unicodedata.normalize("NFKD", c) == c]
    folded = {c: c.casefold() for c in kept if c.lower() == c and c.casefold() != c}
    singles = {c: to for c, to in folded.items() if len(to) == 1}
    expression = (f"lower(regexp_replace(normalize({text}, NFKD), "
                  f"'{_class(c for c in every if unicodedata.combining(c))}', '', 'g'))")
    expression = (f"translate({expression}, {_unicode(''.join(singles))}, "
                  f"{_unicode(''.join(singles.values()))})")
    for c, to in folded.items():
        if len(to) > 1:
            expression = f"replace({expression}, {_unicode(c)}, {_unicode(to)})"
    spaces = _class(c for c in every if c.isspace())
    return f"btrim(regexp_replace({expression}, '{spaces}+', ' ', 'g'), ' ')"


@functools.cache
def characters() -> tuple[str, ...]:
    """Every character a text can hold: each Unicode code point but NUL and the surrogates."""
    return tuple(chr(point) for point in range(1, sys.maxunicode + 1)
                 if not 0xD800 <= point <= 0xDFFF)


def _class(characters) -> str:
    """A regular expression's bracket of `characters` (in order), in ranges of escapes."""
    points = [ord(c) for c in characters]
    runs: list[list[int]] = []
    for point in points:
        if runs and runs[-1][1] == point - 1:
            runs[-1][1] = point
        else:
            runs.append([point, point])
    return "[" + "".join(_escape(first) if first == last else f"{_escape(first)}-{_escape(last)}"
                         for first, last in runs) + "]"


def _escape(point: int) -> str:
    return f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}"


def _unicode(text: str) -> str:
    """A PostgreSQL string literal of `text` in escapes (U&'...')."""
    return "U&'" + "".join(f"\\{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\+{ord(c):06x}"
                           for c in text) + "'"


def slugify(text: str) -> str:
    """A url slug: folded, with runs of other characters turned into single dashes."""
    return re.sub(r"[^a-z0-9]+", "-", fold(text)).strip("-") or "x"


def like_pattern(text: str) -> str:
    """A LIKE pattern matching `text` anywhere, with LIKE's wildcards escaped (escape `\\`)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"

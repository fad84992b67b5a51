"""Folding for search: PostgreSQL's twin of `fold` (migration 0028) gives the same keys."""

import pytest
from sqlalchemy import text

from models.text import characters, fold


def test_postgresqls_fold_gives_pythons_key_for_every_character(db):
    """`search_fold` (what PostgreSQL writes where plain SQL changed a title or a venue's
    name) gives the key the service writes and free text looks for (`fold`), for every
    character Unicode has: accents dropped, cases folded (`ß` -> `ss`, `ς` -> `σ`), white
    space made one space."""
    if db.get_bind().dialect.name != "postgresql":
        pytest.skip("SQLite has no Unicode normalization: its words are the service's writes")
    differ = []
    # Each character between letters and beside white space of several kinds.
    every = characters()
    for start in range(0, len(every), 50_000):
        titles = [f"Ab{c}c\u00a0 {c}D\t" for c in every[start:start + 50_000]]
        keys = db.execute(text(
            "SELECT array_agg(search_fold(title) ORDER BY n) "
            "FROM unnest(CAST(:titles AS text[])) WITH ORDINALITY AS t(title, n)"),
            {"titles": titles}).scalar_one()
        differ += [(title, key, fold(title)) for title, key in zip(titles, keys, strict=True)
                   if key != fold(title)]
    assert not differ, differ[:20]
    assert db.execute(text("SELECT search_fold(:title)"),
                      {"title": "  Crème BRÛLÉE  Straße\u2003Ærø "}).scalar_one() == \
        fold("  Crème BRÛLÉE  Straße\u2003Ærø ") == "creme brulee strasse ærø"

"""Imports every model module so that `Base.metadata` knows every table."""

from models import artists, events, genres, organisations, releases, tokens, venues  # noqa: F401

"""Imports every model module so that `Base.metadata` knows every table."""

from models import organisations, tokens  # noqa: F401

"""Imports every model module so that `Base.metadata` knows every table."""

from models import (  # noqa: F401
    artists,
    events,
    genres,
    organisations,
    people,
    releases,
    tickets,
    tokens,
    venues,
)

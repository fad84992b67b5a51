"""Imports every model module so that `Base.metadata` knows every table."""

from models import (  # noqa: F401
    artists,
    badges,
    events,
    facets,
    festivals,
    genres,
    oauth,
    organisations,
    people,
    releases,
    stamp,
    tickets,
    tokens,
    venues,
)

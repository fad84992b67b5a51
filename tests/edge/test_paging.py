"""The paging kit: a page's next position comes back as the next call's position, bound to
the list and its filters, and cursors signed before the kit still bring callers back."""

from __future__ import annotations

import pytest

from edge import cursors, paging
from models.cities import CityFilters
from models.errors import BadRequest
from models.events import EventFilters
from models.paging import Page
from models.releases import RadarFilters
from models.venues import VenueFilters

SECRET = "test-secret"


def _positions(filters, *cursors_given) -> list:
    """The positions `fetch` is called with, one call per cursor given."""
    seen = []

    def fetch(after):
        seen.append(after)
        return Page(items=["one"], next_key=("gent", "v1"))

    for cursor in cursors_given:
        paging.page(filters, cursor, secret=SECRET, fetch=fetch)
    return seen


def test_the_next_cursor_brings_the_next_call_to_the_position_after_the_page():
    first = paging.page(VenueFilters(city="Gent"), None, secret=SECRET,
                        fetch=lambda after: Page(items=["one"], next_key=("gent", "v1")))
    assert first.items == ["one"]
    assert _positions(VenueFilters(city="Gent"), None, first.next_cursor) == [
        None, ["gent", "v1"]]


def test_the_last_page_has_no_next_cursor():
    last = paging.page(VenueFilters(), None, secret=SECRET,
                       fetch=lambda after: Page(items=["one"], next_key=None))
    assert last.next_cursor is None


def test_a_cursor_of_other_filters_or_another_list_is_refused():
    cursor = paging.page(VenueFilters(city="Gent"), None, secret=SECRET,
                         fetch=lambda after: Page(items=["one"], next_key=("gent", "v1")))
    for other in (VenueFilters(city="Utrecht"), CityFilters()):
        with pytest.raises(BadRequest):
            _positions(other, cursor.next_cursor)


@pytest.mark.parametrize(("filters", "kind", "binding"), [
    (EventFilters.of(date_from="2030-01-02", city="Gent", radius_km=25), "events",
     {"date_from": "2030-01-02", "city": "Gent", "radius_km": "25"}),
    (EventFilters.of(has_tickets=False, facets=("genre", "date")), "events",
     {"has_tickets": "False", "facets": "('genre', 'date')"}),
    (RadarFilters(weeks=2, genre="Techno"), "radar", {"weeks": "2", "genre": "Techno"}),
    (RadarFilters(), "radar", {"weeks": "4"}),
    (CityFilters(country="NL"), "cities", {"country": "NL"}),
    (CityFilters(), "cities", {}),
])
def test_cursors_signed_before_the_kit_still_bring_callers_back(filters, kind, binding):
    old = cursors.encode(SECRET, kind=kind, filters=binding, key=("gent", "v1"))
    assert _positions(filters, old) == [["gent", "v1"]]

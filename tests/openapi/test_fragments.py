"""Items serialized once per value (openapi/schemas/fragments.py)."""

import datetime as dt

import orjson
from marshmallow.experimental.context import Context

from models.events import EventSummary, OrganisationRef, VenueRef
from openapi.schemas.events import EventSummarySchema
from openapi.schemas.fragments import Fragments


class CountingSchema(EventSummarySchema):
    dumped = 0

    def dump(self, obj, *, many=None):
        CountingSchema.dumped += 1
        return super().dump(obj, many=many)


def summary(event_id: str, **changes) -> EventSummary:
    event = EventSummary(
        id=event_id, slug=f"{event_id}-slug", title="Night", date=dt.date(2026, 12, 5),
        end_date=None, last_date=dt.date(2026, 12, 5), start="23:00", end="06:00",
        timezone="Europe/Amsterdam", status="approved", cancelled=False, cancel_reason=None,
        postponed_to=None, price=12.5, price_max=None, currency="EUR", age=18, ticket_url=None,
        artwork_url="", updated_at=1,
        venue=VenueRef("v1", "Hangar", "Amsterdam", "Straat 1", 52.3, 4.9, "NL"),
        organisation=OrganisationRef("o1", "Crew"), genre_names=("Techno",))
    return event._replace(**changes)


def test_an_items_json_is_rendered_once_and_shared_by_every_list_it_is_on():
    CountingSchema.dumped = 0
    fragments = Fragments(CountingSchema(), size=100)
    with Context({"site_url": "https://agenda.example"}):
        one = fragments.dump([summary("a"), summary("b")])
        two = fragments.dump([summary("b"), summary("c"), summary("a")])
        assert CountingSchema.dumped == 3
        expected = [EventSummarySchema().dump(summary(i)) for i in ("b", "c", "a")]
    assert (one.count, two.count) == (2, 3)
    assert orjson.loads(two.json) == orjson.loads(orjson.dumps(expected))
    assert expected[0]["url"] == "https://agenda.example/events/b-slug"


def test_a_change_to_anything_an_item_shows_renders_it_anew():
    fragments = Fragments(EventSummarySchema(), size=100)
    with Context({"site_url": "https://agenda.example"}):
        fragments.dump([summary("a")])
        renamed = summary("a", venue=VenueRef("v1", "Hangar Zuid", "Amsterdam", "Straat 1",
                                              52.3, 4.9, "NL"))
        regenred = summary("a", genre_names=("Techno", "House"))
        shown = [orjson.loads(fragments.dump([item]).json)[0]
                 for item in (renamed, regenred)]
        elsewhere = Context({"site_url": "https://other.example"})
        with elsewhere:
            linked = orjson.loads(fragments.dump([summary("a")]).json)[0]
    assert shown[0]["venue"]["name"] == "Hangar Zuid"
    assert shown[1]["genres"] == ["Techno", "House"]
    assert linked["url"] == "https://other.example/events/a-slug"


def test_the_least_recently_used_are_dropped_beyond_the_size():
    CountingSchema.dumped = 0
    fragments = Fragments(CountingSchema(), size=2)
    with Context({"site_url": "https://agenda.example"}):
        fragments.dump([summary("a"), summary("b"), summary("c")])
        fragments.dump([summary("c"), summary("b")])
        fragments.dump([summary("a")])
    assert CountingSchema.dumped == 4

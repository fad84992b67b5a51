"""Output schemas dump by a plan of their fields (openapi/schemas/__init__.py `OutputSchema`):
the same output as marshmallow's own way, which stays the definition."""

import dataclasses
import datetime as dt

import marshmallow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import fields, post_dump
from marshmallow.experimental.context import Context

from models import artists, events, venues
from models.events import EventSummary, OrganisationRef, VenueRef
from openapi.schemas import OutputSchema
from openapi.schemas.artists import ArtistDetailSchema
from openapi.schemas.events import EventDetailSchema, EventSummarySchema
from openapi.schemas.venues import VenueDetailSchema
from tests import factories

SITE = {"site_url": "https://agenda.example"}


def marshmallows_way(schema, obj, monkeypatch):
    """What `schema.dump(obj)` gives when every schema finds its values as marshmallow does."""
    with monkeypatch.context() as patched:
        patched.setattr(OutputSchema, "_serialize", marshmallow.Schema._serialize)
        return schema.dump(obj)


def dumped_both_ways(schema, obj, monkeypatch) -> tuple:
    with Context(SITE):
        return schema.dump(obj), marshmallows_way(schema, obj, monkeypatch)


texts = st.text(max_size=20)
maybe_texts = st.none() | texts
days = st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2200, 12, 31))
prices = st.none() | st.floats(allow_nan=False, allow_infinity=False)
summaries = st.builds(
    EventSummary, id=texts, slug=texts, title=texts, date=days, end_date=st.none() | days,
    last_date=days, start=texts, end=texts, timezone=texts, status=texts,
    cancelled=st.booleans(), cancel_reason=maybe_texts, postponed_to=st.none() | days,
    price=prices, price_max=prices, currency=texts, age=st.integers(0, 99),
    ticket_url=maybe_texts, artwork_url=texts, updated_at=st.integers(0, 2**40),
    venue=st.builds(VenueRef, id=texts, name=texts, city=texts, address=texts,
                    lat=st.floats(-90, 90), lng=st.floats(-180, 180), country=texts),
    organisation=st.builds(OrganisationRef, id=texts, name=texts),
    genre_names=st.lists(texts, max_size=4).map(tuple))


@settings(max_examples=200, deadline=None)
@given(summary=summaries)
def test_an_event_summary_dumps_as_marshmallow_dumps_it(summary):
    with pytest.MonkeyPatch.context() as monkeypatch:
        planned, reference = dumped_both_ways(EventSummarySchema(), summary, monkeypatch)
    assert planned == reference
    assert list(planned) == list(reference)  # the keys in the same order, as the JSON is


def test_the_detail_answers_dump_as_marshmallow_dumps_them(db, monkeypatch):
    act = factories.ArtistFactory()
    event = factories.EventFactory(acts=[act], genre_names=("Techno", "House"))
    today = dt.date.today()
    for schema, obj in [
            (EventDetailSchema(), events.get_event(db, event.id)),
            (VenueDetailSchema(), venues.get_venue(db, event.venue_id, today=today)),
            (ArtistDetailSchema(), artists.get_artist(db, act.id, today=today))]:
        planned, reference = dumped_both_ways(schema, obj, monkeypatch)
        assert planned == reference
        assert list(planned) == list(reference)


@dataclasses.dataclass
class Thing:
    name: str
    inner: object = None

    @property
    def label(self) -> str:
        return f"label of {self.name}"


class InnerSchema(OutputSchema):
    name = fields.String()


class OddSchema(OutputSchema):
    """Each way a value is not a plain attribute, beside plain ones."""

    name = fields.String()
    renamed = fields.String(attribute="label", data_key="called")
    absent = fields.String()
    defaulted = fields.String(dump_default="none given")
    dotted = fields.String(attribute="inner.name")
    shout = fields.Function(lambda thing: str(thing).upper())
    inner = fields.Nested(InnerSchema, allow_none=True)
    inners = fields.List(fields.Nested(InnerSchema), attribute="many")

    @post_dump
    def mark(self, data, **_kwargs):
        return {**data, "marked": True}


@pytest.mark.parametrize("obj", [
    Thing("a", inner=Thing("b")),
    Thing("a"),
    {"name": "from a mapping", "label": "m", "inner": {"name": "b"}, "many": [{"name": "c"}]},
], ids=["object", "object without inner", "mapping"])
def test_values_that_are_not_plain_attributes_dump_as_marshmallow_dumps_them(obj, monkeypatch):
    planned, reference = dumped_both_ways(OddSchema(), obj, monkeypatch)
    assert planned == reference
    assert list(planned) == list(reference)
    assert planned["marked"] is True


def test_a_list_dumps_each_item_by_the_plan(monkeypatch):
    things = [Thing("a", inner=Thing("b")), Thing("c")]
    planned, reference = dumped_both_ways(OddSchema(many=True), things, monkeypatch)
    assert planned == reference
    assert [item["called"] for item in planned] == ["label of a", "label of c"]

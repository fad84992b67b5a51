"""Output schemas dump by a function compiled from their fields (openapi/schemas/__init__.py
`OutputSchema`): the same output as marshmallow's own way, which stays the definition."""

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
from openapi.schemas import OutputSchema, fingerprint
from openapi.schemas.artists import ArtistDetailSchema
from openapi.schemas.events import (EventDetailSchema, EventSummarySchema,
                                    summary_rendering)
from openapi.schemas.venues import VenueDetailSchema
from tests import factories
from tests.api import day

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
    today = day(0)
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
    Thing("a", inner={"name": "a mapping inside an object"}),
    {"name": "from a mapping", "label": "m", "inner": {"name": "b"}, "many": [{"name": "c"}]},
], ids=["object", "object without inner", "mapping inside", "mapping"])
def test_values_that_are_not_plain_attributes_dump_as_marshmallow_dumps_them(obj, monkeypatch):
    planned, reference = dumped_both_ways(OddSchema(), obj, monkeypatch)
    assert planned == reference
    assert list(planned) == list(reference)
    assert planned["marked"] is True


def test_a_list_dumps_each_item_by_the_compiled_function(monkeypatch):
    things = [Thing("a", inner=Thing("b")), Thing("c")]
    planned, reference = dumped_both_ways(OddSchema(many=True), things, monkeypatch)
    assert planned == reference
    assert [item["called"] for item in planned] == ["label of a", "label of c"]


@dataclasses.dataclass
class Keyed:
    keys: str
    inner: object = None


class KeySchema(OutputSchema):
    """A field named as a mapping's method: read from a mapping as an attribute, it would be
    the method."""

    keys = fields.String()


class HolderSchema(KeySchema):
    inner = fields.Nested(KeySchema, allow_none=True)


class SelfNestedSchema(KeySchema):
    inner = fields.Nested(lambda: SelfNestedSchema(), allow_none=True)


@pytest.mark.parametrize("schema", [HolderSchema, SelfNestedSchema])
def test_mappings_in_lists_and_inside_objects_dump_as_marshmallow_dumps_them(schema,
                                                                             monkeypatch):
    items = [Keyed("a", inner={"keys": "inside"}), {"keys": "listed"},
             Keyed("c", inner=Keyed("d"))]
    planned, reference = dumped_both_ways(schema(many=True), items, monkeypatch)
    assert planned == reference
    assert [item["keys"] for item in planned] == ["a", "listed", "c"]
    assert [planned[0]["inner"]["keys"], planned[2]["inner"]["keys"]] == ["inside", "d"]


@dataclasses.dataclass
class Values:
    """A value for each kind of field the compiled function writes out itself, in any type."""

    text: object = "text"
    number: object = 3
    ratio: object = 0.5
    flag: object = True
    day: object = dt.date(2026, 12, 5)
    counted: object = 4
    dated: object = dt.date(2026, 12, 6)
    words: object = ("a", "b")
    inner: object = None
    hooked: object = None

    def __post_init__(self):
        setattr(self, "for", "in an attribute named as a keyword")

    @property
    def broken(self):
        raise AttributeError("no such thing")


class HookedSchema(OutputSchema):
    name = fields.String()

    @post_dump
    def shout(self, data, **_kwargs):
        return {"name": data["name"].upper()}


class KindsSchema(OutputSchema):
    """Each field whose plain attribute the compiled function converts itself."""

    text = fields.String(allow_none=True)
    number = fields.Integer(allow_none=True)
    as_text = fields.Integer(attribute="counted", as_string=True)
    ratio = fields.Float(allow_none=True)
    flag = fields.Boolean(allow_none=True)
    day = fields.Date(allow_none=True)
    formatted = fields.Date(attribute="dated", format="%d/%m/%Y")
    words = fields.List(fields.String(), allow_none=True)
    inner = fields.Nested(InnerSchema, allow_none=True)
    hooked = fields.Nested(HookedSchema, allow_none=True)
    reserved = fields.String(attribute="for")
    broken = fields.String(dump_default="its default")


@pytest.mark.parametrize("values", [
    Values(),
    Values(text=None, number=None, ratio=None, flag=None, day=None, words=None),
    Values(text=7, number=2.9, ratio=3, flag=1, day=dt.datetime(2026, 12, 5, 23, 30),
           words=["a", 1, None], inner=Thing("b"), hooked=Thing("c")),
], ids=["their own types", "none", "other types"])
def test_each_kind_of_field_dumps_as_marshmallow_dumps_it(values, monkeypatch):
    compiled, reference = dumped_both_ways(KindsSchema(), values, monkeypatch)
    assert compiled == reference
    assert list(compiled) == list(reference)
    assert compiled["broken"] == "its default"
    assert compiled["reserved"] == "in an attribute named as a keyword"


class ListingSchema(OutputSchema):
    """Lists of nested items, of a schema without hooks and of one with them."""

    keys = fields.String()
    listed = fields.List(fields.Nested(KeySchema), allow_none=True)
    hooked = fields.List(fields.Nested(HookedSchema), allow_none=True)


@pytest.mark.parametrize("holder", [
    Keyed("outer"), {"keys": "outer"}, {}, {"listed": None, "hooked": None}],
    ids=["object", "mapping", "mapping without its keys", "lists of none"])
def test_lists_of_nested_items_dump_as_marshmallow_dumps_them(holder, monkeypatch):
    """Each item by the nested schema's compiled dump, an object or a mapping (None as None);
    a mapping's keys read as marshmallow reads them (one it lacks, its way: a field named as
    a mapping's method reads the method)."""
    items = [Keyed("a", inner={"keys": "inside"}), {"keys": "listed"}, None, {}]
    if isinstance(holder, Keyed):
        holder.listed, holder.hooked = items, [Thing("c"), {"name": "d"}]
    elif not holder:
        holder.update(listed=items, hooked=[{"name": "e"}])
    planned, reference = dumped_both_ways(ListingSchema(), holder, monkeypatch)
    assert planned == reference
    assert list(planned) == list(reference)
    if planned.get("listed") is not None:
        assert [item and item["keys"] for item in planned["listed"]][:3] == ["a", "listed", None]


def test_instances_that_dump_other_fields_dump_each_their_own(monkeypatch):
    every, some = KindsSchema(), KindsSchema(only=("text", "day"))
    for schema in (every, some, KindsSchema(exclude=("text",))):
        compiled, reference = dumped_both_ways(schema, Values(), monkeypatch)
        assert compiled == reference
    with Context(SITE):
        assert list(some.dump(Values())) == ["text", "day"]
        assert "text" not in KindsSchema(exclude=("text",)).dump(Values())
        assert len(every.dump(Values())) == len(KindsSchema._declared_fields)


def _made(**declared) -> type:
    """A schema class named `Made`, of these fields: two made alike are the same schema."""
    return type("Made", (OutputSchema,), declared)


def test_a_schemas_fingerprint_changes_with_any_field_and_only_then():
    """What another release's kept output is told apart by (models/events.py
    KEPT_SUMMARIES): a field added, another key, another option, another Function, another
    nested schema; the same fields, the same fingerprint."""
    base = {"name": fields.String(), "link": fields.Function(lambda thing: f"/t/{thing.name}"),
            "inner": fields.Nested(InnerSchema)}
    assert fingerprint(_made(**base)) == fingerprint(
        _made(name=fields.String(), link=fields.Function(lambda thing: f"/t/{thing.name}"),
              inner=fields.Nested(InnerSchema)))
    changed = [
        {**base, "more": fields.String()},
        {**base, "name": fields.String(data_key="title")},
        {**base, "name": fields.String(allow_none=True)},
        {**base, "name": fields.Integer()},
        {**base, "link": fields.Function(lambda thing: f"/other/{thing.name}")},
        {**base, "inner": fields.Nested(OddSchema)},
    ]
    prints = [fingerprint(_made(**declared)) for declared in changed]
    assert fingerprint(_made(**base)) not in prints and len(set(prints)) == len(changed)


def test_the_summaries_rendering_names_the_site_their_links_point_to():
    with Context(SITE):
        here = summary_rendering()
    with Context({"site_url": "https://elsewhere.example"}):
        elsewhere = summary_rendering()
    assert here != elsewhere
    with Context(SITE):
        assert summary_rendering() == here

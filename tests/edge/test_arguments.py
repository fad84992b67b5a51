"""A GET's handler arguments read before the framework (edge/arguments.py): the plain forms
read as Connexion reads them, everything else left to the full way."""

import pytest
from jsonschema import Draft202012Validator

from edge.arguments import FORMATS, validity
from edge.openapi import load_document, resolve
from edge.routes import RouteTable


@pytest.fixture(scope="module")
def routes():
    return RouteTable(load_document("http://127.0.0.1:8080/v1"), "/v1")


def read(routes, path: str, query: str = ""):
    return routes.find("GET", path).arguments.read(path, query.encode("latin-1"))


def test_plain_parameters_are_read_as_connexion_reads_them(routes):
    assert read(routes, "/v1/events", "city=Den%20Haag&from=2026-12-01&has_tickets=false"
                                      "&lat=52.1&lng=-4.25&limit=10&genre=Drum+%26+Bass") == {
        "city": "Den Haag", "from_": "2026-12-01", "has_tickets": False, "lat": 52.1,
        "lng": -4.25, "limit": 10, "genre": "Drum & Bass"}


def test_numbers_are_read_in_the_forms_the_validators_accept(routes):
    # One lexical test (edge/openapi.py): an exponent is a number there, so it is here.
    arguments = read(routes, "/v1/events", "lat=1e1&lng=-1.5E0")
    assert (arguments["lat"], arguments["lng"]) == (10.0, -1.5)


def test_defaults_are_filled_in_and_path_ids_are_read(routes):
    assert read(routes, "/v1/events") == {"limit": 25}
    assert read(routes, "/v1/radar") == {"limit": 25, "weeks": 4}
    assert read(routes, "/v1/users/abc/badges", "limit=3") == {"id_": "abc", "limit": 3}


def given(routes, operation_id: str, **values):
    return routes.identified(operation_id).arguments.given(values)


@pytest.mark.parametrize(("operation_id", "values", "path", "query"), [
    ("list_events", {"city": "Den Haag", "from": "2026-12-01", "has_tickets": False,
                     "lat": 52, "lng": -4.25, "max_price": 30, "limit": 10, "q": None},
     "/v1/events", "city=Den%20Haag&from=2026-12-01&has_tickets=false&lat=52&lng=-4.25"
                   "&max_price=30&limit=10"),
    ("list_events", {}, "/v1/events", ""),
    ("list_releases", {"genre": "Drum & Bass", "weeks": 4}, "/v1/radar", "genre=Drum+%26+Bass"),
    ("list_user_badges", {"id": "abc", "limit": 3}, "/v1/users/abc/badges", "limit=3"),
    ("get_event", {"id": "some-night"}, "/v1/events/some-night", ""),
])
def test_parameters_given_as_values_are_the_arguments_of_the_same_request_read(
        routes, operation_id, values, path, query):
    """An MCP tool's request and a GET of the same URL: one key (edge/cache.py `Keys`)."""
    assert given(routes, operation_id, **values) == (path, read(routes, path, query))


def test_a_given_value_its_schema_refuses_is_an_error_naming_it(routes):
    with pytest.raises(ValueError, match="^limit: "):
        given(routes, "list_events", limit=101)
    with pytest.raises(ValueError, match="^genre: "):
        given(routes, "list_releases", genre="techno")


@pytest.mark.parametrize("query", [
    "town=Utrecht",            # not a parameter of the operation
    "city=Utrecht&city=Gent",  # repeated
    "city=",                   # empty
    "limit=%EF%BC%91%EF%BC%90",  # full-width digits
    "limit=+5", "limit=5.0", "limit=0", "limit=101",
    "lat=NaN&lng=4", "lat=1e999&lng=4", "lat=91&lng=4",
    "has_tickets=True", "has_tickets=1",
    "from=2026-02-30", "from=20261201",
    "genre=techno",            # not a genre of the document's list
    "q=%00", "q=a%0Ab", "city=%FF",
])
def test_anything_else_is_left_to_the_full_way(routes, query):
    assert read(routes, "/v1/events", query) is None


def test_an_id_out_of_its_bounds_is_left_to_the_full_way(routes):
    assert read(routes, "/v1/events/" + "x" * 201) is None


# Values of each type around every bound, enum and pattern the document's parameters have.
SAMPLES = {
    "string": ["", "a", "x" * 99, "x" * 100, "x" * 101, "x" * 199, "x" * 200, "x" * 201,
               "x" * 1024, "x" * 1025, "é" * 100, "é" * 101, "2026-12-01", "2026-02-30",
               "2026-12-1", "House", "house", "Drum & Bass", "NL", "BE", "nl", "genre",
               "genre,city,date", "genre,city,date,genre", "genre,", "event,venue",
               "event,venue,artist,organisation,release,event", "events", "a\nb"],
    "integer": [-1, 0, 1, 2, 3, 4, 5, 25, 100, 101, 200, 201, 1000, 1001, 99_999_999_999,
                100_000_000_000],
    "number": [-180.5, -180.0, -90.5, -90.0, -1.0, 0.0, 52.1, 90.0, 90.5, 180.0, 180.5,
               100_000.0, 100_000.5],
    "boolean": [True, False],
}


def test_each_parameter_is_checked_as_its_schema_checks_it(routes):
    """`validity` gives jsonschema's own verdict (format checked) for every parameter of
    every public operation, over values around each bound; the document's parameters are
    all checked without jsonschema."""
    document = load_document("http://127.0.0.1:8080/v1")
    schemas = [resolve(document, parameter.get("schema", {}))
               for item in document["paths"].values() for definition in item.values()
               if isinstance(definition, dict) and "304" in definition.get("responses", {})
               for parameter in (resolve(document, p) for p in
                                 [*item.get("parameters", []),
                                  *definition.get("parameters", [])])
               if parameter["in"] in ("path", "query")]
    assert len(schemas) > 40
    for schema in schemas:
        valid = validity(schema)
        assert valid.__name__ == "<lambda>", schema  # not jsonschema's own is_valid
        reference = Draft202012Validator(schema, format_checker=FORMATS)
        for value in SAMPLES[schema["type"]]:
            assert valid(value) == reference.is_valid(value), (schema, value)


def test_a_schema_with_other_keywords_is_checked_by_jsonschema():
    schema = {"type": "string", "const": "a"}
    assert validity(schema).__self__.schema == schema
    assert (validity(schema)("a"), validity(schema)("b")) == (True, False)

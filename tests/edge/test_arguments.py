"""A GET's handler arguments read before the framework (edge/arguments.py): the plain forms
read as Connexion reads them, everything else left to the full way."""

import pytest

from edge.openapi import load_document
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

"""Issue 22: families of hostile input, generated (hypothesis) for every operation of the
document, never get a 5xx, and every refusal is the REST envelope with the request's id.

The operations are read from openapi/agenda.yaml, so an operation added to it is tried too.
Each example puts one hostile value in one place the operation reads (a query, path or
header parameter, a body field, or the body itself), the rest of the request well formed:
a token holding every scope, an event of the token's organisation that takes external
tickets, a body the operation's schema accepts. The families: deep nesting, lone
surrogates, extreme dates, huge integers, control characters, and missing or odd
Content-Types. AGENDA_HOSTILE_EXAMPLES sets the examples per operation and family
(default 8: about a minute on two cores).
"""

from __future__ import annotations

import json
import os
import re
import string
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edge.openapi import load_document, resolve
from tests.api import SITE
from tests.factories import EventFactory, OrganisationFactory

DOCUMENT = load_document(f"{SITE}/v1")
METHODS = ("get", "put", "post", "patch", "delete")
OPERATIONS = [(method.upper(), path, operation) for path, item in DOCUMENT["paths"].items()
              for method, operation in item.items() if method in METHODS]
EXAMPLES = int(os.environ.get("AGENDA_HOSTILE_EXAMPLES", "8"))
HOSTILE = settings(max_examples=EXAMPLES, deadline=None, database=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture,
                                          HealthCheck.too_slow])
MARK = "\x00hostile\x00"  # where the hostile JSON goes in a body

# --- the families: each gives (text for a parameter, JSON text for a body) ----------------

CONTROL = "".join(map(chr, [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029,
                            0x202E, 0xFEFF]))


def _deep(depth: int, kind: str) -> str:
    return ("[" * depth + "]" * depth if kind == "array"
            else '{"a":' * depth + "1" + "}" * depth)


deep_nesting = st.builds(_deep, st.integers(33, 3000), st.sampled_from(["array", "object"])
                         ).map(lambda text: (text, text))
lone_surrogates = st.builds(
    lambda before, surrogate, after: before + surrogate + after,
    st.text(string.ascii_letters, max_size=8),
    st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\udfff\ud800"]),
    st.text(string.ascii_letters, max_size=8),
).map(lambda text: (text, json.dumps(text)))
extreme_dates = st.one_of(
    st.sampled_from(["0001-01-01", "0000-01-01", "9999-12-31", "10000-01-01", "-0001-01-01",
                     "2026-02-30", "2026-13-01", "1899-12-31", "+2026-01-01", "2026-1-1",
                     "2026-01-01T25:00:00", "1970-01-01", "2038-01-19"]),
    st.dates().map(str),
).map(lambda text: (text, json.dumps(text)))
huge_integers = st.builds(lambda sign, digits: sign + digits, st.sampled_from(["", "-"]),
                          st.integers(19, 6000).map(lambda n: "9" * n)
                          ).map(lambda text: (text, text))
control_characters = st.text(CONTROL, min_size=1, max_size=12).map(
    lambda text: (text, json.dumps(text)))
FAMILIES = {"deep nesting": deep_nesting, "lone surrogates": lone_surrogates,
            "extreme dates": extreme_dates, "huge integers": huge_integers,
            "control characters": control_characters}
ODD_CONTENT_TYPES = [None, "", "text/plain", "application/x-www-form-urlencoded",
                     "multipart/form-data; boundary=x", "application/jsonx",
                     "application/json; charset=utf-16", "application/json; charset=nonsense",
                     "application/json; charset=", "application/json, text/plain",
                     "APPLICATION/JSON", "application/merge-patch+json", "*/*", "\x01\x7f"]


# --- requests -----------------------------------------------------------------------------


def _parameters(path: str, operation: dict) -> list[dict]:
    item = DOCUMENT["paths"][path]
    return [resolve(DOCUMENT, p)
            for p in [*item.get("parameters", []), *operation.get("parameters", [])]]


def _body_schema(operation: dict) -> dict | None:
    body = operation.get("requestBody")
    if body is None:
        return None
    return resolve(DOCUMENT, resolve(DOCUMENT, body)["content"]["application/json"]["schema"])


def _well_formed(schema: dict):
    """A small value the schema accepts (required fields only), built from the document."""
    schema = resolve(DOCUMENT, schema)
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "object":
        return {name: _well_formed(schema["properties"][name])
                for name in schema.get("required", [])}
    if kind == "array":
        return [_well_formed(schema["items"])] * max(1, schema.get("minItems", 1))
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return True
    if schema.get("format") == "email":
        return "hostile@mail.example"
    return "HOSTILE1".ljust(schema.get("minLength", 0), "X")[:schema.get("maxLength", 8)]


def _places(value, schema: dict, at=()) -> list[tuple]:
    """Every place of a body a hostile value can go: the body itself, each field of it
    (those it has, and those its schema knows), each item."""
    schema = resolve(DOCUMENT, schema or {})
    places = [at]
    if isinstance(value, dict):
        for name in {*value, *schema.get("properties", {})}:
            places += _places(value.get(name), schema.get("properties", {}).get(name, {}),
                              (*at, name))
    elif isinstance(value, list) and value:
        places += _places(value[0], schema.get("items", {}), (*at, 0))
    return places


def _with_mark(value, place: tuple):
    """`value` with `MARK` at `place`."""
    if not place:
        return MARK
    head, rest = place[0], place[1:]
    if isinstance(value, dict):
        return {**value, head: _with_mark(value.get(head), rest)}
    return [_with_mark(value[0], rest), *value[1:]]


def _query(pairs: list[tuple[str, str]]) -> str:
    return "&".join(f"{quote(name)}={quote(value.encode('utf-8', 'surrogatepass'), safe='')}"
                    for name, value in pairs)


@pytest.fixture
def world(db):
    """The organisation of the token and its event that takes external tickets."""
    organisation = OrganisationFactory(ticket_shop_url="https://shop.example")
    return organisation, EventFactory(organisation=organisation, external_ticketing=True)


@pytest.fixture
def send(client, make_token, world):
    """`send(method, path, operation, where, hostile, content_type)` -> the response, with
    `hostile` (text, JSON text) at `where` (("query"|"path"|"header", name), ("body", place)
    or ("nowhere", None))."""
    organisation, event = world

    def request(method: str, path: str, operation: dict, where: tuple, hostile: tuple[str, str],
                content_type: str | None = "application/json"):
        text, body_text = hostile
        # A token of its own per example: the per-minute limit would answer the rest.
        token = make_token("read", "scan", "attendance", "tickets", organisation=organisation)
        headers = [("Authorization", f"Bearer {token}")]
        query, url = [], re.sub(r"\{\w+\}", event.id, path)
        kind, name = where
        if kind == "path":
            url = path.replace(f"{{{name}}}", quote(text.encode("utf-8", "surrogatepass"),
                                                   safe=""))
            url = re.sub(r"\{\w+\}", event.id, url)
        elif kind == "query":
            query.append((name, text))
        elif kind == "header":
            headers.append((name, text.encode("utf-8", "surrogatepass")))
        schema = _body_schema(operation)
        content = None
        if kind == "body":
            body = _with_mark(_well_formed(schema), name) if schema else MARK
            content = json.dumps(body).replace(json.dumps(MARK), body_text)
        elif schema is not None:
            content = json.dumps(_well_formed(schema))
        if content is not None and content_type is not None:
            headers.append(("Content-Type", content_type))
        full = f"/v1{url}" + (f"?{_query(query)}" if query else "")
        return client.request(method, full, headers=headers,
                              content=content.encode("utf-8", "surrogatepass")
                              if content is not None else None)

    return request


def _places_of(path: str, operation: dict) -> list[tuple[str, object]]:
    """Where a hostile value can go in a request for the operation."""
    places = [("query", "hostile")]  # a parameter it does not know
    for parameter in _parameters(path, operation):
        places.append((parameter["in"], parameter["name"]))
    schema = _body_schema(operation)
    if schema is not None:
        places += [("body", place) for place in _places(_well_formed(schema), schema)]
    else:
        places.append(("body", ()))  # a body it does not take
    return places


def _answered_without_5xx(response) -> None:
    assert response.status_code < 500, response.text
    request_id = response.headers["x-request-id"]
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error", "meta"}, body
        assert body["meta"]["request_id"] == request_id
        assert body["error"]["code"] and body["error"]["message"]
        if response.status_code == 400:
            assert body["error"]["details"]["params"], body


OPERATION_IDS = [f"{method} {path}" for method, path, _ in OPERATIONS]


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize(("method", "path", "operation"), OPERATIONS, ids=OPERATION_IDS)
def test_hostile_values_anywhere_never_get_a_5xx(send, method, path, operation, family):
    places = _places_of(path, operation)

    @HOSTILE
    @given(where=st.sampled_from(places), hostile=FAMILIES[family])
    def hostile_value(where, hostile):
        _answered_without_5xx(send(method, path, operation, where, hostile))

    hostile_value()


BODIES = [(method, path, operation) for method, path, operation in OPERATIONS
          if "requestBody" in operation]


@pytest.mark.parametrize(("method", "path", "operation"), BODIES,
                         ids=[f"{method} {path}" for method, path, _ in BODIES])
def test_a_missing_or_odd_content_type_never_gets_a_5xx(send, method, path, operation):
    @HOSTILE
    @given(content_type=st.sampled_from(ODD_CONTENT_TYPES))
    def odd_content_type(content_type):
        response = send(method, path, operation, ("nowhere", None), ("", ""), content_type)
        _answered_without_5xx(response)
        if content_type is None:
            assert response.status_code == 415

    odd_content_type()

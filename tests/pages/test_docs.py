"""The API reference at /docs, the address the OAuth metadata names."""

from __future__ import annotations

import html
import json
import re

import jsonschema

from edge.openapi import resolve
from edge.routes import HTTP_METHODS
from pages import views


def test_the_oauth_metadata_points_at_the_reference(client):
    metadata = client.get("/.well-known/oauth-authorization-server").json()
    assert metadata["service_documentation"] == "http://127.0.0.1:8080/docs"
    response = client.get("/docs")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["Cache-Control"] == "public, max-age=60"
    assert "<script" not in response.text


def test_the_reference_lists_every_operation_of_the_document(client, app):
    page = html.unescape(client.get("/docs").text)
    document = client.get("/v1/openapi.json").json()
    count = 0
    for path, item in document["paths"].items():
        for method in (m for m in HTTP_METHODS if m in item):
            operation = item[method]
            count += 1
            anchor = f'id="op-{operation["operationId"]}"'
            assert anchor in page, (method, path)
            section = page.split(anchor, 1)[1].split("</article>", 1)[0]
            assert f"<code>{method.upper()} /v1{path}</code> — {operation['summary']}" in section
            for code in operation["responses"]:
                assert f"<td>{code}</td>" in section, (method, path, code)
            scopes = {s for requirement in operation.get("security", document["security"])
                      for scope_list in requirement.values() for s in scope_list}
            for scope in scopes:
                assert f"<code>{scope}</code>" in section.split("</p>", 1)[0]
    assert count == page.count('<article class="operation"') >= 20


def test_the_reference_explains_authentication_limits_and_errors(client):
    page = client.get("/docs").text
    for heading in ("Authentication", "Errors", "Pagination", "Caching", "Rate limits"):
        assert re.search(rf"<h2>{heading}</h2>", page), heading
    assert "<code>Authorization: Bearer &lt;ACCESS_TOKEN&gt;</code>" in page
    assert '<th scope="col">Status</th>' in page and "<td><code>rate_limited</code></td>" in page
    assert "<code>Retry-After</code>" in page


def test_a_parameter_is_listed_with_its_place_and_type(client):
    page = client.get("/docs").text
    section = page.split('id="op-list_events"', 1)[1].split("</article>", 1)[0]
    assert "<td><code>limit</code></td><td>query</td><td>integer</td>" in section
    assert "<td><code>id</code> (required)</td><td>path</td>" in page.split(
        'id="op-get_event"', 1)[1].split("</article>", 1)[0]


def _operation(page: str, operation_id: str) -> str:
    return page.split(f'id="op-{operation_id}"', 1)[1].split("</article>", 1)[0]


def test_list_events_shows_the_event_summary_fields_and_an_example(client):
    page = client.get("/docs").text
    section = _operation(page, "list_events")
    assert '<a href="#schema-EventSummary">EventSummary</a>' in section
    fields = section.split("<caption>Fields of EventSummary</caption>", 1)[1].split("</table>")[0]
    document = client.get("/v1/openapi.json").json()
    summary = document["components"]["schemas"]["EventSummary"]
    for name in summary["properties"]:
        assert f"<td><code>{name}</code></td>" in fields, name
    # Type, nullable and meaning of a field.
    row = fields.split("<td><code>end_date</code></td>", 1)[1].split("</tr>", 1)[0]
    assert "string, date" in row and "nullable" in row and "Last day of a multi-day event" in row
    example = json.loads(html.unescape(section.split("Example answer</summary>", 1)[1]
                                       .split("<code>", 1)[1].split("</code>", 1)[0]))
    assert set(example) == {"data", "meta"} and "updated_at" in example["data"][0]


def test_every_example_answer_is_valid_against_its_schema(client):
    page = client.get("/docs").text
    document = client.get("/v1/openapi.json").json()
    checked = 0
    for path, item in document["paths"].items():
        for method in (m for m in HTTP_METHODS if m in item):
            operation = item[method]
            section = _operation(page, operation["operationId"])
            for code, answer in operation["responses"].items():
                answer = resolve(document, answer)
                content = answer.get("content", {}).get("application/json")
                if not code.startswith("2") or content is None:
                    continue
                shown = section.split(f"Response {code}", 1)[1].split("<pre><code>", 1)[1]
                example = json.loads(html.unescape(shown.split("</code></pre>", 1)[0]))
                validator = jsonschema.Draft202012Validator(
                    {**content["schema"], "components": document["components"]})
                errors = [error.message for error in validator.iter_errors(example)]
                assert not errors, (method, path, code, errors[:3])
                checked += 1
    assert checked >= 20


def test_the_error_envelope_has_examples_of_400_401_403_404_and_429(client):
    page = client.get("/docs").text
    errors = page.split('id="errors"', 1)[1].split("</section>", 1)[0]
    for code, name in (("400", "bad_request"), ("401", "unauthorized"), ("403", "forbidden"),
                       ("404", "not_found"), ("429", "rate_limited")):
        shown = errors.split(f'id="error-{code}"', 1)[1].split("</code></pre>", 1)[0]
        example = json.loads(html.unescape(shown.split("<pre><code>", 1)[1]))
        assert example["error"]["code"] == name and "request_id" in example["meta"]
    for field in ("error", "error.code", "error.message", "error.details", "meta"):
        assert f"<td><code>{field}</code></td>" in errors
    # Each operation's error statuses link to the envelope.
    assert 'href="#error-429"' in _operation(page, "list_events")


def test_the_reference_has_contents_with_a_link_to_every_operation(client):
    page = client.get("/docs").text
    contents = page.split('id="contents"', 1)[1].split("</nav>", 1)[0]
    anchors = re.findall(r'<article class="operation" id="([^"]+)"', page)
    for anchor in anchors:
        assert f'href="#{anchor}"' in contents
        assert f'href="#{anchor}" aria-label=' in page, "each operation links to itself"


def test_the_reference_is_rendered_once_not_per_request(client, monkeypatch):
    first = client.get("/docs")

    def no_rendering(*_args, **_kwargs):
        raise AssertionError("/docs rendered again")

    monkeypatch.setattr(views, "render_template", no_rendering)
    again = client.get("/docs")
    assert again.status_code == 200 and again.text == first.text
    assert client.get("/docs", headers={"If-None-Match": first.headers["ETag"]}).status_code == 304


def test_the_reference_documents_the_member_flag(client):
    """Issue 22: the delivery result tells an organisation with the `tickets` scope whether
    an address has an account; the reference and the schema of the verdict say so."""
    page = html.unescape(client.get("/docs").text)
    section = page.split('id="op-deliver_external_tickets"', 1)[1].split("</article>", 1)[0]
    told = " ".join(re.sub(r"<[^>]+>", " ", section).split())
    assert re.search(r"a token with the tickets scope learns whether an address it sends has "
                     r"an account", told), told
    document = client.get("/v1/openapi.json").json()
    member = document["components"]["schemas"]["DeliveryItemResult"]["properties"]["member"]
    assert "has an account" in member["description"]
    assert "`tickets` scope" in member["description"]

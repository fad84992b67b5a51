"""The API reference at /docs, the address the OAuth metadata names."""

from __future__ import annotations

import html
import re

from edge.routes import HTTP_METHODS


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

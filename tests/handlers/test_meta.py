"""GET /terms and GET /openapi.json: no token, the terms' fields, the served document."""

import uuid

from edge import openapi


def test_terms_need_no_token_and_carry_every_field(client):
    response = client.get("/v1/terms")
    assert response.status_code == 200
    body = response.json()
    terms = body["data"]
    assert terms["version"] == "2026-11-01"
    assert terms["attribution"] == {"text": terms["attribution"]["text"],
                                    "url": "http://127.0.0.1:8080",
                                    "terms": "http://127.0.0.1:8080/v1/terms"}
    assert terms["rate_limits"] == {"per_minute": 120, "per_day": 10000}
    assert set(terms["provider"]) == {"name", "chamber_of_commerce", "vat", "address"}
    assert terms["contact"] and terms["rules"] and terms["data_sources"] and terms["sources_url"]
    assert body["meta"]["attribution"] == terms["attribution"]
    assert response.headers["x-request-id"] == body["meta"]["request_id"]
    uuid.UUID(body["meta"]["request_id"])


def test_terms_are_cacheable_and_revalidate_with_304(client):
    first = client.get("/v1/terms")
    assert first.headers["cache-control"] == "public, max-age=60"
    tag = first.headers["etag"]
    assert tag.startswith('W/"')
    again = client.get("/v1/terms")
    assert again.headers["etag"] == tag, "the tag must not depend on the request id"
    revalidated = client.get("/v1/terms", headers={"If-None-Match": tag})
    assert revalidated.status_code == 304
    assert revalidated.content == b""
    assert revalidated.headers["etag"] == tag
    assert revalidated.headers["cache-control"] == "public, max-age=60"
    assert revalidated.headers["x-request-id"]
    assert client.get("/v1/terms", headers={"If-None-Match": 'W/"other"'}).status_code == 200


def test_openapi_json_is_the_routed_document_unwrapped(client, app):
    response = client.get("/v1/openapi.json")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    document = response.json()
    assert "data" not in document
    assert document["openapi"] == "3.1.0"
    assert document["info"]["version"] == "1.0.0"
    assert document["servers"][0]["url"] == "http://127.0.0.1:8080/v1"
    assert document == openapi.load_document("http://127.0.0.1:8080/v1")
    assert response.content is not None and response.content == app.service.document_json


def test_healthz_answers_when_the_database_does(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}

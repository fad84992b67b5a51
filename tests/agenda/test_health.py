"""/healthz and the database going away; one log line per request."""

import logging

import pytest

from agenda.app import create_app


@pytest.fixture(scope="module")
def unreachable_app():
    # Nothing listens on port 9 of the loopback: every connection is refused at once.
    app = create_app({"database_url": "postgresql+psycopg://postgres@127.0.0.1:9/none"})
    yield app
    app.service.close()


def test_healthz_is_503_when_the_database_is_unreachable(unreachable_app):
    with unreachable_app.test_client() as client:
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable"}


def test_an_api_request_is_503_with_retry_after_when_the_database_is_unreachable(unreachable_app):
    with unreachable_app.test_client() as client:
        response = client.get("/v1/me", headers={"Authorization": "Bearer svc_live_" + "x" * 43})
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "service_unavailable"
    assert int(response.headers["retry-after"]) > 0
    assert "psycopg" not in response.text and "127.0.0.1:9" not in response.text


def test_every_request_logs_one_line_with_its_id_status_and_duration(client, caplog):
    with caplog.at_level(logging.INFO, logger="agenda.access"):
        response = client.get("/v1/terms")
    lines = [r.getMessage() for r in caplog.records if r.name == "agenda.access"]
    assert len(lines) == 1
    assert lines[0].startswith("GET /v1/terms 200 ")
    assert f"request_id={response.headers['x-request-id']}" in lines[0]
    assert "ms" in lines[0]

"""The `agenda` command line: organisations, tokens, migrations."""

import sys
import uuid

from click.testing import CliRunner

from agenda.cli import main


def _run(database_url, *args):
    runner = CliRunner()
    return runner.invoke(main, list(args), env={"AGENDA_DATABASE_URL": database_url},
                         catch_exceptions=False)


def test_db_upgrade_is_idempotent(database_url):
    assert _run(database_url, "db", "upgrade").exit_code == 0
    assert _run(database_url, "db", "upgrade").exit_code == 0


def test_a_created_token_is_the_last_line_and_works(database_url, app):
    name = f"CLI Club {uuid.uuid4().hex[:8]}"
    created = _run(database_url, "organisation", "create", name, "--ticket-shop",
                   "https://shop.example")
    assert created.exit_code == 0, created.output
    organisation_id = created.output.strip()
    result = _run(database_url, "token", "create", "--organisation", name,
                  "--scopes", "read,tickets", "--name", "door laptop", "--per-day", "50")
    assert result.exit_code == 0, result.output
    token = result.output.strip().splitlines()[-1]
    assert token.startswith("svc_live_") and len(token) >= 41
    with app.test_client() as client:
        me = client.get("/v1/me", headers={"Authorization": f"Bearer {token}"}).json()["data"]
    assert me["organisation"]["id"] == organisation_id
    assert me["token"]["scopes"] == ["read", "tickets"]
    assert me["rate_limit"]["per_day"] == 50

    revoked = _run(database_url, "token", "revoke", token[:17])
    assert revoked.exit_code == 0, revoked.output
    with app.test_client() as client:
        assert client.get("/v1/me", headers={"Authorization": f"Bearer {token}"}).status_code == 401


def test_tickets_scope_is_refused_without_a_ticket_shop(database_url):
    name = f"No Shop {uuid.uuid4().hex[:8]}"
    assert _run(database_url, "organisation", "create", name).exit_code == 0
    result = _run(database_url, "token", "create", "--organisation", name,
                  "--scopes", "tickets", "--name", "x")
    assert result.exit_code != 0
    assert "ticket shop" in result.output


def test_unknown_scopes_and_organisations_are_refused(database_url):
    result = _run(database_url, "token", "create", "--organisation", "nobody-at-all",
                  "--scopes", "read", "--name", "x")
    assert result.exit_code != 0 and "No organisation" in result.output
    name = f"Scopes {uuid.uuid4().hex[:8]}"
    _run(database_url, "organisation", "create", name)
    result = _run(database_url, "token", "create", "--organisation", name,
                  "--scopes", "read,admin", "--name", "x")
    assert result.exit_code != 0 and "scopes" in result.output


def test_a_suspended_organisation_can_be_created(database_url, app):
    name = f"Suspended {uuid.uuid4().hex[:8]}"
    assert _run(database_url, "organisation", "create", name, "--suspended").exit_code == 0
    result = _run(database_url, "token", "create", "--organisation", name, "--scopes", "read",
                  "--name", "x")
    token = result.output.strip().splitlines()[-1]
    with app.test_client() as client:
        response = client.get("/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 403


def test_set_limit_raises_a_tokens_daily_quota(database_url, app):
    name = f"Quota {uuid.uuid4().hex[:8]}"
    _run(database_url, "organisation", "create", name)
    token = _run(database_url, "token", "create", "--organisation", name, "--scopes", "read",
                 "--name", "x").output.strip().splitlines()[-1]
    result = _run(database_url, "token", "set-limit", token[:17], "25000")
    assert result.exit_code == 0, result.output
    with app.test_client() as client:
        me = client.get("/v1/me", headers={"Authorization": f"Bearer {token}"}).json()["data"]
    assert me["rate_limit"]["per_day"] == 25000
    assert _run(database_url, "token", "set-limit", token[:17], "0").exit_code != 0
    assert _run(database_url, "token", "set-limit", "svc_live_nothing", "5").exit_code != 0


def test_a_created_person_signs_in_with_the_password_and_has_the_role(database_url, app):
    suffix = uuid.uuid4().hex[:8]
    club = f"Person Club {suffix}"
    _run(database_url, "organisation", "create", club)
    result = _run(database_url, "person", "create", "--email", f"p{suffix}@mail.example",
                  "--handle", f"p{suffix}", "--name", "Pim", "--password", "a long password",
                  "--role", f"{club}:door")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"created p{suffix} (per_")
    with app.test_client() as client:
        page = client.get("/signin")
        csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
        signed_in = client.post("/signin", data={"email": f"P{suffix}@mail.example",
                                                 "password": "a long password", "csrf": csrf,
                                                 "next": "/settings/apps"},
                                follow_redirects=False)
        assert signed_in.status_code == 302
    again = _run(database_url, "person", "create", "--email", f"p{suffix}@mail.example",
                 "--handle", f"q{suffix}", "--name", "Pim", "--password", "a long password")
    assert again.exit_code != 0 and "exists already" in again.output
    bad = _run(database_url, "person", "create", "--email", "x@mail.example", "--handle",
               f"r{suffix}", "--name", "R", "--password", "short", "--role", f"{club}:boss")
    assert bad.exit_code != 0 and "password" in bad.output


def test_serve_runs_a_worker_per_core_and_warns_when_limits_are_per_worker(monkeypatch):
    import os

    started = {}

    def exec_uvicorn(executable, argv):
        started.update(executable=executable, argv=argv,
                       workers=int(argv[argv.index("--workers") + 1]))

    monkeypatch.setattr(os, "execv", exec_uvicorn)
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    monkeypatch.delenv("AGENDA_RATELIMIT_STORAGE", raising=False)
    monkeypatch.setenv("AGENDA_SECRET_KEY", "x")
    monkeypatch.setenv("AGENDA_SITE_URL", "http://127.0.0.1:8080")
    result = CliRunner().invoke(main, ["serve"], catch_exceptions=False)
    assert result.exit_code == 0
    # uvicorn's own command, so that its workers do not import this CLI again (spawn).
    assert started["executable"] == sys.executable
    assert started["argv"][:6] == [sys.executable, "-OO", "-P", "-m", "uvicorn",
                                   "agenda.asgi:app"]
    assert started["workers"] == 3
    assert "rate limits are only exact with AGENDA_RATELIMIT_STORAGE=redis://" in result.stderr
    monkeypatch.setenv("AGENDA_RATELIMIT_STORAGE", "redis://127.0.0.1:6379/0")
    quiet = CliRunner().invoke(main, ["serve", "--workers", "2"], catch_exceptions=False)
    assert started["workers"] == 2 and "rate limits" not in quiet.stderr

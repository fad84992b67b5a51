"""The `agenda` command line: organisations, tokens, migrations."""

import os
import stat
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenda import cli
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


def test_serve_runs_a_worker_per_core_and_warns_when_limits_are_per_worker(monkeypatch,
                                                                          tmp_path):
    monkeypatch.setattr(cli, "MEMORY_FOLDERS", (str(tmp_path),))
    monkeypatch.delenv("AGENDA_HOST_CACHE_PATH", raising=False)
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
    monkeypatch.delenv("AGENDA_HOST_CACHE_PATH")
    monkeypatch.setenv("AGENDA_RATELIMIT_STORAGE", "redis://127.0.0.1:6379/0")
    quiet = CliRunner().invoke(main, ["serve", "--workers", "2"], catch_exceptions=False)
    assert started["workers"] == 2 and "rate limits" not in quiet.stderr
    # Answers are shared in that Redis, not in a file.
    assert "AGENDA_HOST_CACHE_PATH" not in os.environ


def _serve_memory_limits(monkeypatch, tmp_path) -> CliRunner:
    """`agenda serve` of two workers counting in memory, its temporary folder `tmp_path`;
    uvicorn not started."""
    monkeypatch.setattr(os, "execv", lambda *_: None)
    monkeypatch.setattr(cli, "MEMORY_FOLDERS", (str(tmp_path / "memory"), "/nowhere"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv("AGENDA_HOST_CACHE_PATH", raising=False)
    monkeypatch.delenv("AGENDA_RATELIMIT_STORAGE", raising=False)
    monkeypatch.setenv("AGENDA_SECRET_KEY", "x")
    monkeypatch.setenv("AGENDA_SITE_URL", "http://127.0.0.1:8080")
    return CliRunner().invoke(main, ["serve", "--workers", "2"],
                              catch_exceptions=False)


@pytest.mark.parametrize("under", ["memory", "the temporary folder"])
def test_serve_gives_its_workers_a_file_of_their_own_for_answers_started_empty(
        monkeypatch, tmp_path, under):
    if under == "memory":  # a file system in memory first, where there is one
        (tmp_path / "memory").mkdir()
    folder = tmp_path / ("memory" if under == "memory" else "") / f"agenda-{os.getuid()}"
    folder.mkdir(mode=0o700)
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True).stdout.strip()
    files = {name: folder / f"answers-{name}.sqlite3"
             for name in (os.getpid(), ended, os.getppid())}
    for file in files.values():  # this process's of an earlier run, an ended server's, a live
        for suffix in ("", "-wal", "-shm"):
            Path(f"{file}{suffix}").write_bytes(b"earlier")
    assert _serve_memory_limits(monkeypatch, tmp_path).exit_code == 0
    assert os.environ["AGENDA_HOST_CACHE_PATH"] == str(files[os.getpid()])
    assert sorted(folder.iterdir()) == [Path(f"{files[os.getppid()]}{suffix}")
                                        for suffix in ("", "-shm", "-wal")]
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


@pytest.mark.parametrize("folder_is", ["writable by others", "a link"])
def test_serve_shares_no_file_in_a_folder_not_its_users_alone(monkeypatch, tmp_path,
                                                               folder_is):
    folder = tmp_path / f"agenda-{os.getuid()}"
    if folder_is == "a link":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        folder.symlink_to(tmp_path / "elsewhere")
    else:
        folder.mkdir()
        folder.chmod(0o777)
    result = _serve_memory_limits(monkeypatch, tmp_path)
    assert result.exit_code == 0
    assert "is not this user's alone" in result.stderr
    assert "AGENDA_HOST_CACHE_PATH" not in os.environ
    assert not list(folder.iterdir())

"""Real servers for tests that cross a process or a socket: scratch databases, the app
served by uvicorn in a thread, and `agenda serve`."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from agenda.app import create_app
from models import migrate, tokens
from models.db import make_engine, make_sessionmaker
from tests import factories

AGENDA = str(Path(sys.executable).parent / "agenda")


def scratch_database(name: str) -> str:
    """The URL of a new, empty database: on the PostgreSQL server of
    AGENDA_TEST_DATABASE_URL when set (named after `name` and this process), else SQLite."""
    server = os.environ.get("AGENDA_TEST_DATABASE_URL")
    if not server:
        return f"sqlite:///{tempfile.mkdtemp(prefix='agenda-test-')}/agenda.sqlite3"
    url = make_url(server)
    # Unique per process: several runs (and their xdist workers) may share one server.
    database = f"agenda_test_{name}_{os.getpid()}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
        connection.execute(text(f'CREATE DATABASE "{database}"'))
    admin.dispose()
    return url.set(database=database).render_as_string(hide_password=False)


def migrated_database(name: str) -> str:
    """A new database (`scratch_database`) with every migration applied."""
    url = scratch_database(name)
    engine = make_engine(url)
    migrate.upgrade(engine)
    engine.dispose()
    return url


@contextlib.contextmanager
def committed(url: str):
    """A session on `url` whose work is committed as the block ends: for what other
    processes, or requests on connections of their own, must see."""
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine).begin() as session:
            yield session
    finally:
        engine.dispose()


@contextlib.contextmanager
def committing(url: str):
    """A really committing session for the factories, and a list `made` to delete after."""
    engine = make_engine(url)
    session = make_sessionmaker(engine)()
    factories.bind(session)
    made: list = []
    try:
        yield session, made
    finally:
        session.rollback()
        for obj in reversed(made):
            # One at a time, last made first: an event's tickets, batches, marks and mails
            # go with it (ON DELETE CASCADE), then the rest is free to go.
            session.delete(obj)
            session.flush()
        session.commit()
        session.close()
        engine.dispose()


def drop_database(url: str) -> None:
    """Drop a scratch PostgreSQL database (SQLite files go with their temporary folder)."""
    parsed = make_url(url)
    if not parsed.drivername.startswith("postgresql"):
        return
    admin = create_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{parsed.database}" WITH (FORCE)'))
    admin.dispose()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def served_in_thread(app_for: Callable[[str], Any], *,
                     lifespan: str = "on") -> Iterator[tuple[Any, str]]:
    """The app `app_for(site)` makes, served by uvicorn in a thread at `site`: yields both."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    site = f"http://127.0.0.1:{listener.getsockname()[1]}"
    app = app_for(site)
    server = uvicorn.Server(uvicorn.Config(app, lifespan=lifespan, log_level="warning",
                                           access_log=False, ws="none"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        yield app, site
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        listener.close()


@contextlib.contextmanager
def served_with_a_token(name: str, **settings) -> Iterator[tuple[Any, str, str]]:
    """The app on a new migrated database (`name`), with `settings`, served in a thread:
    yields it, its site and a live read token. The database is dropped after."""
    url = migrated_database(name)
    with committed(url) as session:
        factories.bind(session)
        _, token = tokens.create_token(session, organisation=factories.OrganisationFactory(),
                                       name=name, scopes=["read"])
    made = []

    def app_for(site):
        made.append(create_app({"database_url": url, "secret_key": "s", "site_url": site,
                                **settings}))
        return made[0]

    try:
        with served_in_thread(app_for) as (app, site):
            yield app, site, token
    finally:
        for app in made:
            app.service.close()
        drop_database(url)


def fresh_interpreter(script: str, *args: str) -> str:
    """The last line `script` prints, run with `args` by a new Python at the checkout's top
    (one that has not imported what this one has for other tests)."""
    top = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", script, *args], cwd=top,
                          env={**os.environ, "PYTHONPATH": str(top)}, capture_output=True,
                          text=True, timeout=120, check=True)
    return done.stdout.splitlines()[-1]


def wait_until_up(url: str, process: subprocess.Popen) -> None:
    for _ in range(600):
        assert process.poll() is None, "the server exited"
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("the server did not start")


@contextlib.contextmanager
def agenda_server(env: dict, *, workers: int, log=subprocess.DEVNULL, cwd=None):
    """`agenda serve` with `env` on a free port (started in `cwd`, if given), up; yields its
    base URL and its process, which leads a session of its own (its workers are in it).
    Its standard error (the log) goes to `log`, a file open for writing."""
    port = free_port()
    env = {**os.environ, "AGENDA_SITE_URL": f"http://127.0.0.1:{port}", **env}
    server = subprocess.Popen([AGENDA, "serve", "--port", str(port), "--workers", str(workers)],
                              env=env, stdout=subprocess.DEVNULL, stderr=log, cwd=cwd,
                              start_new_session=True)
    try:
        wait_until_up(f"http://127.0.0.1:{port}/healthz", server)
        yield f"http://127.0.0.1:{port}", server
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)


@contextlib.contextmanager
def agenda_serve(env: dict, *, workers: int, log=subprocess.DEVNULL, cwd=None):
    """`agenda_server`'s base URL alone."""
    with agenda_server(env, workers=workers, log=log, cwd=cwd) as (base, _server):
        yield base


class FreezingRelay:
    """A TCP relay to PostgreSQL that can stop relaying (`frozen`): what it holds it passes
    on once thawed."""

    def __init__(self, host: str, port: int):
        self.target = (host, port)
        self.frozen = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = [self.listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self.listener.accept()
                server = socket.create_connection(self.target)
                self.sockets += [client, server]
                for source, target in ((client, server), (server, client)):
                    threading.Thread(target=self._pump, args=(source, target),
                                     daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                while self.frozen.is_set():
                    time.sleep(0.02)
                target.sendall(data)
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        for each in self.sockets:
            with contextlib.suppress(OSError):
                each.close()

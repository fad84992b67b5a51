"""What a process knows of the database without asking it: the catalogue stamp and the
live tokens it has seen, kept current by PostgreSQL notifications.

Every request is admitted with its token and the catalogue stamp (models/stamp.py). Read
from the database, that is a round trip a request, and it was most of the cost of an
answer served again from the response cache. So each process listens (LISTEN) on a
connection of its own, on a thread of its own: migration 0008 has the database notify
`agenda_catalogue` with the new stamp as a change to public data commits, and
`agenda_tokens` as a token is revoked, changed or deleted or an organisation suspended.
Notifications go out with the commit, whoever wrote (a request on any host, an import, an
operator's SQL), and are dropped with a rollback.

What is known is used only while the connection is up: before the first LISTEN, after a
lost connection (until it is back and the stamp read again) and for tokens not seen yet,
requests read the database as before. A token is known again after each read of it, and
only if no notification came while it was being read (the generation), so a read that
raced a revocation cannot bring the token back. Writes of this process (`unsettle`) are
forgotten at their commit, without waiting for their notification.

A request does not wait for the thread either: before it trusts what is known, it looks
whether a notification has reached the connection and applies it itself (a poll of the
socket, ~1 µs): a busy worker's thread may wait for the interpreter for milliseconds.
What remains is the moment between the database's commit and its notification reaching
this host's socket; the response cache does not serve a kept answer before the
database's stamp has confirmed the one known here (edge/admission.py `CurrentStamp`).
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import select
import threading

import psycopg
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import sessionmaker

from adapters.direct import conninfo

log = logging.getLogger("agenda.watch")
CATALOGUE = "agenda_catalogue"
TOKENS = "agenda_tokens"
# As the connection shows in pg_stat_activity.
APPLICATION_NAME = "agenda watch"
# A quiet connection is probed this often, so that a silently lost one is noticed.
PROBE_SECONDS = 5.0
# Known tokens per process; when full, the least recently used one is forgotten.
MAX_TOKENS = 10_000
# The tables a token is admitted from (models/tokens.py `_TOKEN_ROW`).
TOKEN_TABLES = frozenset({"api_tokens", "organisations"})


@dataclasses.dataclass(frozen=True)
class KnownToken:
    """A live token as last read: what it admits as (a `tokens.Caller`), and when it was
    last marked used (it is read again, and marked, once that is a while ago)."""

    caller: object
    last_used_at: int


class Watch:
    """The catalogue stamp and live tokens of one database, for one process."""

    def __init__(self, database_url: str, *, max_tokens: int = MAX_TOKENS):
        self._conninfo = conninfo(database_url)
        self._max_tokens = max_tokens
        self._lock = threading.Lock()
        self._listening = False
        self._stamp: str | None = None
        self._tokens: collections.OrderedDict[str, KnownToken] = collections.OrderedDict()
        # Counts every notification and forgetting: a read learns only if none came during it.
        self.generation = 0
        # The listening connection while it listens; it is used only under the lock, and not
        # by requests while the thread probes it (`_probing`: the probe may wait long).
        self._connection: psycopg.Connection | None = None
        self._probing = False
        self._closing = threading.Event()
        self._listened = threading.Event()
        self._thread = threading.Thread(target=self._listen, name="watch", daemon=True)

    def start(self) -> Watch:
        """Start listening (on a thread of its own)."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop listening; everything is read from the database from now on."""
        self._closing.set()
        self._forget()

    def wait_listening(self, timeout: float) -> bool:
        """Whether the watch listens, after waiting up to `timeout` seconds for it."""
        return self._listened.wait(timeout)

    def token(self, token_hash: str, moment: int, due: int) -> tuple[KnownToken, str] | None:
        """The known token of this hash and the current stamp, or None when either is not
        known, or the token was last marked used `due` seconds ago or longer."""
        with self._lock:
            if not self._receive():
                return None
            known = self._tokens.get(token_hash)
            if known is None or self._stamp is None or moment - known.last_used_at >= due:
                return None
            self._tokens.move_to_end(token_hash)
            return known, self._stamp

    def learn(self, token_hash: str, known: KnownToken, stamp: str, generation: int) -> None:
        """Remember a token and the stamp read with it at `generation`, unless something
        changed since (or the watch does not listen)."""
        with self._lock:
            if not self._listening or generation != self.generation:
                return
            self._stamp = stamp
            self._tokens[token_hash] = known
            self._tokens.move_to_end(token_hash)
            while len(self._tokens) > self._max_tokens:
                self._tokens.popitem(last=False)

    def unsettle(self, *, catalogue: bool, tokens: bool) -> None:
        """Forget what a write of this process (just committed) may have changed."""
        with self._lock:
            self.generation += 1
            if catalogue:
                self._stamp = None
            if tokens:
                self._tokens.clear()

    def _forget(self) -> None:
        with self._lock:
            self._forgotten()
        self._listened.clear()

    def _forgotten(self) -> None:
        """Forget everything; nothing is learnt until the thread listens again (under the
        lock)."""
        self.generation += 1
        self._listening = False
        self._connection = None
        self._probing = False
        self._stamp = None
        self._tokens.clear()

    def _listen(self) -> None:
        """The thread: listen, and after a lost connection listen again (with a back-off)."""
        pause = 0.1
        try:
            while not self._closing.is_set():
                try:
                    with psycopg.connect(self._conninfo, autocommit=True, connect_timeout=5,
                                         application_name=APPLICATION_NAME,
                                         keepalives=1, keepalives_idle=10,
                                         keepalives_interval=5,
                                         keepalives_count=3) as connection:
                        self._follow(connection)
                except psycopg.Error as error:
                    log.warning("Not listening to the database (reading it every request): "
                                "%s", error)
                except Exception:  # noqa: BLE001 - never stop listening over one failure
                    log.exception("Not listening to the database (reading it every request)")
                # A connection that listened starts the back-off afresh.
                pause = 0.1 if self._listened.is_set() else min(pause * 2, 5.0)
                self._forget()
                self._closing.wait(pause)
        finally:
            # However the thread ends, nothing it knew is used any more.
            self._forget()

    def _follow(self, connection: psycopg.Connection) -> None:
        for channel in (CATALOGUE, TOKENS):
            connection.execute(f"LISTEN {channel}")
        # Read after LISTEN: a change committed from here on is also notified.
        stamp = connection.execute("SELECT stamp FROM catalogue_stamp WHERE id = 1").fetchone()
        with self._lock:
            self.generation += 1
            self._listening = True
            self._connection = connection
            self._stamp = stamp[0]
            self._tokens.clear()
            # What comes with the probe below is handed over by psycopg.
            connection.add_notify_handler(self._handed_over)
        self._listened.set()
        while not self._closing.is_set():
            arrived = _readable(connection.pgconn.socket, PROBE_SECONDS)
            with self._lock:
                if self._connection is not connection:
                    return  # forgotten (closed) meanwhile
                self._probing = not arrived
            if not arrived:
                # Not under the lock: a lost connection may keep the probe waiting.
                connection.execute("SELECT 1")
            with self._lock:
                self._probing = False
                self._receive()

    def _handed_over(self, notification: psycopg.Notify) -> None:
        with self._lock:
            self._notified(notification.channel, notification.payload)

    def _receive(self) -> bool:
        """Apply what has reached the listening connection (under the lock): in a request,
        whatever has come since the thread last looked. False while the thread probes the
        connection (the request reads the database). A failure is raised in the thread
        (which listens again); a request forgets everything and reads the database."""
        connection = self._connection
        if connection is None:
            return True
        if self._probing and threading.current_thread() is not self._thread:
            return False
        try:
            pgconn = connection.pgconn
            if _readable(pgconn.socket, 0):
                pgconn.consume_input()
            while (notification := pgconn.notifies()) is not None:
                self._notified(notification.relname.decode(), notification.extra.decode())
        except Exception:
            if threading.current_thread() is self._thread:
                raise
            log.exception("Not trusting the listening connection until it listens again")
            self._forgotten()
        return True

    def _notified(self, channel: str, payload: str) -> None:
        """One notification (under the lock)."""
        self.generation += 1
        if channel == CATALOGUE:
            self._stamp = payload
        else:
            self._tokens.clear()


def _readable(socket: int, timeout: float) -> bool:
    """Whether the database has sent something on `socket`, waiting up to `timeout` s."""
    poll = select.poll()
    poll.register(socket, select.POLLIN)
    return bool(poll.poll(timeout * 1000))


def forget_on_commit(watch: Watch, engine: Engine, sessions: sessionmaker, *,
                     catalogue: frozenset[str]) -> None:
    """Have `watch` forget, as a session of `sessions` commits, what its statements on
    `engine` changed (the stamp when one of the `catalogue` tables changed): this process's
    next request reads it, even before the notification of the commit has come back.
    (Other processes apply its notification as it reaches them.)"""
    written = threading.local()

    @event.listens_for(engine, "after_cursor_execute")
    def _written(_connection, _cursor, _statement, _parameters, context, _many):
        if context is None or not (context.isinsert or context.isupdate or context.isdelete):
            return
        table = getattr(getattr(context.compiled, "statement", None), "table", None)
        tables = getattr(written, "tables", None)
        if tables is None:
            tables = written.tables = set()
        tables.add(getattr(table, "name", None))

    @event.listens_for(sessions, "after_commit")
    def _committed(_session):
        tables = getattr(written, "tables", None)
        if tables:
            # A statement whose table is not known (None) may have changed anything.
            watch.unsettle(catalogue=bool(tables & catalogue) or None in tables,
                           tokens=bool(tables & TOKEN_TABLES) or None in tables)
        written.tables = None

    @event.listens_for(sessions, "after_rollback")
    def _rolled_back(_session):
        written.tables = None

"""The unit of work: the one transaction of an HTTP request, an MCP call, a door scan or a
command, and the only place that commits or rolls back.

A unit opens its session on first use, commits once when its work succeeded and rolls
back otherwise; domain code only flushes. A step that must be committed before the work
goes on is `commit_step`, named where it happens: a delivery's tickets before their mails
are sent, each mail as it is sent (models/deliveries.py, models/outbox.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from sqlalchemy.orm import Session, sessionmaker


class UnitOfWork:
    """One unit's session, opened on first use (see the module's text)."""

    def __init__(self, sessions: sessionmaker):
        self.sessions = sessions
        self._session: Session | None = None

    @property
    def session(self) -> Session:
        """The unit's session (its transaction begins with the first statement)."""
        if self._session is None:
            self._session = self.sessions()
        return self._session

    def commit_step(self) -> None:
        """Commit what the unit did so far, and go on in a new transaction."""
        self.session.commit()

    def close(self, *, commit: bool) -> None:
        """End the unit: commit when `commit` and its work succeeded, roll back otherwise."""
        session, self._session = self._session, None
        if session is None:
            return
        try:
            if commit:
                session.commit()
        finally:
            session.close()


@contextlib.contextmanager
def unit_of_work(sessions: sessionmaker) -> Iterator[UnitOfWork]:
    """A unit for the block: committed when it ends normally, rolled back on an error."""
    unit = UnitOfWork(sessions)
    try:
        yield unit
    except BaseException:
        unit.close(commit=False)
        raise
    unit.close(commit=True)


@contextlib.contextmanager
def transaction(sessions: sessionmaker) -> Iterator[Session]:
    """The session of a unit for the block (`unit_of_work` for work that needs only it)."""
    with unit_of_work(sessions) as unit:
        yield unit.session

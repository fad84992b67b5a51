"""What the API tests share: the agenda's days, reading list pages, naming the bad
parameters of a 400 and the statements a request runs."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt

from sqlalchemy import event

from models.calendar import today

SITE = "http://127.0.0.1:8080"  # the `app` fixture's site URL


def day(offset: int) -> dt.date:
    """The date `offset` days from today in the agenda's calendar (Europe/Amsterdam, whatever
    the test machine's zone), read when it is asked: a run that crosses Amsterdam's midnight
    builds each test's agenda on the day the service then reads."""
    return today() + dt.timedelta(days=offset)


def page(client, auth, path: str, **params) -> dict:
    """The body of a successful GET of `path`."""
    response = client.get(path, headers=auth, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def bad_params(client, auth, path: str, **params) -> set[str]:
    """The parameters a 400 answer to a GET of `path` names."""
    response = client.get(path, headers=auth, params=params)
    assert response.status_code == 400, response.text
    return {p["name"] for p in response.json()["error"]["details"]["params"]}


@dataclasses.dataclass(frozen=True)
class Listing:
    """One list of the API, at `path`, read the way its tests read it."""

    path: str

    def page(self, client, auth, **params) -> dict:
        """The body of one page of the list."""
        return page(client, auth, self.path, **params)

    def items(self, client, auth, **params) -> list[dict]:
        """The items of one page of up to 100, in order."""
        return self.page(client, auth, limit=100, **params)["data"]

    def ids(self, client, auth, **params) -> list[str]:
        """The ids of one page of up to 100, in order."""
        return [item["id"] for item in self.items(client, auth, **params)]

    def walk(self, client, auth, limit: int, **params) -> list[dict]:
        """Every item, following the cursors `limit` a page; each page counts its items."""
        items, cursor, first = [], None, True
        while first or cursor:
            more = {"cursor": cursor} if cursor else {}
            body = self.page(client, auth, limit=limit, **params, **more)
            assert body["meta"]["count"] == len(body["data"]) <= limit
            items += body["data"]
            cursor, first = body["meta"]["next_cursor"], False
        return items

    def bad(self, client, auth, **params) -> set[str]:
        """The parameters a 400 answer to a GET of the list names."""
        return bad_params(client, auth, self.path, **params)


@contextlib.contextmanager
def statements(engine):
    """The SQL of each statement `engine` runs inside the block, in order."""
    seen: list[str] = []

    def record(_connection, _cursor, statement, *_args):
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)

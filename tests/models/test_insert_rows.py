"""`insert_rows` (models/db.py): many rows in one INSERT, on PostgreSQL as one array a column."""

import pytest
from sqlalchemy import select
from sqlalchemy.exc import DataError

from models.db import insert_rows
from models.people import Mark
from models.tickets import OutboxMail
from tests import factories


def _mail(n: int, **fields) -> dict:
    return {"kind": "waiting", "to_address": f"buyer{n}@mail.example", "subject": f"Mail {n}",
            "body": f"Body {n}\nwith a second line", "ticket_id": None, "status": "pending",
            "attempts": n, "last_error": None, "created_at": 1_700_000_000 + n, "sent_at": None,
            **fields}


def test_rows_are_stored_as_given_in_their_order(db):
    rows = [_mail(n, last_error="x" * 500 if n == 3 else None, sent_at=None if n % 2 else n)
            for n in range(7)]
    db.execute(*insert_rows(db, OutboxMail.__table__, rows))
    stored = db.execute(select(*(OutboxMail.__table__.c[name] for name in rows[0]))
                        .order_by(OutboxMail.id)).all()
    assert [dict(row._mapping) for row in stored] == rows


def test_the_dialects_on_conflict_clauses_apply(db):
    event, person = factories.EventFactory(), factories.PersonFactory()
    factories.MarkFactory(person_id=person.id, event_id=event.id, kind="interested")
    statement, parameters = insert_rows(db, Mark.__table__, [
        {"person_id": person.id, "event_id": event.id, "kind": "going", "created_at": 1}])
    db.execute(statement.on_conflict_do_update(index_elements=["person_id", "event_id"],
                                               set_={"kind": "going"}), parameters)
    db.expire_all()
    assert db.scalars(select(Mark.kind).where(Mark.person_id == person.id)).all() == ["going"]


def test_a_value_too_long_for_its_column_is_refused_not_cut(db):
    if db.get_bind().dialect.name != "postgresql":
        pytest.skip("SQLite does not enforce a column's length")
    with pytest.raises(DataError, match="too long"):
        db.execute(*insert_rows(db, OutboxMail.__table__, [_mail(1, kind="k" * 31)]))

"""Migrations that move data: run from the revision before them on a database with rows."""

from sqlalchemy import text

from models import migrate
from models.db import make_engine
from models.tickets import DeliveryBatch
from tests import factories
from tests.servers import committed, drop_database, scratch_database


def _outbox_row(connection, to: str, ticket_id: str | None) -> None:
    connection.execute(text(
        "INSERT INTO outbox (kind, to_address, subject, body, ticket_id, status, attempts, "
        "created_at) VALUES ('ticket_waiting', :to, 'S', 'B', :ticket, 'pending', 0, 1)"),
        {"to": to, "ticket": ticket_id})


def test_0009_gives_each_queued_mail_the_delivery_of_its_ticket(worker_id):
    url = scratch_database(f"{worker_id}_migration_0009")
    engine = make_engine(url)
    try:
        migrate.upgrade(engine, "0008")
        with committed(url) as session:
            factories.bind(session)
            event = factories.EventFactory(external_ticketing=True)
            session.add(DeliveryBatch(id="dlv_old", event_id=event.id, source="other",
                                      created_at=1))
            session.flush()
            delivered = factories.TicketFactory(event_id=event.id, batch_id="dlv_old")
            sold = factories.TicketFactory(event_id=event.id, batch_id=None)
            session.flush()
            ids = delivered.id, sold.id
        with engine.begin() as connection:
            _outbox_row(connection, "delivered@mail.example", ids[0])
            _outbox_row(connection, "sold@mail.example", ids[1])
            _outbox_row(connection, "nobody@mail.example", None)

        migrate.upgrade(engine, "0009")
        with engine.connect() as connection:
            rows = connection.execute(text(
                "SELECT to_address, batch_id FROM outbox ORDER BY id")).all()
        assert rows == [("delivered@mail.example", "dlv_old"), ("sold@mail.example", None),
                        ("nobody@mail.example", None)]

        migrate.downgrade(engine, "0008")
        with engine.connect() as connection:
            assert connection.execute(text("SELECT count(*) FROM outbox")).scalar_one() == 3
    finally:
        engine.dispose()
        drop_database(url)

"""Alembic environment: runs migrations on the connection or URL the caller configured."""

from alembic import context
from sqlalchemy import create_engine

import models.schema  # noqa: F401  (registers every table on Base.metadata)
from models.db import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    """Migrate on a connection handed in by `models.migrate`, or on the configured URL."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = create_engine(config.get_main_option("sqlalchemy.url"))
    with engine.begin() as connection:
        _run(connection)
    engine.dispose()


def _run(connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata,
                      render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()

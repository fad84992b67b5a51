"""Bring a database to the newest schema with Alembic."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import Engine

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(url: str) -> Config:
    """An Alembic configuration for the database at `url`, without an ini file."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply every migration up to `revision` that `engine`'s database has not had yet."""
    _run(command.upgrade, engine, revision)


def downgrade(engine: Engine, revision: str) -> None:
    """Undo the migrations of `engine`'s database after `revision`."""
    _run(command.downgrade, engine, revision)


def _run(step, engine: Engine, revision: str) -> None:
    config = alembic_config(engine.url.render_as_string(hide_password=False))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        step(config, revision)

"""The database: declarative base, engine set-up and id/time conventions."""

from __future__ import annotations

import math
import secrets
import time

from sqlalchemy import BigInteger, MetaData, create_engine, event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# Unix seconds, as every timestamp of the API.
Timestamp = BigInteger


class Base(DeclarativeBase):
    """Base of every model; constraint names are fixed so migrations stay stable."""

    metadata = MetaData(naming_convention=NAMING)


def new_id(kind: str) -> str:
    """A new public id: a short kind prefix and 16 random url-safe characters."""
    return f"{kind}_{secrets.token_urlsafe(12)}"


def now() -> int:
    """The current time in Unix seconds."""
    return int(time.time())


def haversine_km(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    """Great-circle distance in km (PostgreSQL has the same function, from migration 0002)."""
    a = (math.sin(math.radians(lat2 - lat1) / 2) ** 2
         + math.cos(math.radians(lat1)) * math.cos(math.radians(lat2))
         * math.sin(math.radians(lng2 - lng1) / 2) ** 2)
    return 12742.0 * math.asin(math.sqrt(a))


def make_engine(url: str, *, pool_size: int = 10) -> Engine:
    """An engine for `url`: SQLite with foreign keys and WAL, PostgreSQL with a sized pool."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 15})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record):
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            if ":memory:" not in url:
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()
            dbapi_connection.create_function("haversine_km", 4, haversine_km, deterministic=True)

        return engine
    # Connexion runs sync handlers on 10 threads per process: one connection each, a few spare.
    return create_engine(url, pool_size=pool_size, max_overflow=5, pool_pre_ping=True,
                         pool_recycle=1800)


def make_sessionmaker(engine: Engine) -> sessionmaker:
    """Sessions that keep loaded objects usable after commit."""
    return sessionmaker(bind=engine, expire_on_commit=False, autoflush=True)


def insert_for(session: Session, table):
    """The dialect's INSERT for `table`, which has `on_conflict_do_nothing/_update`."""
    dialect = session.get_bind().dialect.name
    return (postgresql.insert if dialect == "postgresql" else sqlite.insert)(table)

"""Statements run straight on a pooled DBAPI connection, for the hot key lookups."""

from __future__ import annotations

import collections
import re

from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError


def rows(connection, statement, params: dict) -> list:
    """The rows of `statement` on a Core connection (none for a statement without rows): what
    `DirectStatements.execute` answers, inside a connection's transaction."""
    result = connection.execute(statement, params)
    return result.all() if result.returns_rows else []


# What ends a statement at its deadline (models/db.py): PostgreSQL's statement and lock
# timeouts (SQLSTATE), SQLite's busy timeout and interrupt. Not a dropped connection: the
# statement is not run again, which would double the wait.
TIMED_OUT = frozenset({"57014", "55P03", "SQLITE_BUSY", "SQLITE_INTERRUPT"})


def timed_out(error: Exception) -> bool:
    """Whether a DBAPI error ended a statement at its deadline (see `TIMED_OUT`)."""
    return bool({getattr(error, "sqlstate", None),
                 getattr(error, "sqlite_errorname", None)} & TIMED_OUT)


def dropped(error: Exception, dbapi) -> bool:
    """Whether a DBAPI error of `dbapi` lost its connection (an operational error that is
    not a deadline): a statement that only reads may run again on a new one."""
    return isinstance(error, dbapi.OperationalError) and not timed_out(error)


class DirectStatements:
    """Runs a few hot, prebuilt statements on a pooled DBAPI connection in autocommit, each
    its own transaction, without the ORM's or the Connection's machinery (~50 µs a statement
    instead of ~280 µs): the token lookup every request makes, a door's scan.
    `execute(statement, params)` returns the rows (of a SELECT, or of an UPDATE's RETURNING),
    each with attribute access, like a Core result's `.all()`.

    No pre-ping: a connection the database dropped fails once, is discarded, and the
    statement runs again on a new one. (So may a write that had committed as its connection
    dropped: only a conditional write, which the second time changes nothing, belongs here.)
    """

    def __init__(self, engine: Engine):
        self.engine = engine
        self._compiled: dict[int, tuple[str, dict, tuple, type | None, tuple | None]] = {}

    def execute(self, statement, params: dict) -> list:
        sql, defaults, order, row_type, processors = self._compile(statement)
        values = {**defaults, **params}
        arguments = tuple(values[name] for name in order)
        dialect = self.engine.dialect
        for attempt in (1, 2):
            try:
                pooled = self.engine.raw_connection()
            except dialect.loaded_dbapi.Error as error:
                raise DBAPIError.instance(sql, params, error, dialect.loaded_dbapi.Error,
                                          connection_invalidated=True) from error
            try:
                dialect.set_isolation_level(pooled.dbapi_connection, "AUTOCOMMIT")
                try:
                    cursor = pooled.dbapi_connection.cursor()
                    cursor.execute(sql, arguments)
                    rows = cursor.fetchall() if row_type else []
                    cursor.close()
                finally:
                    dialect.reset_isolation_level(pooled.dbapi_connection)
                if processors:
                    rows = [[value if process is None else process(value)
                             for process, value in zip(processors, row)] for row in rows]
                return [row_type._make(row) for row in rows]
            except dialect.loaded_dbapi.Error as error:
                lost = dropped(error, dialect.loaded_dbapi)
                if lost:
                    pooled.invalidate()
                if not lost or attempt == 2:
                    # As SQLAlchemy raises it, so that the error handler knows it (503).
                    raise DBAPIError.instance(sql, params, error, dialect.loaded_dbapi.Error,
                                              connection_invalidated=lost) from error
            finally:
                pooled.close()
        raise AssertionError("unreachable")

    def _compile(self, statement) -> tuple[str, dict, tuple, type | None, tuple | None]:
        """(SQL with positional parameters, default values, parameter names in order, row type
        or None for a statement without rows, the columns' result processors or None where no
        column has one: SQLite's dates come as text, say)."""
        known = self._compiled.get(id(statement))
        if known is None:
            dialect = self.engine.dialect
            compiled = statement.compile(dialect=dialect)
            sql = str(compiled)
            if compiled.positional:  # SQLite: `?` in order
                order = tuple(compiled.positiontup)
            else:  # psycopg: `%(name)s`, rewritten as `%s` (cheaper to bind than a dict)
                order = tuple(re.findall(r"%\((\w+)\)s", sql))
                sql = re.sub(r"%\((\w+)\)s", "%s", sql)
            columns = statement.exported_columns
            processors = tuple(column.type.dialect_impl(dialect).result_processor(dialect, None)
                               for column in columns)
            known = (sql, dict(compiled.params), order,
                     collections.namedtuple("Row", [column.key for column in columns])
                     if columns else None,
                     processors if any(processors) else None)
            self._compiled[id(statement)] = known
        return known


class KeptStatement:
    """One prebuilt statement without parameters, run again and again (one run at a time),
    on a connection of `engine`'s pool kept for it, in autocommit and prepared: the
    catalogue stamp that confirms a kept answer (edge/admission.py `CurrentStamp`). ~80 µs
    of CPU a run against `DirectStatements`' ~140 (no checkout, no isolation switched
    twice). `value()` is its first row's first column. PostgreSQL (psycopg) only.

    A connection the database dropped fails once, is discarded and the statement runs
    again on a new one; a statement past its deadline (models/db.py) fails."""

    def __init__(self, engine: Engine, statement):
        self.engine = engine
        self._sql = str(statement.compile(dialect=engine.dialect,
                                          compile_kwargs={"literal_binds": True}))
        self._pooled = None

    def value(self):
        dbapi = self.engine.dialect.loaded_dbapi
        for attempt in (1, 2):
            if self._pooled is None:
                self._pooled = self.engine.raw_connection()
                self._pooled.dbapi_connection.autocommit = True
            try:
                return self._pooled.dbapi_connection.execute(self._sql, prepare=True).fetchone()[0]
            except dbapi.Error as error:
                if not dropped(error, dbapi):
                    raise
                self._pooled.invalidate()
                self._pooled = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Give its connection back to the pool (whose disposal closes it)."""
        if self._pooled is not None:
            self._pooled.close()
            self._pooled = None

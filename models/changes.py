"""The change feed (GET /changes): which public resources changed or stopped being public,
in the order the changes committed, for partners that keep a copy of the catalogue.

Database triggers (migration 0010) write a row for each change to an event, venue, artist,
organisation or release, whoever makes it: a request, `agenda import`, `agenda demo-data`
or an operator's SQL. A change is an `upsert` when the resource is public after it, a
`delete` (a tombstone) when it stopped being public: deleted, no longer approved, or its
organisation suspended (the organisation and its events). A change to a resource that was
not public before and is not after (a draft) writes nothing. A change to an event's genres
or line-up, or to a release's artists, is a change of that event or release; a change to a
venue or an organisation is not a change of the events that show its name.

Order by commit, not by clock:
- PostgreSQL: a change row notes its transaction (`pg_current_xact_id()`, xid8). As that
  transaction commits, the catalogue stamp's renewal (models/stamp.py, a deferred trigger)
  numbers it in `catalogue_commits` from a sequence, after renewing the stamp row: that row
  stays locked until the transaction has committed, so the next transaction is numbered
  only once this one is visible. Commit numbers therefore run in commit order and a reader
  that has seen number n can never later meet a smaller one. (Ordering by transaction id
  and reading only below `pg_snapshot_xmin(pg_current_snapshot())` would also never skip a
  change, but it lists transactions in the order they began: when an older transaction
  re-approves an event after a younger one rejected it and committed, the feed would end
  on the younger one's `delete`, and a partner would drop a public event.)
- SQLite lets one transaction write at a time, from its first write to its commit, so the
  order rows are inserted in (`id`, AUTOINCREMENT) is the order they commit in.

Rows are kept at least `RETENTION` (30 days): `agenda worker` prunes older ones
(`prune`), in batches, outside any transaction that writes the catalogue (pruning at
commit would hold the stamp row's lock, and with it every other writer, while a month-old
import's rows are deleted). A cursor says since when its reader has seen everything up to
its position; one older than `RETENTION` may have missed pruned changes and is refused.
"""

from __future__ import annotations

import dataclasses

from sqlalchemy import BigInteger, Column, MetaData, String, Table, and_, select, true
from sqlalchemy.orm import Session
from sqlalchemy.types import NullType

from models.db import Timestamp
from models.errors import BadRequest
from models.paging import Filters, Page

TYPES = ("event", "venue", "artist", "organisation", "release")
RETENTION = 30 * 24 * 3600
# Pruned only after a day more than a cursor lives, so that a change committed while a
# reader's hour-old cursor was made is never pruned before that cursor is refused.
PRUNED_AFTER = RETENTION + 24 * 3600
PRUNE_BATCH = 10_000
# A position after every change of a commit (ids never reach it).
END_OF_COMMIT = 2**63 - 1
# A cursor at the end of the feed is dated to the hour it was made in, as the list cursors
# are, so that polling within the hour gets the same cursor (and the same ETag).
HOUR = 3600

# Not in `Base.metadata`: the migration creates these, with columns that differ per database.
_metadata = MetaData()
changes_table = Table(
    "catalogue_changes", _metadata,
    Column("id", BigInteger, primary_key=True),
    Column("type", String(20)),
    Column("resource_id", String(80)),
    Column("op", String(6)),
    Column("at", Timestamp),  # SQLite: when it was written (and committed)
    Column("txid", NullType),  # PostgreSQL: its transaction (xid8)
)
commits_table = Table(  # PostgreSQL only: one row per committed transaction
    "catalogue_commits", _metadata,
    Column("seq", BigInteger, primary_key=True),
    Column("txid", NullType),
    Column("at", Timestamp),  # when it committed
)


@dataclasses.dataclass(frozen=True)
class Change:
    """One item of the feed."""

    type: str
    id: str
    op: str
    at: int


@dataclasses.dataclass(frozen=True)
class ChangeFilters(Filters):
    """The filters of GET /changes: the resource types wanted (None: all)."""

    kind = "changes"

    types: str | None = None

    @classmethod
    def of(cls, types: str | None) -> ChangeFilters:
        """Filters from the `types` parameter, a comma list (order and repeats do not count).
        A string, not an array, in the document: the edge reads plain values only
        (edge/arguments.py)."""
        return cls(types=None if types is None else ",".join(sorted(set(types.split(",")))))

    def wanted(self) -> list[str]:
        """The types asked for."""
        return TYPES if self.types is None else self.types.split(",")


def _refuse(name: str, message: str):
    raise BadRequest([{"name": name, "in": "query", "message": message}])


def list_changes(session: Session, *, filters: ChangeFilters, since: int | None,
                 after: list | None, limit: int, now: int) -> Page:
    """The changes after position `after` (from a cursor), or from the time `since`, or from
    the oldest kept; the next position is always given, also after the last change."""
    if after is not None and since is not None:
        _refuse("since", "give either since or cursor: the cursor holds its own position")
    if after is not None:
        seq, id_, seen_at = after
        if seen_at < now - RETENTION:
            _refuse("cursor", "is older than the 30 days the change feed keeps; start again "
                              "from a recent time with since (after reading the lists)")
        position = (seq, id_)
    elif since is not None:
        if since < now - RETENTION:
            _refuse("since", "is older than the 30 days the change feed keeps; read the "
                             "lists for a full copy, then follow the feed from then")
        if since > now:
            _refuse("since", "is in the future")
        position = _position_before(session, since)
    else:
        position = (0, 0)
    if session.get_bind().dialect.name == "postgresql":
        rows = _postgresql_rows(session, position, filters.wanted(), limit + 1)
    else:
        rows = session.execute(_sqlite_page(position, filters.wanted(), limit + 1)).all()
    items = [Change(type=row.type, id=row.resource_id, op=row.op, at=row.at)
             for row in rows[:limit]]
    if len(rows) > limit:
        last = rows[limit - 1]
        return Page(items=items, next_key=(last.seq, last.id, last.at))
    if rows:
        position = (rows[-1].seq, rows[-1].id)
    # Everything up to the position was seen as of now: what commits later is dated later.
    return Page(items=items, next_key=(*position, now // HOUR * HOUR))


def _postgresql_rows(session: Session, position: tuple, types: list[str], count: int) -> list:
    """The rest of the commit the position is in, then the commits after it: each part one
    index range (a position deep inside an import's commit does not rescan its start)."""
    seq, id_ = position
    rows = session.execute(_postgresql_page(commits_table.c.seq == seq, changes_table.c.id > id_,
                                            types, count)).all() if id_ < END_OF_COMMIT else []
    if len(rows) < count:
        rows += session.execute(_postgresql_page(commits_table.c.seq > seq, true(), types,
                                                 count - len(rows))).all()
    return rows


def _postgresql_page(commit, change, types: list[str], count: int):
    changes, commits = changes_table, commits_table
    # At most `count` rows of each commit, in order, so that sorting the page never sorts
    # a whole import's commit.
    of_commit = (select(changes.c.id, changes.c.type, changes.c.resource_id, changes.c.op)
                 .where(changes.c.txid == commits.c.txid, change, changes.c.type.in_(types))
                 .order_by(changes.c.id).limit(count).lateral())
    return (select(commits.c.seq, of_commit.c.id, of_commit.c.type, of_commit.c.resource_id,
                   of_commit.c.op, commits.c.at)
            .select_from(commits.join(of_commit, true()))
            .where(commit).order_by(commits.c.seq, of_commit.c.id).limit(count))


def _sqlite_page(position: tuple, types: list[str], count: int):
    changes = changes_table
    return (select(changes.c.id.label("seq"), changes.c.id, changes.c.type,
                   changes.c.resource_id, changes.c.op, changes.c.at)
            .where(changes.c.id > position[1], changes.c.type.in_(types))
            .order_by(changes.c.id).limit(count))


def _position_before(session: Session, since: int) -> tuple:
    """The position after every change committed before `since` (commit times only grow)."""
    if session.get_bind().dialect.name == "postgresql":
        seq = session.scalar(select(commits_table.c.seq).where(commits_table.c.at < since)
                             .order_by(commits_table.c.at.desc(), commits_table.c.seq.desc())
                             .limit(1))
        return (seq or 0, END_OF_COMMIT)
    id_ = session.scalar(select(changes_table.c.id).where(changes_table.c.at < since)
                         .order_by(changes_table.c.at.desc(), changes_table.c.id.desc())
                         .limit(1))
    return (id_ or 0, id_ or 0)


def prune(session: Session, *, now: int, batch: int = PRUNE_BATCH) -> int:
    """Delete up to `batch` changes older than `PRUNED_AFTER`, oldest first; how many."""
    cutoff = now - PRUNED_AFTER
    changes = changes_table
    if session.get_bind().dialect.name != "postgresql":
        oldest = select(changes.c.id).where(changes.c.at < cutoff).order_by(changes.c.id)
        return session.execute(changes.delete().where(
            changes.c.id.in_(oldest.limit(batch).scalar_subquery()))).rowcount
    commits = commits_table
    expired = (select(changes.c.id).join_from(changes, commits,
                                              changes.c.txid == commits.c.txid)
               .where(commits.c.at < cutoff).limit(batch))
    deleted = session.execute(changes.delete().where(
        changes.c.id.in_(expired.scalar_subquery()))).rowcount
    session.execute(commits.delete().where(and_(
        commits.c.at < cutoff,
        ~select(changes.c.id).where(changes.c.txid == commits.c.txid).exists())))
    return deleted

"""Import of catalogue records from JSON Lines (the format: docs/import.md).

All or nothing: `check` parses and checks every line (fields and references)
and names every bad line; only a file without one is written, by `write`,
inside one savepoint, so that a record the database still refuses undoes the
whole file.
"""

from __future__ import annotations

import collections
import dataclasses
import json
from collections.abc import Callable, Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from models import badges, festivals, records
from models.errors import BadRequest

# Ids looked up in the database per query.
_CHUNK = 500

Progress = Callable[[int], None]


@dataclasses.dataclass(frozen=True)
class Line:
    """One checked record: its line number, kind and cleaned values."""

    number: int
    kind: str
    values: dict


@dataclasses.dataclass
class Result:
    """What an import did: per kind, how many records were created, updated or unchanged."""

    counts: dict[str, collections.Counter] = dataclasses.field(
        default_factory=lambda: {kind: collections.Counter() for kind in records.KINDS})

    def summary(self) -> str:
        """One line per kind that the file had, e.g. `event: 3 created, 1 unchanged`."""
        lines = []
        for kind, counter in self.counts.items():
            if counter:
                told = ", ".join(f"{counter[outcome]} {outcome}"
                                 for outcome in ("created", "updated", "unchanged")
                                 if counter[outcome])
                lines.append(f"{kind}: {told}")
        return "\n".join(lines) or "nothing to import"


def check(session: Session, *, lines: Iterable[str], source: str | None = None,
          progress: Progress | None = None) -> list[Line]:
    """Every line parsed and checked; `BadRequest` names each bad line (`line 7`) at once.

    A reference must name a record of an earlier line or one in the database.
    `source` is the origin recorded on records that do not name their own.
    """
    checked: list[Line] = []
    problems: dict[int, list[str]] = collections.defaultdict(list)
    defined: dict[tuple[str, str], int] = {}
    pending: list[tuple[int, records.Reference]] = []
    slugs: dict[str, tuple[str, int]] = {}
    for number, text in enumerate(lines, start=1):
        if progress:
            progress(1)
        if not text.strip():
            continue
        try:
            kind, record = _parse(text, source)
        except BadRequest as error:
            problems[number] += [_say(param) for param in error.params]
            continue
        said = []
        if kind != "organisation" and not _named(record.get("source")):
            # Imported data always names its origin (the `source` of the API's resources).
            said.append("source is required: on the record, or as the file's source")
        try:
            values = records.clean(kind, record)
        except BadRequest as error:
            said += [_say(param) for param in error.params]
        if said:
            problems[number] += said
            if _named(record.get("id")):
                # Lines pointing to this record are told about this line only.
                defined.setdefault((kind, record["id"].strip()), number)
            continue
        key = (kind, values["id"])
        if key in defined:
            problems[number].append(f"{kind} id {values['id']!r} is already on line "
                                    f"{defined[key]}")
            continue
        pending += [(number, ref) for ref in records.references(kind, values)
                    if (ref.kind, ref.id) not in defined]
        if kind == "event" and values["slug"]:
            holder = slugs.setdefault(values["slug"], (values["id"], number))
            if holder[0] != values["id"]:
                problems[number].append(f"slug {values['slug']!r} is already the slug of event "
                                        f"{holder[0]!r} on line {holder[1]}")
        defined[key] = number
        checked.append(Line(number, kind, values))
    for number, ref in _unresolved(session, pending):
        later = defined.get((ref.kind, ref.id))
        where = f" (it is on line {later}: put it before this line)" if later else ""
        problems[number].append(f"{ref.field} {ref.id!r} does not exist{where}")
    if problems:
        raise _bad_file(problems)
    return checked


def _parse(text: str, source: str | None) -> tuple[str, dict]:
    """A line's kind and record; `BadRequest` when it is not a JSON object of a known kind."""
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        raise BadRequest([{"name": "line", "in": "body",
                           "message": f"is not JSON ({error.msg} at column {error.colno})"}]) \
            from None
    if not isinstance(record, dict):
        raise BadRequest([{"name": "line", "in": "body", "message": "is not a JSON object"}])
    kind = record.pop("kind", None)
    if kind not in records.KINDS:
        raise BadRequest([{"name": "kind", "in": "body",
                           "message": f"must be one of {', '.join(records.KINDS)}, "
                                      f"got {kind!r}"}])
    if source and record.get("source") is None:
        record["source"] = source
    return kind, record


def _unresolved(session: Session, pending: list[tuple[int, records.Reference]]
                ) -> list[tuple[int, records.Reference]]:
    """The references of `pending` (not to earlier lines) that the database lacks too."""
    wanted: dict[str, set[str]] = collections.defaultdict(set)
    for _number, ref in pending:
        wanted[ref.kind].add(ref.id)
    present: set[tuple[str, str]] = set()
    for kind, ids in wanted.items():
        model = records.MODELS[kind]
        ordered = sorted(ids)
        for start in range(0, len(ordered), _CHUNK):
            chunk = ordered[start:start + _CHUNK]
            present.update((kind, found) for found in
                           session.scalars(select(model.id).where(model.id.in_(chunk))))
    return [(number, ref) for number, ref in pending if (ref.kind, ref.id) not in present]


def write(session: Session, checked: list[Line], *, progress: Progress | None = None) -> Result:
    """Upsert every checked record in file order, all or nothing; flushes, never commits."""
    result = Result()
    # The session holds what it loaded weakly; held here, the venues, organisations and
    # artists that many lines point to are looked up once, not once per line.
    written = []
    with session.begin_nested():
        for line in checked:
            try:
                record, outcome = records.write(session, kind=line.kind, values=line.values)
            except BadRequest as error:
                # Conflicts only the database can see (a slug or name taken by a record
                # outside the file) surface here; the savepoint undoes the lines before.
                raise _bad_file({line.number: [_say(param) for param in error.params]}) from None
            written.append(record)
            result.counts[line.kind][outcome] += 1
            if progress:
                progress(1)
        reported = {line.values["event_id"] for line in checked if line.kind == "token_report"}
        if reported:
            festivals.refresh(session, reported)
            badges.award(session, festivals.reporters(session, reported))
    return result


def import_lines(session: Session, *, lines: Iterable[str], source: str | None = None) -> Result:
    """Check, then write, a whole file of JSON Lines."""
    return write(session, check(session, lines=lines, source=source))


def _named(value) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _say(param: dict) -> str:
    return f"{param['name']} {param['message']}" if param["name"] != "line" else param["message"]


def _bad_file(problems: dict[int, list[str]]) -> BadRequest:
    numbers = sorted(problems)
    bad = len(numbers)
    return BadRequest(
        [{"name": f"line {number}", "in": "body", "message": "; ".join(problems[number])}
         for number in numbers],
        f"{bad} bad line{'s' if bad != 1 else ''}; nothing was imported.")

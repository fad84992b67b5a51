"""How common a word is among the events' words (`search_key`), as PostgreSQL's own sample of
them tells: what a free-text list chooses its statement by (models/events.py).

ANALYZE keeps a sample of each column (pg_stats: its most common values and a histogram of the
rest, 3,000 entries for `search_key`, migration 0020); the planner estimates a `LIKE '%word%'`
by the share of that sample holding the word. Planning a free-text list for its word at each
request so took PostgreSQL ~1.5 ms, more than running it (`q=ritmeester` at a million events,
on a warm connection: 2.01 ms a run planned for the word, 0.55 planned once).
Read here once in a while (`SAMPLE_KEPT_SECONDS`), the same estimate chooses between two
statements each planned once (`rare`); a word's share is kept until the sample is read again.
An estimate only ever chooses how the events are read, never which: a stale one costs time.
"""

from __future__ import annotations

import time
import weakref
from typing import NamedTuple

from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

# How long a worker uses a sample before reading it again: ANALYZE runs when a tenth of the
# events changed, so shares move slowly.
SAMPLE_KEPT_SECONDS = 300
# The words whose shares a sample keeps (then forgets them all): each took ~0.2 ms to count.
WORDS_KEPT = 10_000
# What reading one event of the word's through the trigram index (a bitmap, then the row)
# costs over testing one entry of the agenda's order in its index: 1.1-1.9 µs against 0.14
# at 100k and 1M events, where the two ways of 190 words crossed at a share of 0.4-0.5%
# (100k) and 0.16-0.2% (1M) for a page of 25, 0.3% for one of 100 (bench/RESULTS.md).
ROW_OVER_ENTRY = 10.0
# Shorter words have no trigram to look up: the trigram index reads every entry for them.
SHORTEST_LOOKED_UP = 3

_SAMPLE = text("""
SELECT s.histogram_bounds::text::text[] AS histogram,
       s.most_common_vals::text::text[] AS common, s.most_common_freqs AS common_shares,
       c.reltuples AS events
FROM pg_stats s JOIN pg_class c ON c.relname = s.tablename
  AND c.relnamespace = to_regnamespace(s.schemaname)
WHERE s.schemaname = current_schema() AND s.tablename = 'events' AND s.attname = 'search_key'
""")


class _Sample(NamedTuple):
    histogram: tuple[str, ...]
    common: tuple[tuple[str, float], ...]
    # The share of the events outside the most common values (what the histogram stands for).
    rest: float
    events: float
    shares: dict[str, float]


# Each engine's sample of its database (None: it has none yet) and when it was read.
_samples: weakref.WeakKeyDictionary[Engine, tuple[float, _Sample | None]] = (
    weakref.WeakKeyDictionary())


def rare(session: Session, word: str, count: int) -> bool:
    """Whether the events holding `word` (folded) are better read through the trigram index
    than found by walking the agenda's order for `count` of them: walking finds one in
    every 1 / share entries; the index reads all of them (share × events). Without a sample
    (a table never analysed), rare: the index reads only the word's events, however many,
    where a walk for a word nobody holds reads the whole agenda."""
    if len(word) < SHORTEST_LOOKED_UP:
        return False
    sample = _sample(session)
    if sample is None:
        return True
    share = sample.shares.get(word)
    if share is None:
        if len(sample.shares) >= WORDS_KEPT:
            sample.shares.clear()
        share = sample.shares[word] = _share(sample, word)
    return share * share * sample.events * ROW_OVER_ENTRY < count


def _share(sample: _Sample, word: str) -> float:
    """The share of the events whose words hold `word`, as the planner estimates it."""
    held = sum(word in key for key in sample.histogram)
    return (sample.rest * held / max(len(sample.histogram), 1)
            + sum(share for key, share in sample.common if word in key))


def _sample(session: Session) -> _Sample | None:
    """The database's sample of the events' words, read again after `SAMPLE_KEPT_SECONDS`."""
    key = session.get_bind().engine
    kept = _samples.get(key)
    if kept is not None and time.monotonic() - kept[0] < SAMPLE_KEPT_SECONDS:
        return kept[1]
    # Threads that find it stale together each read it: one statement each, every 5 minutes.
    row = session.execute(_SAMPLE).first()
    sample = None
    if row is not None and (row.histogram or row.common):
        common = tuple(zip(row.common or (), row.common_shares or ()))
        sample = _Sample(tuple(row.histogram or ()), common,
                         1 - sum(share for _, share in common), max(row.events, 0.0), {})
    _samples[key] = (time.monotonic(), sample)
    return sample


def forget() -> None:
    """Read every database's sample again at its next use (after an ANALYZE, in tests)."""
    _samples.clear()

"""The audience breakdowns: what `suppress` publishes, and that no small group can be worked out."""

import datetime as dt
import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.attendance import (AGE_KEYS, GENRE_KEYS, MIN_CELL, Breakdown, Row, age_band,
                               percentage, suppress)
from models.people import PROVINCES

# Group sizes around the threshold: empty (shrunk to first), small, and large ones close
# enough to tie.
SIZES = st.sampled_from([0] * 9 + list(range(1, 3 * MIN_CELL + 1)))
# The real key lists, and short ones where every key is often taken.
UNIVERSES = st.sampled_from([PROVINCES, AGE_KEYS, GENRE_KEYS, ("a", "b"), ("a", "b", "c")])


@st.composite
def audiences(draw, universes=UNIVERSES):
    """A key list, a count per key (many empty) and the people without a value."""
    keys = draw(universes)
    sizes = draw(st.lists(SIZES, min_size=len(keys), max_size=len(keys)))
    return keys, dict(zip(keys, sizes)), draw(st.integers(0, 25))


def _published(breakdown: Breakdown):
    return ([(row.key, row.count) for row in breakdown.rows], breakdown.other, breakdown.hidden)


def _check_shape(keys, counts, unknown, breakdown):
    total = sum(counts.values()) + unknown
    shown = sum(row.count for row in breakdown.rows)
    assert shown + (breakdown.other or 0) + breakdown.hidden == total
    assert breakdown.hidden >= 0
    assert all(row.count >= MIN_CELL for row in breakdown.rows)
    assert all(row.count == counts[row.key] for row in breakdown.rows), "rows are exact"
    assert breakdown.other is None or breakdown.other >= MIN_CELL
    ordered = sorted(breakdown.rows, key=lambda row: (-row.count, row.key))
    assert breakdown.rows == ordered
    if total < MIN_CELL:
        assert breakdown == Breakdown(rows=[], other=None, hidden=total)


@settings(max_examples=200)
@given(audiences())
def test_the_figures_add_up_and_only_groups_of_min_cell_are_shown(audience):
    keys, counts, unknown = audience
    _check_shape(keys, counts, unknown, suppress(counts, unknown=unknown, keys=keys))


@settings(max_examples=200)
@given(audiences())
def test_no_withheld_group_is_the_withheld_total_on_its_own(audience):
    """Even knowing how many people have no value, the withheld sum is never one group."""
    keys, counts, unknown = audience
    breakdown = suppress(counts, unknown=unknown, keys=keys)
    total = sum(counts.values()) + unknown
    if total < MIN_CELL:
        return  # nothing but `total` is shown
    shown = {row.key for row in breakdown.rows}
    withheld = {key: count for key, count in counts.items() if count and key not in shown}
    # What a reader who knows `unknown` works out: total minus everything shown.
    withheld_sum = total - sum(row.count for row in breakdown.rows) - unknown
    assert withheld_sum == sum(withheld.values())
    if breakdown.rows and withheld:
        assert len(withheld) >= 2
        assert all(count != withheld_sum for count in withheld.values())
    for count in withheld.values():
        assert count != breakdown.other
        if breakdown.other is None:
            assert count != breakdown.hidden


@settings(max_examples=200)
@given(audiences(), st.randoms(use_true_random=False))
def test_what_is_withheld_depends_on_the_counts_not_on_the_keys(audience, rnd):
    """Relabelling the keys relabels the rows and changes nothing else (the note's point 1)."""
    keys, counts, unknown = audience
    shuffled = list(keys)
    rnd.shuffle(shuffled)
    rename = dict(zip(keys, shuffled))
    before = suppress(counts, unknown=unknown, keys=keys)
    after = suppress({rename[key]: count for key, count in counts.items()}, unknown=unknown,
                     keys=keys)
    assert sorted((rename[row.key], row.count) for row in before.rows) == sorted(
        (row.key, row.count) for row in after.rows)
    assert (after.other, after.hidden) == (before.other, before.hidden)


@settings(max_examples=200)
@given(audiences())
def test_the_keys_not_shown_never_all_hold_one_count_when_rows_are_shown(audience):
    """With a row shown, a withheld group always has a differently sized key to hide among."""
    keys, counts, unknown = audience
    breakdown = suppress(counts, unknown=unknown, keys=keys)
    shown = {row.key for row in breakdown.rows}
    hidden_counts = {counts[key] for key in keys if key not in shown}
    if breakdown.rows and any(hidden_counts):
        assert len(hidden_counts) >= 2


def _feasible_counts(keys, published, rows, withheld_sum, unknown):
    """Every count each non-shown key can have in a population that publishes the same.

    The reader of this exhaustive search knows the key list, the rule, the rows, and
    even how many people have no value: only the split of the withheld sum is open.
    """
    open_keys = [key for key in keys if key not in rows]
    feasible = {key: set() for key in open_keys}
    for cut in itertools.combinations(range(withheld_sum + len(open_keys) - 1),
                                      len(open_keys) - 1):
        bounds = (-1, *cut, withheld_sum + len(open_keys) - 1)
        split = [bounds[i + 1] - bounds[i] - 1 for i in range(len(open_keys))]
        population = {**rows, **dict(zip(open_keys, split))}
        if _published(suppress(population, unknown=unknown, keys=keys)) == published:
            for key, count in zip(open_keys, split):
                feasible[key].add(count)
    return feasible


SMALL_UNIVERSES = st.sampled_from([("a", "b"), ("a", "b", "c"), ("a", "b", "c", "d")])
# Mostly the edges (1, 9, 10), so equal groups and boundary sums come up often.
NEAR_SIZES = st.sampled_from([0, 1, 1, 2, 5, 8, 9, 9, 10, 10, 11, 13])


@settings(max_examples=100, deadline=None)
@given(SMALL_UNIVERSES.flatmap(lambda keys: st.tuples(
    st.just(keys), st.fixed_dictionaries({key: NEAR_SIZES for key in keys}),
    st.integers(0, 12))))
def test_no_count_of_a_key_not_shown_can_be_worked_out(audience):
    """Exhaustively: every non-shown key fits at least two counts, unless nothing is withheld."""
    keys, counts, unknown = audience
    breakdown = suppress(counts, unknown=unknown, keys=keys)
    rows = {row.key: row.count for row in breakdown.rows}
    withheld_sum = sum(counts.values()) - sum(rows.values())
    if withheld_sum == 0 or sum(counts.values()) + unknown < MIN_CELL:
        return
    feasible = _feasible_counts(keys, _published(breakdown), rows, withheld_sum, unknown)
    assert all(counts[key] in values for key, values in feasible.items())
    worked_out = {key: values for key, values in feasible.items() if len(values) < 2}
    assert not worked_out, (counts, unknown, breakdown)


def test_a_single_small_group_takes_the_next_smallest_group_with_it():
    breakdown = suppress({"Utrecht": 40, "Zeeland": 3, "Drenthe": 25, "Friesland": 12},
                         unknown=5, keys=PROVINCES)
    assert breakdown.rows == [Row("Utrecht", 40), Row("Drenthe", 25)]
    assert breakdown.other == 15
    assert breakdown.hidden == 5


def test_every_group_tied_for_next_smallest_is_withheld():
    breakdown = suppress({"Utrecht": 12, "Zeeland": 3, "Drenthe": 12, "Friesland": 30},
                         unknown=0, keys=PROVINCES)
    assert breakdown.rows == [Row("Friesland", 30)]
    assert breakdown.other == 27
    assert breakdown.hidden == 0


def test_small_groups_that_add_up_to_min_cell_are_other():
    breakdown = suppress({"Utrecht": 30, "Zeeland": 6, "Drenthe": 4}, unknown=2, keys=PROVINCES)
    assert breakdown.rows == [Row("Utrecht", 30)]
    assert breakdown.other == 10
    assert breakdown.hidden == 2


def test_small_groups_below_min_cell_together_are_hidden_with_the_unknown():
    breakdown = suppress({"Utrecht": 30, "Zeeland": 2, "Drenthe": 4}, unknown=7, keys=PROVINCES)
    assert breakdown.rows == [Row("Utrecht", 30)]
    assert breakdown.other is None
    assert breakdown.hidden == 13


def test_equal_small_groups_on_every_remaining_key_take_a_shown_group_with_them():
    """1 + 1 on the last two age bands could be worked out: withhold the smallest row too."""
    counts = {"under 18": 1, "18-20": 30, "21-24": 40, "25-29": 35, "30-34": 20, "35-44": 15,
              "45+": 1}
    breakdown = suppress(counts, unknown=0, keys=AGE_KEYS)
    assert [row.key for row in breakdown.rows] == ["21-24", "25-29", "18-20", "30-34"]
    assert breakdown.other == 17
    assert breakdown.hidden == 0


def test_an_audience_below_min_cell_shows_nothing():
    assert suppress({"Utrecht": 9}, unknown=0, keys=PROVINCES) == Breakdown([], None, 9)
    assert suppress({}, unknown=0, keys=PROVINCES) == Breakdown([], None, 0)


def test_people_without_a_value_are_hidden():
    breakdown = suppress({"Utrecht": 10}, unknown=4, keys=PROVINCES)
    assert breakdown == Breakdown([Row("Utrecht", 10)], None, 4)


def test_counts_outside_the_key_list_are_refused():
    with pytest.raises(ValueError):
        suppress({"Atlantis": 12}, unknown=0, keys=PROVINCES)


@pytest.mark.parametrize(("birth_year", "band"), [
    (2009, "under 18"), (2008, "18-20"), (2006, "18-20"), (2005, "21-24"), (2002, "21-24"),
    (2001, "25-29"), (1997, "25-29"), (1996, "30-34"), (1992, "30-34"), (1991, "35-44"),
    (1982, "35-44"), (1981, "45+"), (1950, "45+"), (None, None), (2027, None),
])
def test_age_bands_count_the_age_reached_in_the_events_year(birth_year, band):
    assert age_band(birth_year, on=dt.date(2026, 3, 1)) == band


@pytest.mark.parametrize(("part", "whole", "share"), [
    (0, 0, 0), (0, 7, 0), (1, 8, 13), (1, 3, 33), (2, 3, 67), (1, 200, 1), (1, 201, 0),
    (7, 7, 100),
])
def test_returning_share_rounds_half_up(part, whole, share):
    assert percentage(part, whole) == share


def test_feasibility_search_finds_the_true_population():
    """The exhaustive search above is itself sound: it finds every split the rule allows."""
    keys = ("a", "b", "c")
    rng = random.Random(7)
    for _ in range(20):
        counts = {key: rng.randint(0, 12) for key in keys}
        breakdown = suppress(counts, unknown=3, keys=keys)
        rows = {row.key: row.count for row in breakdown.rows}
        withheld_sum = sum(counts.values()) - sum(rows.values())
        feasible = _feasible_counts(keys, _published(breakdown), rows, withheld_sum, 3)
        assert all(counts[key] in feasible[key] for key in feasible)

"""The token-price figures, rule by rule (decisions.md "Token prices and reports").

Every expected figure below is worked out by hand in the comment above it.
"""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.festivals import TokenReport, cents, figures, outliers, weighted_median

_ids = itertools.count()


def report(paid, tokens, *, channel="presale", tier="ticket", drink_tokens=2.0,
           refund="unknown", created_at=1_750_000_000) -> TokenReport:
    """A report as the figures see it (not stored)."""
    return TokenReport(id=f"r{next(_ids):05d}", event_id="fest", paid=paid, tokens=tokens,
                       drink_tokens=drink_tokens, channel=channel, refund=refund, tier=tier,
                       created_at=created_at)


def test_a_weighted_median_is_where_the_running_weight_passes_half():
    # Weights 10 + 3 + 6 = 19, half 9.5: the first value already holds 10.
    assert weighted_median([(3.0, 6), (2.5, 10), (2.7, 3)]) == 2.5
    # Weights 1 + 1 + 5: half 3.5 is passed only by the heavy value.
    assert weighted_median([(1.0, 1), (2.0, 1), (9.0, 5)]) == 9.0


def test_a_weighted_median_stopping_exactly_at_half_is_the_mean_of_the_two_values():
    assert weighted_median([(3.0, 10), (3.2, 10)]) == pytest.approx(3.1)
    # Equal weights: the ordinary median.
    assert weighted_median([(4.0, 3), (1.0, 3), (2.0, 3), (3.0, 3)]) == 2.5


def test_money_is_rounded_half_up_to_cents_and_only_at_the_end():
    # 26.75 / 10 = 2.675: Python's round() would give 2.67 (binary float); the API says 2.68.
    assert cents(26.75 / 10) == 2.68
    # Three reports of 2.675 and drinks of 3 tokens: 2.675 * 3 = 8.025 -> 8.03, where rounding
    # the token price first would give 2.68 * 3 = 8.04.
    found = figures([report(26.75, 10, drink_tokens=3) for _ in range(3)])
    shown = found.rounded()
    assert (shown["token_price"], shown["drink_price"]) == (2.68, 8.03)


def test_the_figures_of_a_small_festival_worked_out_by_hand():
    reports = [
        report(50, 20, channel="presale", tier="ticket", drink_tokens=2, refund="yes",
               created_at=100),                                                    # 2.50
        report(30, 10, channel="presale", tier="going", drink_tokens=2, refund="yes",
               created_at=300),                                                    # 3.00
        report(27, 10, channel="presale", tier="visitor", drink_tokens=3, refund="no",
               created_at=200),                                                    # 2.70
        report(30, 10, channel="onsite", tier="ticket", drink_tokens=2, refund="no",
               created_at=400),                                                    # 3.00
        report(16, 5, channel="onsite", tier="ticket", drink_tokens=1.5, refund="unknown",
               created_at=250),                                                    # 3.20
    ]
    assert figures(reports).rounded() == {
        # Five reports, four or fewer per channel: none can be an outlier.
        "reports": 5, "outliers": 0, "last_report_at": 400,
        # Total weight 1.0 + 0.6 + 0.3 + 1.0 + 1.0 = 3.9: from 3 it is medium.
        "confidence": "medium",
        # Presale 2.50 (1.0), 2.70 (0.3), 3.00 (0.6): half of 1.9 is passed at 2.50.
        "presale": 2.5,
        # Onsite 3.00 (1.0), 3.20 (1.0): exactly half at 3.00, so the mean 3.10.
        "onsite": 3.1,
        # Onsite weighs 2.0 against presale's 1.9.
        "token_price_channel": "onsite", "token_price": 3.1,
        "saving": 0.6,
        # Drinks 1.5 (1.0), 2 (0.6), 2 (1.0), 2 (1.0), 3 (0.3): half of 3.9 is passed at 2.
        "drink_tokens": 2.0, "drink_price": 6.2,
        # yes 1.6, no 1.3, unknown 1.0.
        "refund": "yes",
        # 30 euros for 10 tokens was bought twice.
        "example": {"paid": 30.0, "tokens": 10.0},
    }


def test_a_price_more_than_three_scaled_mads_from_its_channel_median_is_an_outlier():
    # Onsite prices 3.0, 3.0, 3.0, 3.1, 3.2 and 9.0, all weight 1: median 3.0 (exactly half at
    # the third 3.0, mean with the next 3.0); deviations 0, 0, 0, 0.1, 0.2, 6.0 have median
    # 0.05, scaled 0.0741, times three 0.2224: 3.2 (0.2 away) stays, 9.0 is out.
    kept = [report(30, 10, channel="onsite"), report(30, 10, channel="onsite"),
            report(30, 10, channel="onsite"), report(31, 10, channel="onsite"),
            report(32, 10, channel="onsite")]
    far = report(90, 10, channel="onsite")
    found = figures([*kept, far])
    assert found.outlier_ids == {far.id}
    shown = found.rounded()
    assert (shown["reports"], shown["outliers"]) == (6, 1)
    # The median of the five kept: 3.0.
    assert (shown["onsite"], shown["token_price"]) == (3.0, 3.0)


def test_a_channel_of_fewer_than_five_reports_has_no_outliers():
    reports = [report(25, 10), report(25, 10), report(26, 10), report(500, 10)]
    assert outliers(reports) == set()
    assert figures(reports).rounded()["outliers"] == 0


def test_outliers_are_judged_per_channel():
    # The presale price of 9.0 is far from presale's 2.5 but equal to onsite's prices.
    presale = [report(25, 10) for _ in range(5)]
    odd = report(90, 10)
    onsite = [report(90, 10, channel="onsite") for _ in range(5)]
    assert outliers([*presale, odd, *onsite]) == {odd.id}


def test_with_one_channel_the_other_takes_its_figure_and_nothing_is_saved():
    shown = figures([report(25, 10, channel="onsite"), report(30, 10, channel="onsite")]
                    ).rounded()
    assert shown["presale"] == shown["onsite"] == shown["token_price"] == 2.75
    assert (shown["token_price_channel"], shown["saving"]) == ("onsite", 0.0)
    shown = figures([report(20, 10, channel="presale")]).rounded()
    assert (shown["presale"], shown["onsite"], shown["token_price_channel"]) == (2.0, 2.0,
                                                                                 "presale")


def test_equal_channel_weights_name_the_till_price():
    shown = figures([report(20, 10, channel="presale"), report(30, 10, channel="onsite")]
                    ).rounded()
    assert (shown["token_price_channel"], shown["token_price"], shown["saving"]) == (
        "onsite", 3.0, 1.0)


@pytest.mark.parametrize(("tiers", "confidence"), [
    (["visitor"], "low"),
    (["ticket", "ticket", "going", "visitor"], "low"),          # 2.9
    (["ticket", "ticket", "ticket"], "medium"),                  # 3.0
    (["ticket"] * 9 + ["going", "visitor"], "medium"),           # 9.9
    (["ticket"] * 10, "high"),                                   # 10.0
])
def test_confidence_follows_the_total_weight(tiers, confidence):
    assert figures([report(25, 10, tier=tier) for tier in tiers]).confidence == confidence


def test_the_refund_answer_with_the_most_weight_wins_and_a_tie_is_unknown():
    assert figures([report(25, 10, refund="no"), report(25, 10, refund="no", tier="visitor"),
                    report(25, 10, refund="yes")]).refund == "no"
    assert figures([report(25, 10, refund="yes"), report(25, 10, refund="no")]
                   ).refund == "unknown"
    # Weight, not number: one ticket holder (1.0) outweighs three visitors (0.9).
    assert figures([report(25, 10, refund="partial"),
                    *[report(25, 10, refund="yes", tier="visitor") for _ in range(3)]]
                   ).refund == "partial"


def test_the_example_is_the_most_common_purchase_and_ties_go_to_weight_then_price():
    assert figures([report(20, 8), report(50, 20, tier="visitor"),
                    report(50, 20, tier="visitor")]).example == (50, 20)
    assert figures([report(20, 8, tier="visitor"), report(50, 20)]).example == (50, 20)
    assert figures([report(50, 20), report(20, 8)]).example == (20, 8)


def test_an_outlier_is_left_out_of_every_figure_but_counted():
    kept = [report(25, 10, drink_tokens=2, refund="no") for _ in range(5)]
    far = report(900, 10, drink_tokens=40, refund="yes", created_at=2_000_000_000)
    found = figures([*kept, far])
    assert (found.drink_tokens, found.refund, found.example) == (2, "no", (25, 10))
    assert (found.reports, found.outliers, found.last_report_at) == (6, 1, 2_000_000_000)


def test_no_reports_have_no_figures():
    assert figures([]) is None


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------

_reports = st.lists(
    st.builds(lambda paid, tokens, channel, tier, drinks, refund, at: report(
        paid, tokens, channel=channel, tier=tier, drink_tokens=drinks, refund=refund,
        created_at=at),
        st.integers(5, 120).map(float), st.sampled_from([5.0, 8.0, 10.0, 12.0, 20.0, 25.0]),
        st.sampled_from(["presale", "onsite"]), st.sampled_from(["ticket", "going", "visitor"]),
        st.sampled_from([1.0, 1.5, 2.0, 2.5, 3.0]),
        st.sampled_from(["yes", "no", "partial", "unknown"]),
        st.integers(1_700_000_000, 1_800_000_000)),
    min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(_reports, st.randoms(use_true_random=False))
def test_the_order_of_the_reports_changes_nothing(reports, rnd):
    shuffled = list(reports)
    rnd.shuffle(shuffled)
    before, after = figures(reports), figures(shuffled)
    assert after.rounded() == before.rounded()
    assert after.outlier_ids == before.outlier_ids


@settings(max_examples=200, deadline=None)
@given(_reports, _reports.map(lambda more: more[0]))
def test_the_confidence_never_falls_when_a_report_is_added(reports, added):
    order = ["low", "medium", "high"]
    assert (order.index(figures([*reports, added]).confidence)
            >= order.index(figures(reports).confidence))


@settings(max_examples=200, deadline=None)
@given(_reports, st.sampled_from(["presale", "onsite"]), st.sampled_from(["ticket", "visitor"]))
def test_a_report_added_far_away_is_an_outlier_and_pushing_it_further_changes_nothing(
        reports, channel, tier):
    own = [r for r in reports if r.channel == channel]
    highest = max((r.token_price for r in own), default=0)
    # Far: beyond every price of the channel by more than 100 times their whole range.
    far = 100 * highest + 1000
    added = report(far * 10, 10, channel=channel, tier=tier)
    found = figures([*reports, added])
    if len(own) >= 4:
        assert added.id in found.outlier_ids
    if added.id in found.outlier_ids:
        further = report(far * 100, 10, channel=channel, tier=tier)
        further.id = added.id
        pushed = figures([*reports, further])
        assert pushed.rounded() == found.rounded()
        assert pushed.outlier_ids == found.outlier_ids


@settings(max_examples=200, deadline=None)
@given(_reports)
def test_no_channel_ever_loses_all_its_reports_to_outliers(reports):
    # At least half of a channel's weight lies within one MAD of its median, so "all reports
    # outliers" cannot happen; the figures always have reports behind them.
    found = figures(reports)
    for channel in ("presale", "onsite"):
        own = {r.id for r in reports if r.channel == channel}
        assert not own or own - found.outlier_ids
    assert found.outliers < found.reports


@settings(max_examples=100, deadline=None)
@given(_reports)
def test_the_figures_lie_within_the_reports_they_come_from(reports):
    found = figures(reports)
    kept = [r for r in reports if r.id not in found.outlier_ids]
    prices = [r.token_price for r in kept]
    assert min(prices) <= found.token_price <= max(prices)
    assert min(r.drink_tokens for r in kept) <= found.drink_tokens <= max(
        r.drink_tokens for r in kept)
    assert found.example in {(r.paid, r.tokens) for r in kept}


def test_shuffling_a_large_festival_keeps_every_figure():
    rnd = random.Random(7)
    reports = [report(rnd.choice([20, 25, 30, 50]), rnd.choice([8, 10, 20]),
                      channel=rnd.choice(["presale", "onsite"]),
                      tier=rnd.choice(["ticket", "going", "visitor"]),
                      drink_tokens=rnd.choice([1.5, 2.0, 2.5])) for _ in range(500)]
    shuffled = reports[::-1]
    assert figures(shuffled).rounded() == figures(reports).rounded()

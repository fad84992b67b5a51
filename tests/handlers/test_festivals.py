"""GET /events/{id}/token-prices and /events/{id}/token-reports."""

from __future__ import annotations

import datetime as dt

from tests import api
from tests.api import SITE
from tests.factories import EventFactory, PersonFactory, TokenReportFactory


def _festival(key="lowlands", season=2026, **fields):
    return EventFactory(festival_key=key, season=season,
                        date=fields.pop("date", dt.date(season, 8, 20)), **fields)


def _prices(client, auth, key):
    return api.page(client, auth, f"/v1/events/{key}/token-prices")["data"]


def test_every_field_of_the_token_prices(client, auth):
    before = _festival(season=2025, title="Lowlands 2025")
    TokenReportFactory(event_id=before.id, paid=30, tokens=10, drink_tokens=2)  # 3.00 a token
    other = _festival(key="pinkpop", season=2026)
    TokenReportFactory(event_id=other.id, paid=25, tokens=10, drink_tokens=2)   # drink 5.00
    edition = _festival(season=2026, title="Lowlands 2026")
    TokenReportFactory(event_id=edition.id, paid=50, tokens=20, channel="presale",
                       refund="yes", created_at=1_760_000_000)
    TokenReportFactory(event_id=edition.id, paid=30, tokens=10, channel="onsite",
                       tier="going", refund="no", created_at=1_760_000_100)
    assert _prices(client, auth, edition.slug) == {
        "event_id": edition.id, "festival_key": "lowlands", "season": 2026, "verified": False,
        "reports": 2, "last_report_at": 1_760_000_100, "confidence": "low",
        # Presale weighs 1.0 against onsite's 0.6.
        "token_price": 2.5, "token_price_channel": "presale", "presale": 2.5, "onsite": 3.0,
        "saving": 0.5, "drink_tokens": 2.0, "drink_price": 5.0, "refund": "yes",
        "outliers": 0,
        # One purchase each: the heavier one (1.0 against 0.6).
        "example": {"paid": 50.0, "tokens": 20.0},
        "previous_edition": {"event_id": before.id, "title": "Lowlands 2025",
                             "date": "2025-08-20", "season": 2025, "token_price": 3.0,
                             "drink_price": 6.0, "reports": 1},
        "season_compare": {"season": 2026, "median": 5.0, "festivals": 1, "diff": 0.0},
        "url": f"{SITE}/events/{edition.slug}/token-prices",
    }


def test_token_prices_are_public_and_cached(client, auth):
    edition = _festival()
    TokenReportFactory(event_id=edition.id)
    response = client.get(f"/v1/events/{edition.id}/token-prices", headers=auth)
    assert response.headers["Cache-Control"] == "public, max-age=60"
    assert response.json()["meta"]["attribution"]["terms"].endswith("/v1/terms")
    again = client.get(f"/v1/events/{edition.id}/token-prices",
                       headers={**auth, "If-None-Match": response.headers["ETag"]})
    assert again.status_code == 304


def test_an_event_that_is_not_a_festival_is_a_404(client, auth):
    night = EventFactory()
    response = client.get(f"/v1/events/{night.id}/token-prices", headers=auth)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert client.get(f"/v1/events/{night.id}/token-reports", headers=auth).status_code == 404


def test_missing_and_unapproved_festivals_are_a_404(client, auth):
    hidden = _festival(status="pending")
    TokenReportFactory(event_id=hidden.id)
    for key in (hidden.id, "no-such-festival"):
        assert client.get(f"/v1/events/{key}/token-prices", headers=auth).status_code == 404
        assert client.get(f"/v1/events/{key}/token-reports", headers=auth).status_code == 404


def test_a_festival_without_reports_has_no_figures_but_an_empty_list(client, auth):
    edition = _festival()
    response = client.get(f"/v1/events/{edition.id}/token-prices", headers=auth)
    assert response.status_code == 404
    assert "no token reports" in response.json()["error"]["message"]
    assert api.page(client, auth, f"/v1/events/{edition.id}/token-reports")["data"] == []


def test_the_first_edition_has_no_previous_edition(client, auth):
    first = _festival(season=2024)
    TokenReportFactory(event_id=first.id)
    later = _festival(season=2026)
    TokenReportFactory(event_id=later.id)
    assert _prices(client, auth, first.id)["previous_edition"] is None
    # The latest earlier season, not the first one.
    middle = _festival(season=2025)
    assert _prices(client, auth, later.id)["previous_edition"]["event_id"] == middle.id


def test_a_previous_edition_without_reports_shows_no_prices(client, auth):
    before = _festival(season=2025)
    edition = _festival(season=2026)
    TokenReportFactory(event_id=edition.id)
    assert _prices(client, auth, edition.id)["previous_edition"] == {
        "event_id": before.id, "title": before.title, "date": before.date.isoformat(),
        "season": 2025, "token_price": None, "drink_price": None, "reports": 0}


def test_the_only_festival_of_its_season_has_nothing_to_compare(client, auth):
    edition = _festival(season=2031)
    TokenReportFactory(event_id=edition.id)
    # Another edition of the same festival that season is not another festival.
    twin = _festival(season=2031, date=dt.date(2031, 8, 21))
    TokenReportFactory(event_id=twin.id)
    assert _prices(client, auth, edition.id)["season_compare"] == {
        "season": 2031, "median": None, "festivals": 0, "diff": None}


def test_the_season_median_is_over_the_other_festivals_with_figures(client, auth):
    edition = _festival(key="a", season=2030)
    TokenReportFactory(event_id=edition.id, paid=40, tokens=10, drink_tokens=2)   # 8.00
    for key, paid in (("b", 20), ("c", 30), ("d", 60)):                              # 4, 6, 12
        TokenReportFactory(event_id=_festival(key=key, season=2030).id, paid=paid, tokens=10,
                           drink_tokens=2)
    _festival(key="e", season=2030)  # no reports: no figures to compare
    assert _prices(client, auth, edition.id)["season_compare"] == {
        "season": 2030, "median": 6.0, "festivals": 3, "diff": 2.0}


def test_with_only_onsite_reports_presale_takes_the_onsite_figure(client, auth):
    edition = _festival()
    TokenReportFactory(event_id=edition.id, channel="onsite", paid=33, tokens=10)
    figures = _prices(client, auth, edition.id)
    assert (figures["presale"], figures["onsite"], figures["saving"],
            figures["token_price_channel"]) == (3.3, 3.3, 0.0, "onsite")


def test_outliers_are_counted_and_left_out(client, auth):
    edition = _festival()
    for _ in range(5):
        TokenReportFactory(event_id=edition.id, paid=25, tokens=10)
    TokenReportFactory(event_id=edition.id, paid=250, tokens=10)
    figures = _prices(client, auth, edition.id)
    assert (figures["reports"], figures["outliers"], figures["token_price"]) == (6, 1, 2.5)


def test_reports_are_listed_newest_first_without_their_reporter(client, auth):
    edition = _festival()
    reporter = PersonFactory()
    older = TokenReportFactory(event_id=edition.id, created_at=1_760_000_000, paid=26.75,
                               tokens=10, person_id=reporter.id, tier="going")
    newer = TokenReportFactory(event_id=edition.id, created_at=1_760_000_500, channel="onsite",
                               refund="partial", tier="visitor")
    listed = api.page(client, auth, f"/v1/events/{edition.slug}/token-reports")
    assert listed["data"] == [
        {"id": newer.id, "paid": 50.0, "tokens": 20.0, "token_price": 2.5,
         "drink_tokens": 2.0, "channel": "onsite", "refund": "partial", "tier": "visitor",
         "weight": 0.3, "created_at": 1_760_000_500},
        {"id": older.id, "paid": 26.75, "tokens": 10.0, "token_price": 2.68,
         "drink_tokens": 2.0, "channel": "presale", "refund": "no", "tier": "going",
         "weight": 0.6, "created_at": 1_760_000_000},
    ]
    assert reporter.id not in str(listed) and reporter.handle not in str(listed)


def test_paging_through_the_reports_gives_each_once_even_on_equal_times(client, auth):
    edition = _festival()
    made = {TokenReportFactory(event_id=edition.id, created_at=1_760_000_000 + n // 3).id
            for n in range(11)}
    seen, cursor = [], None
    while True:
        params = {"limit": 4, **({"cursor": cursor} if cursor else {})}
        body = api.page(client, auth, f"/v1/events/{edition.id}/token-reports", **params)
        seen += [item["id"] for item in body["data"]]
        cursor = body["meta"]["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(made) and set(seen) == made


def test_a_cursor_of_another_festival_is_refused(client, auth):
    first, second = _festival(key="x"), _festival(key="y")
    for _ in range(3):
        TokenReportFactory(event_id=first.id)
    cursor = api.page(client, auth, f"/v1/events/{first.id}/token-reports",
                      limit=1)["meta"]["next_cursor"]
    assert api.bad_params(client, auth, f"/v1/events/{second.id}/token-reports",
                          cursor=cursor) == {"cursor"}


def test_bad_parameters_are_named(client, auth):
    edition = _festival()
    assert api.bad_params(client, auth, f"/v1/events/{edition.id}/token-reports",
                          limit=0, colour="red") == {"limit", "colour"}
    assert api.bad_params(client, auth, f"/v1/events/{edition.id}/token-reports",
                          limit=101) == {"limit"}

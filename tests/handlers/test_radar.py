"""GET /radar: new releases by artists in the agenda, newest first, with their next event."""

import pytest

from tests import api
from tests.api import SITE, day
from tests.factories import ArtistFactory, EventFactory, ReleaseFactory, VenueFactory

RADAR = api.Listing("/v1/radar")


def _titles(client, auth, **params):
    return [r["title"] for r in RADAR.items(client, auth, **params)]


def _booked(**fields):
    """An artist with an event coming."""
    artist = ArtistFactory(**fields)
    EventFactory(date=day(10), acts=[artist])
    return artist


def test_every_field_of_a_release(client, auth):
    first = ArtistFactory(name="Carista")
    second = ArtistFactory(name="Job Jobse")
    venue = VenueFactory(city="Rotterdam")
    soonest = EventFactory(title="Soon", date=day(3), start="22:00", venue=venue, acts=[second])
    EventFactory(title="Later", date=day(8), acts=[first])
    ReleaseFactory(title="Dance EP", type="ep", release_date=day(-2), genre="Disco",
                   credits=[first, second], spotify_url="https://open.spotify.example/album/1",
                   apple_music_url="https://music.apple.example/album/1",
                   cover_url="https://img.example/cover.jpg")
    assert RADAR.page(client, auth)["data"] == [{
        "title": "Dance EP", "type": "ep", "release_date": day(-2).isoformat(),
        "genre": "Disco",
        "artists": [{"id": first.id, "name": "Carista", "url": f"{SITE}/artists/{first.id}"},
                    {"id": second.id, "name": "Job Jobse",
                     "url": f"{SITE}/artists/{second.id}"}],
        "spotify_url": "https://open.spotify.example/album/1",
        "apple_music_url": "https://music.apple.example/album/1",
        "cover_url": "https://img.example/cover.jpg",
        "next_event": {"id": soonest.id, "title": "Soon", "date": day(3).isoformat(),
                       "city": "Rotterdam", "url": f"{SITE}/events/{soonest.slug}"},
    }]


def test_missing_streaming_links_are_null(client, auth):
    ReleaseFactory(credits=[_booked()], release_date=day(-1), spotify_url=None,
                   apple_music_url="")
    release = RADAR.page(client, auth)["data"][0]
    assert release["spotify_url"] is None and release["apple_music_url"] is None


def test_next_event_is_the_soonest_approved_one_from_today(client, auth):
    artist = ArtistFactory()
    EventFactory(date=day(-2), acts=[artist])
    EventFactory(date=day(1), acts=[artist], status="draft")
    EventFactory(date=day(1), start="23:00", acts=[artist])
    early = EventFactory(date=day(1), start="21:00", acts=[artist])
    ReleaseFactory(credits=[artist], release_date=day(-1))
    assert RADAR.page(client, auth)["data"][0]["next_event"]["id"] == early.id


def test_a_running_event_is_the_next_event(client, auth):
    artist = ArtistFactory()
    running = EventFactory(date=day(-1), end_date=day(1), acts=[artist])
    EventFactory(date=day(4), acts=[artist])
    ReleaseFactory(credits=[artist], release_date=day(-1))
    assert RADAR.page(client, auth)["data"][0]["next_event"]["id"] == running.id


def test_only_releases_whose_artists_have_an_event_coming(client, auth):
    booked = _booked()
    past_only, draft_only, unbooked = ArtistFactory(), ArtistFactory(), ArtistFactory()
    EventFactory(date=day(-3), acts=[past_only])
    EventFactory(date=day(3), acts=[draft_only], status="pending")
    ReleaseFactory(title="Shown", credits=[unbooked, booked], release_date=day(-1))
    for artist in (past_only, draft_only, unbooked):
        ReleaseFactory(title="Hidden", credits=[artist], release_date=day(-1))
    assert _titles(client, auth) == ["Shown"]


def test_newest_first_then_id_descending(client, auth):
    artist = _booked()
    older = ReleaseFactory(credits=[artist], release_date=day(-10))
    same_day = [ReleaseFactory(credits=[artist], release_date=day(-1)) for _ in range(3)]
    newest = ReleaseFactory(credits=[artist], release_date=day(0))
    expected = [newest, *sorted(same_day, key=lambda r: r.id, reverse=True), older]
    assert _titles(client, auth) == [r.title for r in expected]


def test_weeks_looks_back_up_to_today(client, auth):
    artist = _booked()
    for offset in (0, -7, -8, -14, -15, -28, -29, 1):
        ReleaseFactory(title=f"{offset}", credits=[artist], release_date=day(offset))
    assert _titles(client, auth, weeks=1) == ["0", "-7"]
    assert _titles(client, auth, weeks=2) == ["0", "-7", "-8", "-14"]
    assert _titles(client, auth, weeks=4) == ["0", "-7", "-8", "-14", "-15", "-28"]
    assert _titles(client, auth) == _titles(client, auth, weeks=4)


@pytest.mark.parametrize("weeks", ["3", "0", "5", "-1", "four"])
def test_other_weeks_are_400(client, auth, weeks):
    assert RADAR.bad(client, auth, weeks=weeks) == {"weeks"}


def test_genre_is_exact_and_an_unknown_genre_is_400(client, auth):
    artist = _booked()
    ReleaseFactory(title="Techno", genre="Techno", credits=[artist], release_date=day(-1))
    ReleaseFactory(title="House", genre="House", credits=[artist], release_date=day(-1))
    assert _titles(client, auth, genre="House") == ["House"]
    assert RADAR.bad(client, auth, genre="house") == {"genre"}
    assert RADAR.bad(client, auth, genre="Polka") == {"genre"}


@pytest.mark.parametrize("filters", [{}, {"genre": "Techno"}, {"weeks": "2"}])
def test_paging_returns_every_release_once(client, auth, filters):
    artist = _booked()
    created = [ReleaseFactory(credits=[artist], release_date=day(-(i % 3))) for i in range(7)]
    expected = _titles(client, auth, **filters)
    assert sorted(expected) == sorted(r.title for r in created)
    seen = [r["title"] for r in RADAR.walk(client, auth, 3, **filters)]
    assert seen == expected


def test_limit_edges(client, auth):
    artist = _booked()
    for _ in range(3):
        ReleaseFactory(credits=[artist], release_date=day(-1))
    body = RADAR.page(client, auth, limit=1)
    assert body["meta"]["count"] == 1 and body["meta"]["limit"] == 1
    assert body["meta"]["next_cursor"]
    full = RADAR.page(client, auth, limit=100)
    assert full["meta"]["count"] == 3 and full["meta"]["next_cursor"] is None
    assert RADAR.bad(client, auth, limit=0) == {"limit"}
    assert RADAR.bad(client, auth, limit=101) == {"limit"}


def test_a_bad_cursor_or_one_reused_with_other_filters_is_400(client, auth):
    artist = _booked()
    for _ in range(3):
        ReleaseFactory(credits=[artist], release_date=day(-1))
    cursor = RADAR.page(client, auth, limit=1, weeks=2)["meta"]["next_cursor"]
    assert RADAR.page(client, auth, limit=1, weeks=2, cursor=cursor)["meta"]["count"] == 1
    assert RADAR.bad(client, auth, weeks=1, cursor=cursor) == {"cursor"}
    assert RADAR.bad(client, auth, cursor=cursor) == {"cursor"}
    assert RADAR.bad(client, auth, weeks=2, genre="Techno", cursor=cursor) == {"cursor"}
    assert RADAR.bad(client, auth, cursor="garbage") == {"cursor"}


def test_the_list_is_cacheable_and_carries_the_attribution(client, auth):
    ReleaseFactory(credits=[_booked()], release_date=day(-1))
    first = client.get("/v1/radar", headers=auth)
    assert first.json()["meta"]["attribution"]["terms"] == f"{SITE}/v1/terms"
    assert first.headers["cache-control"] == "public, max-age=60"
    again = client.get("/v1/radar", headers={**auth, "If-None-Match": first.headers["etag"]})
    assert again.status_code == 304

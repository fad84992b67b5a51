"""GET /artists and GET /artists/{id}: filters, order, paging, releases and next dates."""

import datetime as dt

import pytest
from sqlalchemy import update

from models import artists
from models.events import Event
from models.releases import Release
from tests import api
from tests.api import SITE, day
from tests.factories import ArtistFactory, EventFactory, ReleaseFactory

ARTISTS = api.Listing("/v1/artists")


def _detail(client, auth, artist_id):
    return api.page(client, auth, f"/v1/artists/{artist_id}")


def test_by_name_ignoring_case_and_accents_then_id(client, auth):
    zebra = ArtistFactory(name="Zebra")
    eli = ArtistFactory(name="Éli Verveine")
    dj = ArtistFactory(name="dj Stingray")
    twins = sorted([ArtistFactory(name="Twin"), ArtistFactory(name="Twin")], key=lambda a: a.id)
    assert ARTISTS.ids(client, auth) == [dj.id, eli.id, twins[0].id, twins[1].id, zebra.id]


def test_every_field_of_the_summary(client, auth):
    artist = ArtistFactory(name="Job Jobse", genre="House", country="NL", city="Amsterdam",
                           image_url="https://img.example/job.jpg", verified=True,
                           links={"soundcloud": "https://soundcloud.example/job",
                                  "instagram": "https://instagram.example/job"})
    assert ARTISTS.page(client, auth)["data"] == [{
        "id": artist.id, "name": "Job Jobse", "genre": "House", "country": "NL",
        "city": "Amsterdam", "image_url": "https://img.example/job.jpg",
        "url": f"{SITE}/artists/{artist.id}", "verified": True,
        "links": {"soundcloud": "https://soundcloud.example/job",
                  "instagram": "https://instagram.example/job"},
    }]


def test_q_searches_the_name_without_case_or_accents(client, auth):
    eli = ArtistFactory(name="Éli Verveine")
    ArtistFactory(name="Carista")
    assert ARTISTS.ids(client, auth, q="eli") == [eli.id]
    assert ARTISTS.ids(client, auth, q="ÉLI VER") == [eli.id]
    assert ARTISTS.ids(client, auth, q="%") == []


def test_genre_is_the_primary_genre_exactly_and_an_unknown_genre_is_400(client, auth):
    techno = ArtistFactory(genre="Techno")
    ArtistFactory(genre="Hard Techno")
    assert ARTISTS.ids(client, auth, genre="Techno") == [techno.id]
    assert ARTISTS.bad(client, auth, genre="techno") == {"genre"}
    assert ARTISTS.bad(client, auth, genre="Polka") == {"genre"}


def test_country_matches_as_the_profile_spells_it_in_any_case(client, auth):
    dutch = ArtistFactory(country="NL")
    belgian = ArtistFactory(country="BE")
    ArtistFactory(country="")
    assert ARTISTS.ids(client, auth, country="NL") == [dutch.id]
    assert ARTISTS.ids(client, auth, country="be") == [belgian.id]
    assert ARTISTS.ids(client, auth, country="DE") == []


def test_filters_combine_with_and(client, auth):
    match = ArtistFactory(name="Amelie Lens", genre="Techno", country="BE")
    ArtistFactory(name="Amelie House", genre="House", country="BE")
    ArtistFactory(name="Amelie Dutch", genre="Techno", country="NL")
    assert ARTISTS.ids(client, auth, q="amelie", genre="Techno", country="BE") == [match.id]


@pytest.mark.parametrize("filters", [{}, {"genre": "Techno"}, {"q": "artist"},
                                     {"country": "nl"}])
def test_paging_returns_every_artist_once(client, auth, filters):
    created = [ArtistFactory(name=f"Artist {i % 3}") for i in range(7)]
    expected = ARTISTS.ids(client, auth, **filters)
    assert set(expected) == {a.id for a in created}
    seen = [a["id"] for a in ARTISTS.walk(client, auth, 3, **filters)]
    assert seen == expected


def test_limit_edges(client, auth):
    for _ in range(3):
        ArtistFactory()
    body = ARTISTS.page(client, auth, limit=1)
    assert body["meta"]["count"] == 1 and body["meta"]["limit"] == 1
    assert body["meta"]["next_cursor"]
    full = ARTISTS.page(client, auth, limit=100)
    assert full["meta"]["count"] == 3 and full["meta"]["next_cursor"] is None
    assert ARTISTS.bad(client, auth, limit=0) == {"limit"}
    assert ARTISTS.bad(client, auth, limit=101) == {"limit"}


def test_a_bad_cursor_or_one_reused_with_other_filters_is_400(client, auth):
    for _ in range(3):
        ArtistFactory(genre="Techno")
    cursor = ARTISTS.page(client, auth, limit=1, genre="Techno")["meta"]["next_cursor"]
    assert ARTISTS.page(client, auth, limit=1, genre="Techno", cursor=cursor)["meta"]["count"] == 1
    assert ARTISTS.bad(client, auth, genre="House", cursor=cursor) == {"cursor"}
    assert ARTISTS.bad(client, auth, cursor=cursor) == {"cursor"}
    assert ARTISTS.bad(client, auth, cursor=cursor + "x") == {"cursor"}


def test_the_list_is_cacheable_and_carries_the_attribution(client, auth):
    ArtistFactory()
    first = client.get("/v1/artists", headers=auth)
    assert first.headers["cache-control"] == "public, max-age=60"
    assert first.json()["meta"]["attribution"]["url"] == SITE
    again = client.get("/v1/artists", headers={**auth, "If-None-Match": first.headers["etag"]})
    assert again.status_code == 304


def test_detail_has_every_field(client, auth):
    artist = ArtistFactory(name="Carista", genre="Disco", country="NL", city="Rotterdam",
                           verified=True, links={"soundcloud": "https://soundcloud.example/c"},
                           bio="Selector.", aliases=["C.", "Cari"],
                           agency={"name": "Agency", "url": "https://agency.example"})
    newest = ReleaseFactory(title="Newest", release_date=day(-3), credits=[artist])
    oldest = ReleaseFactory(title="Oldest", release_date=dt.date(2019, 5, 1),
                            credits=[ArtistFactory(), artist])
    ReleaseFactory(title="Someone else's", credits=[ArtistFactory()])
    soon = EventFactory(date=day(2), acts=[artist])
    EventFactory(date=day(-4), acts=[artist])
    body = _detail(client, auth, artist.id)
    data = body["data"]
    assert {k: v for k, v in data.items() if k != "upcoming_events"} == {
        "id": artist.id, "name": "Carista", "genre": "Disco", "country": "NL",
        "city": "Rotterdam", "image_url": artist.image_url, "url": f"{SITE}/artists/{artist.id}",
        "verified": True, "links": {"soundcloud": "https://soundcloud.example/c"},
        "bio": "Selector.", "aliases": ["C.", "Cari"],
        "agency": {"name": "Agency", "url": "https://agency.example"},
        "releases": [{"title": newest.title, "year": day(-3).year},
                     {"title": oldest.title, "year": 2019}],
    }
    assert [e["id"] for e in data["upcoming_events"]] == [soon.id]
    event = data["upcoming_events"][0]
    assert event["url"] == f"{SITE}/events/{soon.slug}"
    assert event["venue"]["id"] == soon.venue.id and event["genres"] == ["Techno"]
    assert body["meta"]["attribution"]


def test_detail_releases_on_the_same_day_come_by_id_descending(client, auth):
    artist = ArtistFactory()
    same_day = [ReleaseFactory(release_date=day(-1), credits=[artist]) for _ in range(3)]
    titles = [r.title for r in sorted(same_day, key=lambda r: r.id, reverse=True)]
    assert [r["title"] for r in _detail(client, auth, artist.id)["data"]["releases"]] == titles


def test_detail_without_agency_releases_or_dates(client, auth):
    artist = ArtistFactory(agency=None)
    data = _detail(client, auth, artist.id)["data"]
    assert data["agency"] is None
    assert data["aliases"] == [] and data["releases"] == [] and data["upcoming_events"] == []


def test_detail_upcoming_events_are_approved_soonest_first(client, auth):
    artist = ArtistFactory()
    later = EventFactory(date=day(9), acts=[artist])
    running = EventFactory(date=day(-1), end_date=day(1), acts=[artist])
    EventFactory(date=day(3), acts=[artist], status="draft")
    EventFactory(date=day(3))
    data = _detail(client, auth, artist.id)["data"]
    assert [e["id"] for e in data["upcoming_events"]] == [running.id, later.id]


def test_detail_revalidates_with_304(client, auth):
    artist = ArtistFactory()
    first = client.get(f"/v1/artists/{artist.id}", headers=auth)
    again = client.get(f"/v1/artists/{artist.id}",
                       headers={**auth, "If-None-Match": first.headers["etag"]})
    assert again.status_code == 304


def test_detail_of_a_missing_artist_is_404(client, auth):
    response = client.get("/v1/artists/nope", headers=auth)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_a_profiles_basis_is_read_again_from_its_rows_versions(db):
    """What an artist's profile was built from (`ArtistProfile.basis`: its row's version,
    its releases' and its next dates' page's) is what `artist_basis` reads again; it follows
    a change to the artist, a release, its next dates, not one to another artist's event.
    On SQLite neither has one (no row versions)."""
    artist, other = ArtistFactory(), ArtistFactory()
    release = ReleaseFactory(credits=[artist])
    EventFactory(acts=[artist])
    elsewhere = EventFactory(acts=[other])
    built = artists.get_artist(db, artist.id, today=day(0)).basis
    if db.get_bind().dialect.name != "postgresql":
        assert built is None and artists.artist_basis(db, artist.id, today=day(0)) is None
        return
    assert artists.artist_basis(db, artist.id, today=day(0)) == built
    db.execute(update(Event).where(Event.id == elsewhere.id).values(title="Other"))
    assert artists.artist_basis(db, artist.id, today=day(0)) == built
    seen = {built}
    for change in (lambda: db.execute(update(Release).where(Release.id == release.id)
                                      .values(title="Renamed")),
                   lambda: EventFactory(acts=[artist], start="20:00")):
        change()
        now = artists.artist_basis(db, artist.id, today=day(0))
        assert now not in seen and now == artists.get_artist(db, artist.id, today=day(0)).basis
        seen.add(now)
    assert artists.artist_basis(db, artist.id, today=day(9)) not in seen  # gone by then
    assert artists.artist_basis(db, "no-such-artist", today=day(0)) not in seen

"""Saving catalogue records: upsert by id, folded keys, the venue copies on events, checks."""

import datetime as dt

import pytest

from models import records
from models.errors import BadRequest
from models.events import MAX_SPAN_DAYS, Event, denormalize
from tests.factories import ArtistFactory, EventFactory, OrganisationFactory, VenueFactory


def _venue(**fields):
    return {"id": "ven-kaai", "name": "Club Ampère", "city": "Gent", "country": "BE",
            "lat": 51.0662, "lng": 3.7352, "source": "test", **fields}


def _event(venue, organisation, **fields):
    return {"id": "evt-kaai-1", "title": "Nachtdienst", "date": "2027-01-16", "start": "23:00",
            "end": "06:00", "venue_id": venue.id, "organisation_id": organisation.id,
            "genres": ["Techno"], "source": "test", **fields}


def _bad_names(error: BadRequest) -> list[str]:
    return [param["name"] for param in error.params]


def test_a_new_venue_gets_its_folded_keys(db):
    venue = records.save_venue(db, **_venue(facts={"capacity": 600, "smoking": "no"}))
    assert (venue.name_key, venue.city_key) == ("club ampere", "gent")
    assert venue.facts == {"capacity": 600, "smoking": "no"}
    assert db.get(records.Venue, "ven-kaai") is venue


def test_saving_the_same_record_again_changes_nothing(db):
    first, outcome = records.write(db, kind="venue", values=records.clean("venue", _venue()))
    assert outcome == "created"
    first.updated_at = 1_000  # as if saved long ago
    db.flush()
    again, outcome = records.write(db, kind="venue", values=records.clean("venue", _venue()))
    assert again is first and outcome == "unchanged" and again.updated_at == 1_000
    _moved, outcome = records.write(db, kind="venue",
                                      values=records.clean("venue", _venue(area="Dampoort")))
    assert outcome == "updated" and first.updated_at > 1_000


def test_a_field_left_out_takes_its_default(db):
    records.save_venue(db, **_venue(area="Dampoort", tags=["club"], rating=4.5))
    venue = records.save_venue(db, **_venue())
    assert (venue.area, venue.tags, venue.rating) == ("", [], 0.0)


def test_an_event_gets_its_bill_genres_and_venue_copies(db):
    venue = records.save_venue(db, **_venue())
    organisation = OrganisationFactory()
    first, second = ArtistFactory(name="Mira Voss"), ArtistFactory(name="Kolder")
    event = records.save_event(db, **_event(
        venue, organisation, genres=["Techno", "Acid"],
        lineup=[{"id": second.id, "order": 1}, {"id": first.id, "order": 0}]))
    assert [(act.name, act.position) for act in event.lineup] == [("Mira Voss", 0), ("Kolder", 1)]
    assert event.genre_names == ["Techno", "Acid"]
    assert (event.city_key, event.lat, event.lng) == ("gent", 51.0662, 3.7352)
    assert event.search_key == "nachtdienst club ampere"
    assert event.last_date == dt.date(2027, 1, 16)
    assert all(genre.date == event.date and genre.start == "23:00" for genre in event.genres)
    assert all(act.date == event.date for act in event.lineup)
    # Defaults a source may leave out: the zone of the venue's country, a slug, approved.
    assert event.timezone == "Europe/Brussels"
    assert event.slug == "nachtdienst-2027-01-16"
    assert event.status == "approved"


def test_saving_an_event_again_replaces_its_bill_and_genres(db):
    venue, organisation = VenueFactory(), OrganisationFactory()
    one, two, three = ArtistFactory(), ArtistFactory(), ArtistFactory()
    records.save_event(db, **_event(venue, organisation, genres=["Techno", "Acid"],
                                      lineup=[one.id, two.id]))
    event = records.save_event(db, **_event(venue, organisation, genres=["House"],
                                              lineup=[three.id, one.id], date="2027-02-01"))
    db.expire_all()
    event = db.get(Event, event.id)
    assert [(act.artist_id, act.position) for act in event.lineup] == [(three.id, 0), (one.id, 1)]
    assert event.genre_names == ["House"]
    assert {act.date for act in event.lineup} == {dt.date(2027, 2, 1)}
    # The slug stays what it was: links to the event keep working.
    assert event.slug == "nachtdienst-2027-01-16"


def test_moving_or_renaming_a_venue_refreshes_the_copies_on_its_events(db):
    venue = records.save_venue(db, **_venue())
    organisation = OrganisationFactory()
    event = records.save_event(db, **_event(venue, organisation))
    records.save_venue(db, **_venue(name="De Kaai", city="Antwerpen", lat=51.23, lng=4.41))
    db.expire_all()
    event = db.get(Event, event.id)
    assert (event.city_key, event.lat, event.lng) == ("antwerpen", 51.23, 4.41)
    assert event.search_key == "nachtdienst de kaai"


def test_renaming_an_artist_renames_them_on_every_bill(db):
    artist = records.save_artist(db, id="art-lente", name="DJ Lente", genre="Disco")
    event = EventFactory(acts=[artist])
    records.save_artist(db, id="art-lente", name="Lente", genre="Disco")
    db.expire_all()
    assert [act.name for act in db.get(Event, event.id).lineup] == ["Lente"]


def test_every_bad_field_of_an_event_is_named_at_once(db):
    with pytest.raises(BadRequest) as caught:
        records.save_event(db, id="evt x", title="", date="2027-13-01", start="25:00",
                             end="6:00", status="live", genres=["techno", "Techno", "Techno"],
                             price=-1, ticket_url="ftp://tickets", bogus=True,
                             lineup=[{"id": "a", "position": 1}],
                             timetable={"Main": [["23:00"]]}, maps=[{"label": "Terrain"}],
                             venue_id="v", organisation_id="o")
    assert _bad_names(caught.value) == [
        "bogus", "id", "title", "date", "start", "end", "status", "genres[0]", "genres[2]",
        "price", "ticket_url", "lineup[0].position", "timetable.Main[0]", "maps[0].image_url"]
    messages = {param["name"]: param["message"] for param in caught.value.params}
    assert messages["genres[0]"] == "'techno' is not a genre of the list (did you mean 'Techno'?)"
    assert messages["status"] == "must be one of draft, pending, approved, rejected, got 'live'"


def test_an_event_may_last_at_most_max_span_days(db):
    venue, organisation = VenueFactory(), OrganisationFactory()
    longest = dt.date(2027, 7, 1) + dt.timedelta(days=MAX_SPAN_DAYS)
    event = records.save_event(db, **_event(venue, organisation, date="2027-07-01",
                                              end_date=longest.isoformat()))
    assert event.last_date == longest
    for end_date, message in ((longest + dt.timedelta(days=1), "more than 31 days after"),
                              (dt.date(2027, 6, 30), "is before date")):
        with pytest.raises(BadRequest) as caught:
            records.save_event(db, **_event(venue, organisation, date="2027-07-01",
                                              end_date=end_date.isoformat()))
        assert _bad_names(caught.value) == ["end_date"]
        assert message in caught.value.params[0]["message"]


def test_an_end_date_on_the_first_day_is_a_single_day_event(db):
    event = records.save_event(db, **_event(VenueFactory(), OrganisationFactory(),
                                              end_date="2027-01-16"))
    assert event.end_date is None and event.last_date == dt.date(2027, 1, 16)


def test_references_to_missing_records_are_named(db):
    venue = VenueFactory()
    with pytest.raises(BadRequest) as caught:
        records.save_event(db, **_event(venue, OrganisationFactory(), organisation_id="org-x",
                                          lineup=[ArtistFactory().id, "art-x"]))
    assert caught.value.params == [
        {"name": "organisation_id", "in": "body", "message": "'org-x' does not exist"},
        {"name": "lineup[1]", "in": "body", "message": "'art-x' does not exist"}]
    assert db.get(Event, "evt-kaai-1") is None


def test_a_slug_or_id_may_name_only_one_event(db):
    venue, organisation = VenueFactory(), OrganisationFactory()
    records.save_event(db, **_event(venue, organisation, slug="nachtdienst-januari"))
    with pytest.raises(BadRequest) as caught:
        records.save_event(db, **_event(venue, organisation, id="evt-2",
                                          slug="nachtdienst-januari"))
    assert caught.value.params[0]["name"] == "slug"
    # A path {id} takes an id or a slug: a slug equal to another event's id is as ambiguous.
    with pytest.raises(BadRequest) as caught:
        records.save_event(db, **_event(venue, organisation, id="evt-3", slug="evt-kaai-1"))
    assert caught.value.params[0]["name"] == "slug"
    with pytest.raises(BadRequest) as caught:
        records.save_event(db, **_event(venue, organisation, id="nachtdienst-januari",
                                          slug="other"))
    assert caught.value.params[0] == {
        "name": "id", "in": "body", "message": "'nachtdienst-januari' is the slug of event "
                                               "'evt-kaai-1'"}


def test_a_generated_slug_that_is_taken_gets_the_id(db):
    venue, organisation = VenueFactory(), OrganisationFactory()
    records.save_event(db, **_event(venue, organisation))
    other = records.save_event(db, **_event(venue, organisation, id="evt-kaai-2"))
    assert other.slug == "nachtdienst-2027-01-16-evt-kaai-2"


def test_cancel_reason_postponement_and_prices_must_agree(db):
    venue, organisation = VenueFactory(), OrganisationFactory()
    with pytest.raises(BadRequest) as caught:
        records.save_event(db, **_event(venue, organisation, cancel_reason="Ill",
                                          postponed_to="2027-01-01", price=20, price_max=10))
    assert _bad_names(caught.value) == ["postponed_to", "cancel_reason", "price_max"]
    event = records.save_event(db, **_event(venue, organisation, cancelled=True,
                                              cancel_reason="Ill", price=0, price_max=None))
    assert (event.cancelled, event.cancel_reason, event.price, event.price_max) == \
        (True, "Ill", 0, None)


def test_a_festival_edition_gets_its_season_from_its_date(db):
    event = records.save_event(db, **_event(VenueFactory(), OrganisationFactory(),
                                              festival_key="polderlicht"))
    assert (event.festival_key, event.season) == ("polderlicht", 2027)


def test_a_venue_must_lie_in_the_netherlands_or_belgium(db):
    with pytest.raises(BadRequest) as caught:
        records.save_venue(db, **_venue(country="DE", lat=3.7352, lng=51.0662,
                                          facts={"capacity": "big", "colour": "red"}))
    assert _bad_names(caught.value) == ["country", "facts.capacity", "facts.colour", "lat",
                                        "lng"]


def test_an_artist_has_a_genre_of_the_list_links_and_an_agency(db):
    artist = records.save_artist(
        db, id="art-mira", name="Mira Voss", genre="Techno", country="NL",
        links={"soundcloud": "https://soundcloud.example/mira"}, aliases=["MV"],
        agency={"name": "Polder Booking", "url": "https://booking.example"})
    assert (artist.name_key, artist.agency["name"], artist.aliases) == \
        ("mira voss", "Polder Booking", ["MV"])
    with pytest.raises(BadRequest) as caught:
        records.save_artist(db, id="art-x", name="X", genre="Tekno", country="Netherlands",
                              links={"soundcloud": "soundcloud.example/x"}, agency={"name": "A"})
    assert _bad_names(caught.value) == ["genre", "country", "links.soundcloud", "agency.url"]


def test_organisation_names_stay_unique_and_since_is_kept(db):
    records.save_organisation(db, id="org-nw", name="Nachtwerk", since=2012)
    organisation = records.save_organisation(db, id="org-nw", name="Nachtwerk", verified=True)
    assert (organisation.since, organisation.verified) == (2012, True)
    with pytest.raises(BadRequest) as caught:
        records.save_organisation(db, id="org-other", name="NACHTWERK")
    assert caught.value.params[0]["name"] == "name"


def test_a_release_credits_its_artists_in_order(db):
    one, two = ArtistFactory(), ArtistFactory()
    release = records.save_release(db, id="rel-tidal", title="Tidal", type="ep",
                                     release_date="2026-11-13", genre="Techno",
                                     artists=[two.id, {"id": one.id}])
    assert [(credit.artist_id, credit.position) for credit in release.artists] == \
        [(two.id, 0), (one.id, 1)]
    with pytest.raises(BadRequest) as caught:
        records.save_release(db, id="rel-x", title="X", type="lp", release_date="2026-11-13",
                               genre="Techno", artists=[])
    assert _bad_names(caught.value) == ["artists", "type"]
    with pytest.raises(BadRequest) as caught:
        records.save_release(db, id="rel-x", title="X", type="single",
                               release_date="2026-11-13", genre="Techno", artists=["art-x"])
    assert caught.value.params == [
        {"name": "artists[0]", "in": "body", "message": "'art-x' does not exist"}]


def test_event_copies_are_what_denormalize_writes(db):
    venue = VenueFactory(name="Café  Ampère", city="Liège", lat=50.63, lng=5.58)
    event = EventFactory(title="Nuit Électrique", venue=venue,
                         date=dt.date(2027, 3, 5), end_date=dt.date(2027, 3, 7))
    denormalize(event)
    copies = records.event_copies(title=event.title, date=event.date, end_date=event.end_date,
                                    venue_name=venue.name, venue_city_key=venue.city_key,
                                    venue_lat=venue.lat, venue_lng=venue.lng)
    assert copies == {name: getattr(event, name) for name in copies}
    assert copies["search_key"] == "nuit electrique cafe ampere"

"""The factories build events the way the import does (copies of the venue written)."""

from tests.factories import ArtistFactory, EventFactory, VenueFactory


def test_an_event_carries_copies_of_its_venue_and_its_bill(db):
    venue = VenueFactory(name="Club Ampère", city="Gent", country="BE", lat=51.05, lng=3.72)
    artist = ArtistFactory(name="DJ Één")
    event = EventFactory(title="Nacht", venue=venue, genre_names=["Techno", "Acid"],
                         acts=[artist])
    assert event.city_key == "gent"
    assert (event.lat, event.lng) == (51.05, 3.72)
    assert event.search_key == "nacht club ampere"
    assert event.last_date == event.date
    assert event.genre_names == ["Techno", "Acid"]
    assert [(act.name, act.position) for act in event.lineup] == [("DJ Één", 0)]

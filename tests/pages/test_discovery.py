"""Event pages are discoverable: schema.org Event JSON-LD that says what the API says of the
event, OpenGraph tags and a canonical link."""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from zoneinfo import ZoneInfo

from tests import api
from tests.api import SITE
from tests.factories import ArtistFactory, EventFactory, OrganisationFactory, VenueFactory


def _json_ld(page: str) -> dict:
    found = re.findall(r'<script type="application/ld\+json">(.*?)</script>', page, re.S)
    assert len(found) == 1
    return json.loads(found[0])


def _meta(page: str) -> dict[str, str]:
    return {name: html.unescape(value) for name, value in
            re.findall(r'<meta property="(og:[a-z_]+)" content="([^"]*)">', page)}


def _local(day: str, time: str, zone: str) -> dt.datetime:
    return dt.datetime.combine(dt.date.fromisoformat(day), dt.time.fromisoformat(time),
                               ZoneInfo(zone))


def test_the_json_ld_of_an_event_page_says_what_the_api_says_of_the_event(client, auth):
    venue = VenueFactory(name="Shelter", address="Overhoeksplein 3", city="Amsterdam",
                         country="NL", lat=52.384, lng=4.902)
    acts = [ArtistFactory(name="Joost van Bellen"), ArtistFactory(name="Marcel Dettmann")]
    event = EventFactory(title="Shelter Nights", date=dt.date(2031, 7, 4), start="23:00",
                         end="06:00", venue=venue, acts=acts, price=15, price_max=25,
                         organisation=OrganisationFactory(name="Dekmantel"),
                         ticket_url="https://tickets.example/shelter")
    data = api.page(client, auth, f"/v1/events/{event.id}")["data"]
    ld = _json_ld(client.get(f"/events/{event.slug}").text)
    assert (ld["@context"], ld["@type"]) == ("https://schema.org", "Event")
    assert (ld["name"], ld["url"]) == (data["title"], data["url"])
    start, end = (dt.datetime.fromisoformat(ld[key]) for key in ("startDate", "endDate"))
    assert ld["startDate"].endswith("+02:00") and ld["endDate"].endswith("+02:00")
    assert start == _local(data["date"], data["start"], data["timezone"])
    assert end == _local("2031-07-05", data["end"], data["timezone"]), "ends the next morning"
    assert ld["eventStatus"] == "https://schema.org/EventScheduled"
    place = ld["location"]
    assert place["name"] == data["venue"]["name"]
    assert place["address"] == {"@type": "PostalAddress", "addressCountry": "NL",
                                "streetAddress": data["venue"]["address"],
                                "addressLocality": data["venue"]["city"]}
    assert (place["geo"]["latitude"], place["geo"]["longitude"]) == (
        data["venue"]["lat"], data["venue"]["lng"])
    assert ld["organizer"]["name"] == data["organisation"]["name"]
    assert ld["organizer"]["url"] == f"{SITE}/organisations/{data['organisation']['id']}"
    assert [(p["name"], p["url"]) for p in ld["performer"]] == [
        (act["name"], f"{SITE}/artists/{act['id']}") for act in data["lineup"]]
    assert ld["offers"] == {"@type": "AggregateOffer", "url": data["ticket_url"],
                            "priceCurrency": data["currency"], "lowPrice": data["price"],
                            "highPrice": data["price_max"],
                            "availability": "https://schema.org/InStock"}


def test_winter_times_carry_their_own_offset_and_a_single_price_is_one_offer(client, auth):
    event = EventFactory(date=dt.date(2031, 1, 10), start="22:00", end="23:30", price=0,
                         price_max=None, ticket_url=None)
    ld = _json_ld(client.get(f"/events/{event.slug}").text)
    assert (ld["startDate"], ld["endDate"]) == ("2031-01-10T22:00:00+01:00",
                                                "2031-01-10T23:30:00+01:00")
    assert ld["offers"] == {"@type": "Offer", "url": f"{SITE}/events/{event.slug}",
                            "priceCurrency": "EUR", "price": 0}


def test_cancelled_and_postponed_events_say_so(client, auth):
    cancelled = EventFactory(cancelled=True, cancel_reason="Storm")
    ld = _json_ld(client.get(f"/events/{cancelled.slug}").text)
    assert ld["eventStatus"] == "https://schema.org/EventCancelled"
    assert ld["offers"]["availability"] == "https://schema.org/Discontinued"
    postponed = EventFactory(date=dt.date(2031, 3, 7), postponed_to=dt.date(2031, 4, 4),
                             start="20:00", end="02:00")
    ld = _json_ld(client.get(f"/events/{postponed.slug}").text)
    assert ld["eventStatus"] == "https://schema.org/EventRescheduled"
    assert ld["previousStartDate"] == "2031-03-07"
    assert ld["startDate"] == "2031-04-04T20:00:00+02:00"


def test_an_event_page_has_a_canonical_link_and_opengraph_tags(client, auth):
    event = EventFactory(title="Shelter & Friends", date=dt.date(2031, 5, 2),
                         artwork_url="https://img.example/shelter.jpg")
    url = f"{SITE}/events/{event.slug}"
    for lang in ("en", "nl"):
        page = client.get(f"/events/{event.slug}", params={"lang": lang}).text
        assert [html.unescape(link) for link in re.findall(
            r"<link rel=\"canonical\" href=\"([^\"]+)\">", page)] == [url]
        meta = _meta(page)
        assert meta["og:title"] == "Shelter & Friends"
        assert meta["og:url"] == url
        assert meta["og:image"] == "https://img.example/shelter.jpg"
        assert meta["og:type"] == "website"
        assert event.venue.name in meta["og:description"]
    assert _meta(page)["og:locale"] == "nl_NL"


def test_text_cannot_end_the_json_ld_script_early(client, db):
    title = '</script><script>alert("x")</script> & more'
    event = EventFactory(title=title, slug="script-night", description="<b>bold</b>")
    page = client.get(f"/events/{event.slug}").text
    assert "<script>alert" not in page
    ld = _json_ld(page)
    assert (ld["name"], ld["description"]) == (title, "<b>bold</b>")

"""What search engines and link previews read from an event page: schema.org `Event`
JSON-LD (https://schema.org/Event, as Google's event results read it) and OpenGraph tags."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import orjson
from markupsafe import Markup

from pages.calendar import times

SCHEMA = "https://schema.org"


def _status(event) -> str:
    if event.cancelled:
        return f"{SCHEMA}/EventCancelled"
    return f"{SCHEMA}/EventRescheduled" if event.postponed_to else f"{SCHEMA}/EventScheduled"


def _offers(event, url: str) -> dict | None:
    """The tickets: one price, or the range from `price` to `price_max`; none when the price
    is unknown and there is no shop to send anyone to."""
    if event.price is None and not event.ticket_url:
        return None
    offers: dict = {"@type": "Offer", "url": event.ticket_url or url,
                    "priceCurrency": event.currency}
    if event.price_max is not None and event.price is not None and event.price_max > event.price:
        offers |= {"@type": "AggregateOffer", "lowPrice": event.price,
                   "highPrice": event.price_max}
    elif event.price is not None:
        offers["price"] = event.price
    if event.cancelled:
        offers["availability"] = f"{SCHEMA}/Discontinued"
    elif event.ticket_url:
        offers["availability"] = f"{SCHEMA}/InStock"
    return offers


def event_ld(event, *, site: str) -> dict:
    """The schema.org `Event` of an event page: local times with their UTC offset."""
    url = f"{site}/events/{event.slug}"
    zone = ZoneInfo(event.timezone)
    start, end = (moment.astimezone(zone) for moment in times(event))
    venue, organisation = event.venue, event.organisation
    data = {
        "@context": SCHEMA, "@type": "Event", "name": event.title, "url": url,
        "startDate": start.isoformat(), "endDate": end.isoformat(),
        "eventStatus": _status(event),
        "eventAttendanceMode": f"{SCHEMA}/OfflineEventAttendanceMode",
        "location": {
            "@type": "Place", "name": venue.name, "url": f"{site}/venues/{venue.id}",
            "address": {"@type": "PostalAddress", "streetAddress": venue.address,
                        "addressLocality": venue.city, "addressCountry": venue.country},
            "geo": {"@type": "GeoCoordinates", "latitude": venue.lat, "longitude": venue.lng},
        },
        "organizer": {"@type": "Organization", "name": organisation.name,
                      "url": f"{site}/organisations/{organisation.id}"},
        "performer": [{"@type": "PerformingGroup", "name": act.name,
                       "url": f"{site}/artists/{act.artist_id}"} for act in event.lineup],
        "typicalAgeRange": f"{event.age}-",
    }
    if event.postponed_to:
        data["previousStartDate"] = event.date.isoformat()
    if event.artwork_url:
        data["image"] = [event.artwork_url]
    if event.description:
        data["description"] = event.description
    offers = _offers(event, url)
    if offers is not None:
        data["offers"] = offers
    return data


def json_script(data: dict) -> Markup:
    """`data` as the body of a `<script type="application/ld+json">`: no `<`, `>` or `&`
    that could end the element early."""
    text = orjson.dumps(data).decode()
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))

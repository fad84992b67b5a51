"""The public pages: events (and their .ics and token prices), venues, artists,
organisations, cities and public profiles, plus the API reference at /docs.

Each page calls the same domain function as its REST handler, so a page exists
exactly when the API would answer with the object; anything else is one 404
page (a private, a suspended and a missing profile alike). Pages are Dutch or
English (`?lang=`, then Accept-Language), need no JavaScript and may be cached
for a minute like the API's public answers.
"""

from __future__ import annotations

import datetime as dt
import functools
from urllib.parse import urlsplit

import hashlib

from flask import Blueprint, Response, current_app, render_template, request
from werkzeug.datastructures import MultiDict

from edge import conditional, limits
from edge.compression import Kept
from edge.conditional import PUBLIC_CACHE, matches
from edge.context import holds_nul, service, session, settings
from models import (artists, badges, cities, events, festivals, genres, organisations, records,
                    venues)
from models.calendar import AMSTERDAM, today
from models.errors import BadRequest, NotFound
from models.text import slugify
from openapi.schemas import attribution
from openapi.schemas.terms import TermsSchema
from pages import calendar, discovery, home, reference, site, subscriptions
from pages.words import long_date, money, text_for

blueprint = Blueprint("pages", __name__, template_folder="templates")
blueprint.add_app_template_global(site.layout, "layout")
blueprint.add_url_rule(site.STYLESHEET_PATH, "stylesheet", site.stylesheet)

# Events listed on a venue, artist or city page, and on the search page.
UPCOMING_LIMIT = 20
SEARCH_LIMIT = 50


@blueprint.errorhandler(NotFound)
def _not_found(_error: NotFound) -> Response:
    """Missing, unapproved, private and suspended are the same page."""
    return _page("pages/not_found.html", title=None, status=404)


@blueprint.errorhandler(BadRequest)
def _bad_request(error: BadRequest) -> Response:
    """Bad filters of the search page or a feed: every bad parameter, named as in the API."""
    return _page("pages/bad_request.html", title=None, status=400, params=error.params)


@blueprint.before_request
def _within_limit() -> Response | None:
    """Pages are limited per address (edge/limits.py): past it, a page that says to wait.
    The stylesheet is not a page: browsers keep it, and it costs nothing to send."""
    if request.endpoint == "pages.stylesheet":
        return None
    wait = service().usage.throttle(
        [limits.per_address("pages", limits.PAGES_PER_MINUTE, request.remote_addr or "unknown")])
    if wait is None:
        return None
    response = _page("pages/too_many.html", title=None, status=429,
                     limit=limits.PAGES_PER_MINUTE, seconds=wait)
    response.headers.update({"Retry-After": str(wait), "Cache-Control": "no-store"})
    return response


@blueprint.before_request
def _no_nul() -> Response | None:
    """No page has a NUL character (%00) in its address."""
    return _not_found(NotFound()) if holds_nul() else None


@blueprint.record_once
def _keep_reference(state) -> None:
    """Render /docs once, as the application starts, from the document it serves."""
    app = state.app
    with app.test_request_context("/docs"):
        document = app.extensions["agenda"].document
        page = reference.Reference.of(document)
        body = render_template("pages/docs.html", **_values(
            "en", title=None, reference=page, markdown=reference.markdown,
            info=document["info"], base_url=settings().base_url))
    app.extensions["agenda-reference"] = (body, _tag(body))
    # Compressed once, as it is rendered (edge/compression.py sends that form).
    app.extensions["agenda"].kept["/docs"] = Kept.of(body.encode())


@blueprint.get("/docs")
def api_reference():
    """The REST API reference, rendered from the served OpenAPI document at start-up."""
    body, tag = current_app.extensions["agenda-reference"]
    return html_response(body, status=200, private=False, tag=tag)


@blueprint.get("/")
def home_page():
    """The front page: today's and this weekend's events, the busiest cities, a search.
    It is what the attribution link (`meta.attribution.url`) opens."""
    day = today()
    try:
        search = home.read_search(request.args)
    except BadRequest as error:
        return _page("pages/home.html", title=None, status=400, search=home.Search(),
                     problems=error.params, found=None, **_front(day))
    return _page("pages/home.html", title=None, search=search, problems=[],
                 found=home.found(session(), search, today=day) if search.given else None,
                 **_front(day))


def _front(day: dt.date) -> dict:
    first, last = home.weekend(day)
    return {"today_events": home.on_days(session(), day, day, today=day),
            "weekend_events": home.on_days(session(), first, last, today=day),
            "weekend": (first, last), "today": day, "genres": home.GENRE_NAMES,
            "cities": home.busiest_cities(session(), today=day)}


@blueprint.get("/terms")
def terms_page():
    """The terms of use of GET /v1/terms as a page."""
    return _page("pages/terms.html", title=None, terms=TermsSchema().dump(settings()))


@blueprint.get("/sources")
def sources_page():
    """The data sources of the agenda (the `sources_url` of GET /terms)."""
    return _page("pages/sources.html", title=None, sources=records.sources(session()))


@blueprint.get("/events/<slug>")
def event_page(slug: str):
    """An event; `?format=ics` is its calendar file."""
    if request.args.get("format") == "ics":
        return event_calendar(slug)
    event = events.get_event(session(), slug)
    return _page("pages/event.html", title=event.title, event=event,
                 has_token_prices=_has_token_prices(event),
                 event_ld=discovery.json_script(discovery.event_ld(event, site=settings().site_url)))


@blueprint.get("/events/<slug>.ics")
def event_calendar(slug: str):
    """The event as an iCalendar file with one VEVENT."""
    event = events.get_event(session(), slug)
    body = calendar.event_calendar(event, url=_event_url(event), host=_host())
    return Response(body, mimetype="text/calendar", headers={
        **_headers(), "Content-Disposition": f'attachment; filename="{event.slug}.ics"'})


@blueprint.get("/calendar.ics")
def calendar_feed():
    """The next events of a search (the filters of GET /v1/events, in its order) as a
    calendar to subscribe to; revalidated with its ETag."""
    wait = service().usage.throttle([limits.per_address(
        "calendar-address", subscriptions.FEED_PER_MINUTE, request.remote_addr or "unknown")])
    if wait is not None:
        response = _page("pages/too_many.html", title=None, status=429,
                         limit=subscriptions.FEED_PER_MINUTE, seconds=wait)
        response.headers["Retry-After"] = str(wait)
        return response
    wanted = subscriptions.filters_of(service().document, request.args)
    listed = events.list_events(session(), filters=wanted, today=today(), after=None,
                                limit=subscriptions.FEED_LIMIT).items
    body = calendar.feed(listed, name=subscriptions.name_of(wanted, **_names(wanted)),
                         url_of=_event_url, host=_host())
    tag = conditional.etag(body, b"")
    headers = {"Cache-Control": PUBLIC_CACHE, "ETag": tag, "X-Content-Type-Options": "nosniff"}
    if conditional.matches(request.headers.get("If-None-Match", ""), tag):
        return Response(status=304, headers=headers)
    return Response(body, mimetype="text/calendar", headers=headers)


@blueprint.get("/events")
def search_page():
    """The event search: the filters of GET /v1/events as a form, the first events it lists
    and a Subscribe link for the same filters."""
    # A form sends its empty fields too: those are no filter.
    args = MultiDict((name, value) for name, value in request.args.items(multi=True)
                     if value != "" and name != "lang")
    wanted = subscriptions.filters_of(service().document, args)
    found = events.list_events(session(), filters=wanted, today=today(), after=None,
                               limit=SEARCH_LIMIT).items
    return _page("pages/search.html", title=None, found=found, wanted=wanted,
                 query=subscriptions.query_of(wanted))


@blueprint.get("/genres/<slug>")
def genre_page(slug: str):
    """A genre and its next events."""
    genre = genres.get_genre(session(), slug)
    coming = events.list_events(session(), filters=events.EventFilters(genre=genre.name),
                                today=today(), after=None, limit=UPCOMING_LIMIT).items
    return _page("pages/genre.html", title=genre.name, genre=genre, coming=coming)


def _event_url(event) -> str:
    return f"{settings().site_url}/events/{event.slug}"


def _host() -> str:
    return urlsplit(settings().site_url).hostname or "localhost"


def _names(wanted: events.EventFilters) -> dict[str, str | None]:
    """The names of the venue, artist and organisation a feed's filters give by id."""
    def name(model, key):
        found = session().get(model, key) if key else None
        return found.name if found is not None else None
    return {"venue": name(venues.Venue, wanted.venue_id),
            "artist": name(artists.Artist, wanted.artist_id),
            "organisation": name(organisations.Organisation, wanted.organisation_id)}


@blueprint.get("/events/<slug>/token-prices")
def token_prices_page(slug: str):
    """The drink-token prices of a festival edition."""
    prices = festivals.token_prices(session(), slug)
    return _page("pages/token_prices.html", title=prices.event.title, prices=prices,
                 figures=prices.figures.rounded())


@blueprint.get("/venues/<venue_id>")
def venue_page(venue_id: str):
    """A venue with its practical profile and events coming."""
    venue = venues.get_venue(session(), venue_id, today=today())
    coming = events.list_events(session(), filters=events.EventFilters(venue_id=venue.id),
                                today=today(), after=None, limit=UPCOMING_LIMIT).items
    return _page("pages/venue.html", title=venue.name, venue=venue, coming=coming)


@blueprint.get("/artists/<artist_id>")
def artist_page(artist_id: str):
    """An artist with bio, links, releases and next dates."""
    artist = artists.get_artist(session(), artist_id, today=today())
    return _page("pages/artist.html", title=artist.name, artist=artist)


@blueprint.get("/organisations/<organisation_id>")
def organisation_page(organisation_id: str):
    """An organisation and its events coming."""
    organisation = organisations.get_listed_organisation(session(), organisation_id)
    coming = events.list_events(
        session(), filters=events.EventFilters(organisation_id=organisation.id), today=today(),
        after=None, limit=UPCOMING_LIMIT).items
    return _page("pages/organisation.html", title=organisation.name,
                 organisation=organisation, coming=coming)


@blueprint.get("/cities/<slug>")
def city_page(slug: str):
    """A city with upcoming events (as GET /cities lists it) and its next events."""
    city = cities.get_city(session(), slug, today=today())
    coming = events.list_events(
        session(), filters=events.EventFilters(city=city.name, country=city.country),
        today=today(), after=None, limit=UPCOMING_LIMIT).items
    return _page("pages/city.html", title=city.name, city=city, coming=coming)


@blueprint.get("/users/<handle>")
def user_page(handle: str):
    """A public profile and the badges it earned."""
    person = badges.get_public_person(session(), handle)
    catalogue = badges.catalogue_size(session())
    earned = badges.list_earned(session(), person, after=None, limit=catalogue or 1).items
    return _page("pages/user.html", title=person.name, person=person, earned=earned,
                 catalogue=catalogue)


def _has_token_prices(event: events.Event) -> bool:
    """Whether the festival edition has figures (kept up to date with its reports)."""
    return (event.festival_key is not None and event.season is not None
            and session().get(festivals.FestivalFigures, event.id) is not None)


def request_locale() -> str:
    """`?lang=nl|en`, then Accept-Language, then English."""
    wanted = request.args.get("lang", "").split("-")[0].lower()
    if wanted in ("nl", "en"):
        return wanted
    return request.accept_languages.best_match(["nl", "en"]) or "en"


def _headers() -> dict[str, str]:
    return {"Cache-Control": PUBLIC_CACHE, "Vary": "Accept-Language",
            "X-Content-Type-Options": "nosniff"}


def _page(template: str, *, title: str | None, status: int = 200, locale: str | None = None,
          **values) -> Response:
    """A page in the visitor's language, with the attribution and terms links."""
    locale = locale or request_locale()
    body = render_template(template, **_values(locale, title=title, **values))
    return html_response(body, status=status, private=False)


def _values(locale: str, **values) -> dict:
    """What every public page's template is given."""
    return {"t": text_for(locale), "locale": locale, "site": settings().site_url,
            "attribution": attribution(settings()), "slugify": slugify,
            "date": lambda day: long_date(day, locale),
            "money": lambda amount: money(amount, locale),
            "day_of": lambda moment: dt.datetime.fromtimestamp(moment, AMSTERDAM).date(),
            "path": request.path,
            "subscribe": functools.partial(subscriptions.webcal, settings().site_url), **values}


def _tag(body: str) -> str:
    return f'W/"{hashlib.blake2b(body.encode(), digest_size=16).hexdigest()}"'


def html_response(body: str, *, status: int, private: bool, tag: str | None = None) -> Response:
    """A page with the site's security headers. A public page may be cached a minute, has an
    ETag (a 304 when the browser holds the same page) and shows images of events, venues
    and artists (from other sites); a `private` one (the portal, tickets) is never stored,
    loads no image and sends no referrer. Styles come only from the site's stylesheet."""
    if private:
        headers = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
                   "Referrer-Policy": "no-referrer"}
        images = ""
    else:
        headers = {**_headers(), "Referrer-Policy": "strict-origin-when-cross-origin"}
        images = "img-src https:; "
    headers |= {"X-Frame-Options": "DENY",
                "Content-Security-Policy": f"default-src 'none'; style-src 'self'; {images}"
                                           "form-action 'self'; base-uri 'none'; "
                                           "frame-ancestors 'none'"}
    if private or status != 200:
        return Response(body, status=status, mimetype="text/html", headers=headers)
    headers["ETag"] = tag = tag or _tag(body)
    if matches(request.headers.get("If-None-Match", ""), tag):
        return Response(status=304, headers=headers)
    return Response(body, status=status, mimetype="text/html", headers=headers)

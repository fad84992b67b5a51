"""An event page in a real browser (headless Chromium): what a visitor sees, with the page's
own headers (its Content-Security-Policy) and no JavaScript.

The browser's requests to the site are answered by the test client, inside the test's
transaction; anything else (images on other sites) is refused.
"""

from __future__ import annotations

import datetime as dt

import pytest

from tests.api import SITE
from tests.factories import ArtistFactory, EventFactory, VenueFactory
from tests.oauth.test_browser import PNG_SIGNATURE, chromium  # noqa: F401 - the fixture


@pytest.fixture
def browser_page(chromium, client):  # noqa: F811 - the imported fixture
    """A tab without JavaScript whose requests to the site go to the test client."""
    context = chromium.new_context(locale="nl-NL", java_script_enabled=False)
    page = context.new_page()
    problems = []
    # Errors of the site's own documents (a CSP violation, say); images elsewhere are refused.
    page.on("console", lambda message: problems.append(message.text)
            if message.type == "error" and message.location.get("url", "").startswith(SITE)
            else None)

    def answer(route):
        request = route.request
        if not request.url.startswith(SITE + "/"):
            return route.abort()
        response = client.get(request.url.removeprefix(SITE),
                              headers={"Accept-Language": request.headers.get(
                                  "accept-language", "")})
        return route.fulfill(status=response.status_code, headers=dict(response.headers),
                             body=response.content)

    page.route("**/*", answer)
    page.problems = problems
    yield page
    context.close()


def test_a_cancelled_event_page_in_the_browser(browser_page, db, tmp_path):
    acts = [ArtistFactory(name="Job Jobse"), ArtistFactory(name="Carista")]
    event = EventFactory(title="Strijkijzer Nacht", date=dt.date(2031, 6, 6), acts=acts,
                         venue=VenueFactory(name="De School"), cancelled=True,
                         cancel_reason="De vergunning is ingetrokken")
    page = browser_page
    page.goto(f"{SITE}/events/{event.slug}")
    assert page.get_by_role("heading", level=1).inner_text() == "Strijkijzer Nacht"
    alert = page.get_by_role("alert")
    assert alert.is_visible()
    assert "Dit evenement is geannuleerd." in alert.inner_text()
    assert page.get_by_role("link", name="De School").get_attribute("href") == \
        f"{SITE}/venues/{event.venue.id}"
    assert [item.inner_text() for item in page.locator("ol li").all()] == ["Job Jobse",
                                                                          "Carista"]
    assert page.get_by_role("img").get_attribute("alt") == "Artwork van Strijkijzer Nacht"
    assert page.problems == [], "no CSP violation or other error"
    path = tmp_path / "event.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.read_bytes().startswith(PNG_SIGNATURE) and path.stat().st_size > 1000
    page.get_by_role("link", name="English").click()
    assert page.get_by_role("heading", level=2).first.inner_text() == "Line-up"
    assert "This event is cancelled." in page.get_by_role("alert").inner_text()

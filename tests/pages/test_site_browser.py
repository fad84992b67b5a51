"""Issue 24 in a real browser (headless Chromium) against the demo: `agenda demo` run on a
database of its own, its site served over HTTP, and a newcomer who follows the attribution
link to the home page, opens an event, signs in with the member the demo printed and
reaches the portal's API and door pages. Every page is checked with axe-core (no serious or
critical violation) and must fit a 1280 px and a 390 px wide screen; screenshots of both
widths go to the test artifacts directory (AGENDA_TEST_ARTIFACTS, else test-artifacts/,
which git ignores).

axe-core comes with the `axe-playwright-python` test dependency (its axe.min.js, read from
the installed package: no network). The site's pages ship no script and their
Content-Security-Policy allows none, so a tab with JavaScript on shows exactly what one
without shows; axe needs it on to run.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import axe_playwright_python
import httpx
import pytest
from click.testing import CliRunner

from agenda import cli
from agenda.app import create_app
from tests.oauth import flow
from tests.oauth.test_browser import PNG_SIGNATURE, chromium  # noqa: F401 - the fixture
from tests.servers import served_in_thread

AXE = (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text()
ARTIFACTS = Path(os.environ.get("AGENDA_TEST_ARTIFACTS")
                 or Path(__file__).parents[2] / "test-artifacts") / "screenshots"
WIDTHS = (1280, 390)
# Events of the demo's agenda in these tests (its own nights come on top).
DEMO_EVENTS = 300


class Demo:
    """The served demo: its address, the read token and the member `agenda demo` printed."""

    def __init__(self, url: str, printed: str):
        self.url, self.printed = url, printed
        self.email = re.search(r"^  email +(\S+)$", printed, re.M).group(1)
        self.password = re.search(r"^  password +(\S+)$", printed, re.M).group(1)
        self.read_token = re.search(r"^  read +(svc_live_\S+)$", printed, re.M).group(1)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """`agenda demo` on a database of its own (its server replaced by one in a thread)."""
    database_url = f"sqlite:///{tmp_path_factory.mktemp('demo') / 'demo.sqlite3'}"
    printed = {}

    def app_for(url):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(cli, "_serve", lambda host, port, workers: None)
            patch.setattr(cli, "DEMO_EVENTS", DEMO_EVENTS)
            result = CliRunner().invoke(cli.main, ["demo"], catch_exceptions=False, env={
                "AGENDA_DATABASE_URL": database_url, "AGENDA_SITE_URL": url})
        assert result.exit_code == 0, result.output
        printed["output"] = result.stdout
        return create_app({"database_url": database_url, "secret_key": "demo-secret",
                           "site_url": url})

    with served_in_thread(app_for) as (app, url):
        yield Demo(url, printed["output"])
    app.service.close()


@pytest.fixture
def tab(chromium, demo):  # noqa: F811 - the imported fixture
    """`tab(width)`: a fresh profile of that width whose requests go to the demo only
    (artwork on other hosts is refused, as a picture that cannot load)."""
    contexts = []

    def open_tab(width: int):
        context = chromium.new_context(viewport={"width": width, "height": 900},
                                       locale="en-GB")
        context.route("**/*", lambda route: route.continue_()
                      if route.request.url.startswith(demo.url + "/") else route.abort())
        contexts.append(context)
        return context.new_page()

    yield open_tab
    for context in contexts:
        context.close()


def serious_violations(page) -> list[tuple[str, list]]:
    """axe-core's serious and critical violations on the page: (rule, elements)."""
    page.evaluate(AXE)
    found = page.evaluate("axe.run({resultTypes: ['violations']})"
                          ".then(result => result.violations)")
    return [(rule["id"], [node["target"] for node in rule["nodes"]]) for rule in found
            if rule["impact"] in ("serious", "critical")]


def fits(page) -> bool:
    """Whether the page needs no sideways scrolling."""
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def check(page, name: str, width: int) -> None:
    """axe finds nothing serious, nothing sticks out sideways; a screenshot is kept."""
    assert serious_violations(page) == [], (name, width)
    assert fits(page), f"{name} is wider than {width} px"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}-{width}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.read_bytes().startswith(PNG_SIGNATURE)


def sign_in(page, demo: Demo) -> None:
    page.get_by_label("Email address").fill(demo.email)
    page.get_by_label("Password").fill(demo.password)
    page.get_by_role("button", name="Sign in").click()


def test_a_newcomer_goes_from_the_attribution_link_to_the_door(tab, demo):
    page = tab(1280)
    answer = httpx.get(f"{demo.url}/v1/events", params={"limit": 1},
                       headers={"Authorization": f"Bearer {demo.read_token}"})
    page.goto(answer.json()["meta"]["attribution"]["url"])
    assert urlsplit(page.url).path == "/"
    assert page.get_by_role("heading", level=1).inner_text() == (
        "Going out in the Netherlands and Belgium")
    assert serious_violations(page) == []

    card = page.locator("#today ~ .cards .card h3 a, #weekend ~ .cards .card h3 a").first
    title = card.inner_text()
    card.click()
    assert page.get_by_role("heading", level=1).inner_text() == title
    assert urlsplit(page.url).path.startswith("/events/")
    assert serious_violations(page) == []
    event_page = page.url

    # The event's venue offers its agenda as a calendar to subscribe to.
    page.locator('a[href*="/venues/"]').first.click()
    assert urlsplit(page.url).path.startswith("/venues/")
    subscribe = page.locator("a.subscribe")
    assert subscribe.inner_text() == "Subscribe (calendar)"
    feed = urlsplit(subscribe.get_attribute("href"))
    assert feed.scheme == "webcal" and feed.path == "/calendar.ics"
    calendar = httpx.get(f"{demo.url}{feed.path}?{feed.query}")
    assert calendar.status_code == 200
    assert calendar.headers["content-type"].startswith("text/calendar")
    assert "BEGIN:VEVENT" in calendar.text
    assert serious_violations(page) == []
    page.goto(event_page)

    page.get_by_role("link", name="Organiser portal").first.click()
    assert urlsplit(page.url).path == "/signin"
    assert serious_violations(page) == []
    sign_in(page, demo)
    page.wait_for_url(re.compile(r".*/portal/[^/]+/api\?.*"))
    assert page.get_by_role("heading", level=1).inner_text() == "API tokens · Demo Nights"
    assert page.locator("tr[data-prefix]").count() >= 4, "the demo's tokens are listed"
    assert serious_violations(page) == []

    page.get_by_role("link", name="Door", exact=True).click()
    assert page.get_by_role("heading", level=1).inner_text() == "Door · Demo Nights"
    assert page.get_by_label("Ticket code or scanned link").is_visible()
    assert serious_violations(page) == []

    page.get_by_role("link", name="API reference").first.click()
    page.goto(f"{demo.url}/docs#op-list_events")
    operation = page.locator("#op-list_events")
    fields = operation.get_by_role("table", name="Fields of EventSummary")
    assert fields.is_visible()
    assert fields.get_by_role("cell", name="updated_at", exact=True).is_visible()
    example = operation.locator("pre").first
    assert example.is_visible() and '"updated_at"' in example.inner_text()
    assert serious_violations(page) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_every_kind_of_page_passes_axe_and_fits_the_screen(tab, demo, width):
    page = tab(width)
    page.goto(f"{demo.url}/?lang=en")
    check(page, "home", width)
    event = page.locator(".card h3 a").first.get_attribute("href")
    city = page.locator(".cities a").first.get_attribute("href")
    page.goto(event)
    check(page, "event", width)
    page.goto(city)
    check(page, "city", width)

    page.goto(f"{demo.url}/portal?lang=en")
    check(page, "signin", width)
    sign_in(page, demo)
    page.wait_for_url(re.compile(r".*/portal/[^/]+/api\?.*"))
    check(page, "portal", width)
    if width == 1280:
        # Every token's row on one line: dates do not wrap, the table fits its column.
        assert page.evaluate("""() => {
            const table = document.querySelector('table.tokens');
            return table.scrollWidth <= table.parentElement.clientWidth;
        }""")
        lines = page.evaluate("""() => [...document.querySelectorAll('table.tokens td.nowrap')]
            .map(cell => { const range = document.createRange(); range.selectNodeContents(cell);
                           return new Set([...range.getClientRects()].map(r => r.top)).size; })""")
        assert lines and set(lines) == {1}, lines
    page.get_by_role("link", name="Door", exact=True).click()
    check(page, "door", width)

    client = httpx.post(f"{demo.url}/oauth/register", json={
        "client_name": "Axe Test App", "redirect_uris": ["http://127.0.0.1:9/callback"],
        "token_endpoint_auth_method": "none"}).json()
    _verifier, challenge = flow.pkce()
    page.goto(f"{demo.url}/oauth/authorize?" + urlencode({
        "response_type": "code", "client_id": client["client_id"],
        "redirect_uri": "http://127.0.0.1:9/callback", "scope": "read attendance scan",
        "state": "s", "code_challenge": challenge, "code_challenge_method": "S256"}))
    assert urlsplit(page.url).path == "/oauth/consent"
    assert page.get_by_role("link", name="Nederlands").is_visible(), "the language switch"
    check(page, "consent", width)
    page.get_by_role("link", name="Nederlands").click()
    assert page.get_by_role("heading", level=1).inner_text() == "Toegang geven?"


def test_artwork_that_cannot_load_shows_the_placeholder(tab, demo):
    page = tab(1280)
    page.goto(f"{demo.url}/?lang=en")
    art = page.locator(".card .art img").first
    # The demo's artwork lives on other hosts, which this tab refuses.
    assert art.evaluate("image => image.complete && image.naturalWidth === 0")
    cover = art.evaluate("""image => { const after = getComputedStyle(image, '::after');
        return [after.content, after.position, after.backgroundImage]; }""")
    assert cover[0] == '""' and cover[1] == "absolute" and "linear-gradient" in cover[2]
    box = art.bounding_box()
    assert box["width"] > 100 and box["height"] > 50, "the placeholder keeps the card's shape"

"""GET /badges and GET /users/{id}/badges."""

from __future__ import annotations

import datetime as dt

from models import badges
from tests import api
from tests.api import SITE
from tests.factories import EventFactory, PersonFactory, TicketFactory, VenueFactory

NIGHT = 1_760_000_000


def _nights_out(db, person, count, *, at=NIGHT):
    """`count` nights at one venue, the first scanned at `at`, one a day."""
    venue = VenueFactory()
    for night in range(count):
        event = EventFactory(date=dt.date(2025, 1, 1) + dt.timedelta(days=night), venue=venue)
        TicketFactory(event_id=event.id, person_id=person.id, status="used",
                      scanned_at=at + night * 86400)
    badges.award(db, [person.id])


def test_the_catalogue_lists_every_family_by_tier(client, auth):
    listed = api.page(client, auth, "/v1/badges", limit=100)["data"]
    assert len(listed) == 24
    assert [b["family"] for b in listed[::4]] == ["regular", "explorer", "nomad", "omnivore",
                                                  "festival", "reporter"]
    assert listed[0] == {
        "id": "regular-1", "family": "regular", "tier": 1, "mark": "🎟",
        "name": {"nl": "Eerste nacht", "en": "First night"},
        "description": {"nl": "Een avond uit: een ticket gescand aan de deur.",
                        "en": "A night out: a ticket scanned at the door."},
        "counts": "events_attended", "needs": 1}
    for family in range(6):
        tiers = listed[4 * family:4 * family + 4]
        assert [b["tier"] for b in tiers] == [1, 2, 3, 4]
        needs = [b["needs"] for b in tiers]
        assert needs == sorted(set(needs)), "needs rise with the tier"
        assert len({b["counts"] for b in tiers}) == 1


def test_the_catalogue_pages_with_a_cursor(client, auth):
    seen, cursor = [], None
    while True:
        body = api.page(client, auth, "/v1/badges", limit=7,
                        **({"cursor": cursor} if cursor else {}))
        seen += [b["id"] for b in body["data"]]
        cursor = body["meta"]["next_cursor"]
        if not cursor:
            break
    assert len(seen) == len(set(seen)) == 24


def test_a_public_profile_lists_its_badges_newest_first(client, auth, db):
    person = PersonFactory(handle="nachtuil", name="Sanne")
    _nights_out(db, person, 10)
    for key in ("nachtuil", person.id):
        body = api.page(client, auth, f"/v1/users/{key}/badges")
        assert body["data"] == [
            {"id": "regular-2", "family": "regular", "tier": 2,
             "name": {"nl": "Vaste gast", "en": "Regular"},
             "description": {"nl": "10 avonden uit: tickets gescand aan de deur.",
                             "en": "10 nights out: tickets scanned at the door."},
             "value": 10, "earned_at": NIGHT + 9 * 86400},
            {"id": "regular-1", "family": "regular", "tier": 1,
             "name": {"nl": "Eerste nacht", "en": "First night"},
             "description": {"nl": "Een avond uit: een ticket gescand aan de deur.",
                             "en": "A night out: a ticket scanned at the door."},
             "value": 1, "earned_at": NIGHT},
        ]
        assert body["meta"]["user"] == {"id": person.id, "handle": "nachtuil", "name": "Sanne",
                                        "url": f"{SITE}/users/nachtuil"}
        assert body["meta"]["catalogue"] == 24
        assert body["meta"]["attribution"]["url"] == SITE


def test_unearned_badges_never_appear(client, auth, db):
    person = PersonFactory()
    body = api.page(client, auth, f"/v1/users/{person.handle}/badges")
    assert body["data"] == [] and body["meta"]["catalogue"] == 24
    assert "needs" not in str(body) and "progress" not in str(body)


def test_private_suspended_and_missing_profiles_are_the_same_404(client, auth, db):
    private = PersonFactory(visibility="private")
    suspended = PersonFactory(visibility="suspended")
    _nights_out(db, private, 1)
    answers = []
    for key in (private.handle, suspended.id, "nobody-at-all"):
        response = client.get(f"/v1/users/{key}/badges", headers=auth)
        assert response.status_code == 404
        body = response.json()
        body["meta"].pop("request_id")
        body["error"]["message"] = body["error"]["message"].replace(key, "KEY")
        skip = {"x-request-id", "x-ratelimit-remaining", "x-ratelimit-reset", "ratelimit", "date",
                "content-length"}
        answers.append((body, {name: value for name, value in response.headers.items()
                               if name.lower() not in skip}))
    assert answers[0] == answers[1] == answers[2]


def test_a_user_badges_cursor_is_bound_to_the_profile(client, auth, db):
    first, second = PersonFactory(), PersonFactory()
    _nights_out(db, first, 10)
    _nights_out(db, second, 10)
    cursor = api.page(client, auth, f"/v1/users/{first.id}/badges",
                      limit=1)["meta"]["next_cursor"]
    assert api.bad_params(client, auth, f"/v1/users/{second.id}/badges",
                          cursor=cursor) == {"cursor"}
    rest = api.page(client, auth, f"/v1/users/{first.id}/badges", limit=1, cursor=cursor)
    assert [b["id"] for b in rest["data"]] == ["regular-1"]


def test_a_scan_through_the_api_shows_on_the_profile(client, auth, db, make_token):
    person = PersonFactory()
    event = EventFactory(date=api.day(0), start="00:00", end="23:59")
    ticket = TicketFactory(event_id=event.id, person_id=person.id)
    door = {"Authorization": f"Bearer {make_token('scan', organisation=event.organisation)}"}
    assert client.post("/v1/scan", json={"code": ticket.code}, headers=door).json()["data"]["ok"]
    earned = api.page(client, auth, f"/v1/users/{person.handle}/badges")["data"]
    assert [(b["id"], b["value"]) for b in earned] == [("regular-1", 1)]

"""GET /genres: the fixed list, paged with signed cursors, cacheable."""

from models.genres import GENRES
from tests import api

LISTED = api.Listing("/v1/genres")


def test_the_whole_list_in_its_order(client, auth):
    body = LISTED.page(client, auth, limit=100)
    assert [(g["name"], g["group"]) for g in body["data"]] == list(GENRES)
    assert body["data"][0] == {"name": "House", "group": "House", "slug": "house"}
    assert body["meta"]["count"] == len(GENRES) and body["meta"]["limit"] == 100
    assert body["meta"]["next_cursor"] is None
    assert body["meta"]["attribution"]["terms"].endswith("/v1/terms")


def test_paging_returns_every_genre_exactly_once(client, auth):
    seen, cursor = [], None
    while True:
        params = {"limit": 4, **({"cursor": cursor} if cursor else {})}
        meta = (body := LISTED.page(client, auth, **params))["meta"]
        seen += [g["name"] for g in body["data"]]
        assert meta["count"] == len(body["data"]) <= 4
        cursor = meta["next_cursor"]
        if cursor is None:
            break
    assert seen == [name for name, _group in GENRES]


def test_default_page_size_is_25(client, auth):
    body = LISTED.page(client, auth)
    assert body["meta"]["limit"] == 25 and body["meta"]["count"] == 25
    assert body["meta"]["next_cursor"]


def test_a_tampered_cursor_is_400_naming_cursor(client, auth):
    cursor = LISTED.page(client, auth, limit=2)["meta"]["next_cursor"]
    body, signature = cursor.split(".")
    forged = body[:-2] + ("AA" if body[-2:] != "AA" else "BB") + "." + signature
    for bad in (forged, "garbage", cursor + "x", "a.b.c"):
        response = client.get("/v1/genres", headers=auth, params={"cursor": bad})
        assert response.status_code == 400, bad
        assert response.json()["error"]["details"]["params"][0]["name"] == "cursor"


def test_a_cursor_of_another_list_is_400(client, auth, app):
    from edge import cursors

    other = cursors.encode("test-secret", kind="venues", filters={}, key=(3,))
    response = client.get("/v1/genres", headers=auth, params={"cursor": other})
    assert response.status_code == 400


def test_an_expired_cursor_is_400(client, auth):
    from edge import cursors

    old = cursors.encode("test-secret", kind="genres", filters={}, key=(3,),
                         clock=lambda: 1_000_000_000)
    response = client.get("/v1/genres", headers=auth, params={"cursor": old})
    assert response.status_code == 400
    assert "expired" in response.json()["error"]["details"]["params"][0]["message"]


def test_the_list_revalidates_with_304(client, auth):
    first = client.get("/v1/genres", headers=auth)
    assert first.status_code == 200, first.text
    again = client.get("/v1/genres", headers={**auth, "If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    # The list is over 1 KB: the client's Accept-Encoding chooses the form (its own ETag).
    assert again.headers["vary"] == first.headers["vary"] == "Authorization, Accept-Encoding"
    assert again.headers["etag"] == first.headers["etag"]

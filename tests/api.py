"""What the API tests share: reading a list page and naming the bad parameters of a 400."""


def page(client, auth, path: str, **params) -> dict:
    """The body of a successful GET of `path`."""
    response = client.get(path, headers=auth, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def bad_params(client, auth, path: str, **params) -> set[str]:
    """The parameters a 400 answer to a GET of `path` names."""
    response = client.get(path, headers=auth, params=params)
    assert response.status_code == 400, response.text
    return {p["name"] for p in response.json()["error"]["details"]["params"]}

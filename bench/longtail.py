"""A long tail of distinct, realistic catalogue URLs, drawn from a loaded database.

    python bench/longtail.py DATABASE_URL [--count 5000] [--seed 1] > urls.txt

What people and apps ask a discovery API, every kind mixed: the agenda by city, genre
and date window and their combinations, radius searches around city centres (and a bit
off them, as a phone stands anywhere), free text, price bounds, tickets on sale, a
venue's, an artist's and an organisation's events, second pages (following a cursor is
a distinct URL: `bench/run.py` adds those by following `meta.next_cursor`), detail
pages of events, venues and artists, and the lists of venues, artists, organisations,
cities and genres. Deterministic for a seed; the order is shuffled so that a Zipf draw
over it (bench/longtail.lua) makes every kind popular somewhere.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import urllib.parse

from sqlalchemy import create_engine, text

from models.calendar import today

# How many URLs of each kind, per 100 (detail pages and other lists included).
MIX = {"city": 12, "city_genre": 10, "city_window": 10, "genre_window": 8, "radius": 10,
       "q": 6, "price": 5, "tickets": 3, "venue_events": 6, "artist_events": 4,
       "organisation_events": 3, "combination": 5, "event": 8, "venue": 4, "artist": 3,
       "lists": 3}


def urls(database_url: str, *, count: int = 5000, seed: int = 1) -> list[str]:
    """`count` distinct paths with their queries (no scheme or host)."""
    pick = _Catalogue(database_url, random.Random(seed))
    made: dict[str, None] = {}  # in the order drawn: already shuffled
    for _ in range(count * 50):
        if len(made) == count:
            return list(made)
        kind = pick.rng.choices(list(MIX), weights=list(MIX.values()))[0]
        made[getattr(pick, kind)()] = None
    raise RuntimeError(f"only {len(made)} distinct URLs from this catalogue")


class _Catalogue:
    """Random but real values: cities, genres, ids, dates around today."""

    def __init__(self, database_url: str, rng: random.Random):
        self.rng = rng
        engine = create_engine(database_url)
        with engine.connect() as connection:
            def column(sql: str) -> list:
                return [row[0] for row in connection.execute(text(sql))]
            self.cities = connection.execute(text(
                "SELECT city, avg(lat), avg(lng), count(*) FROM venues GROUP BY city "
                "ORDER BY count(*) DESC LIMIT 40")).all()
            self.genres = column("SELECT name FROM genres ORDER BY name")
            self.venues = column("SELECT id FROM venues ORDER BY id LIMIT 3000")
            self.artists = column("SELECT id FROM artists ORDER BY id LIMIT 3000")
            self.organisations = column("SELECT id FROM organisations ORDER BY id LIMIT 500")
            self.events = column(
                f"SELECT slug FROM events WHERE status = 'approved' AND date >= "
                f"'{today() - dt.timedelta(days=3)}' ORDER BY id LIMIT 20000")
            words = column("SELECT title FROM events ORDER BY id LIMIT 2000")
        engine.dispose()
        self.words = sorted({w.lower() for title in words for w in title.split()
                             if len(w) >= 4 and w.isalpha()})

    def _city(self) -> str:
        # Big cities are asked for more often.
        return self.rng.choices(self.cities, weights=[row[3] for row in self.cities])[0][0]

    def _window(self) -> str:
        start = today() + dt.timedelta(days=self.rng.randrange(0, 60))
        end = start + dt.timedelta(days=self.rng.choice((0, 1, 2, 6, 13, 30)))
        return f"from={start}&to={end}"

    def _limit(self) -> str:
        return self.rng.choice(("", "", "", "&limit=10", "&limit=50", "&limit=100"))

    def _events(self, query: str) -> str:
        return f"/v1/events?{query}{self._limit()}"

    def city(self):
        return self._events(f"city={_q(self._city())}")

    def city_genre(self):
        return self._events(f"city={_q(self._city())}&genre={_q(self.rng.choice(self.genres))}")

    def city_window(self):
        return self._events(f"city={_q(self._city())}&{self._window()}")

    def genre_window(self):
        return self._events(f"genre={_q(self.rng.choice(self.genres))}&{self._window()}")

    def radius(self):
        _city, lat, lng, _n = self.rng.choice(self.cities)
        lat += self.rng.uniform(-0.05, 0.05)
        lng += self.rng.uniform(-0.05, 0.05)
        return self._events(f"lat={lat:.3f}&lng={lng:.3f}&radius_km="
                            f"{self.rng.choice((2, 5, 10, 25, 50))}")

    def q(self):
        return self._events(f"q={_q(self.rng.choice(self.words))}")

    def price(self):
        low = self.rng.choice((0, 5, 10, 15, 20))
        return self._events(f"min_price={low}&max_price={low + self.rng.choice((5, 10, 25))}")

    def tickets(self):
        return self._events(f"has_tickets=true&city={_q(self._city())}")

    def venue_events(self):
        return self._events(f"venue_id={_q(self.rng.choice(self.venues))}")

    def artist_events(self):
        return self._events(f"artist_id={_q(self.rng.choice(self.artists))}")

    def organisation_events(self):
        return self._events(f"organisation_id={_q(self.rng.choice(self.organisations))}")

    def combination(self):
        return self._events(f"city={_q(self._city())}&genre={_q(self.rng.choice(self.genres))}"
                            f"&{self._window()}&max_price={self.rng.choice((10, 20, 40))}")

    def event(self):
        return f"/v1/events/{_q(self.rng.choice(self.events))}"

    def venue(self):
        return f"/v1/venues/{_q(self.rng.choice(self.venues))}"

    def artist(self):
        return f"/v1/artists/{_q(self.rng.choice(self.artists))}"

    def lists(self):
        return self.rng.choice((
            f"/v1/venues?city={_q(self._city())}{self._limit()}",
            f"/v1/venues?city={_q(self._city())}&with_events=true",
            f"/v1/artists?genre={_q(self.rng.choice(self.genres))}{self._limit()}",
            f"/v1/artists?q={_q(self.rng.choice(self.words)[:4])}",
            f"/v1/organisations?limit={self.rng.randrange(5, 100)}",
            f"/v1/cities?limit={self.rng.randrange(5, 100)}",
            f"/v1/genres?limit={self.rng.randrange(5, 100)}",
        ))


def _q(value: str) -> str:
    return urllib.parse.quote(value, safe="")


if __name__ == "__main__":
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("database_url")
    options.add_argument("--count", type=int, default=5000)
    options.add_argument("--seed", type=int, default=1)
    args = options.parse_args()
    print("\n".join(urls(args.database_url, count=args.count, seed=args.seed)))

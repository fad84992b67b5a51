"""The agenda's calendar: Europe/Amsterdam decides what today is and when a day ends."""

from __future__ import annotations

import datetime as dt
import functools
from zoneinfo import ZoneInfo

AMSTERDAM = ZoneInfo("Europe/Amsterdam")


def today() -> dt.date:
    """Today's date in Europe/Amsterdam."""
    return dt.datetime.now(AMSTERDAM).date()


@functools.lru_cache(maxsize=8)
def day_of_minute(minute: int) -> tuple[str, int]:
    """(Amsterdam date, Unix seconds of the next Amsterdam midnight) at a minute number
    (Unix seconds // 60): what the counters of a request need, computed once a minute."""
    moment = minute * 60
    date = dt.datetime.fromtimestamp(moment, AMSTERDAM).date()
    midnight = dt.datetime.combine(date + dt.timedelta(days=1), dt.time(0), AMSTERDAM)
    return date.isoformat(), int(midnight.timestamp())

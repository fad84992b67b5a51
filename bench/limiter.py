"""The cost of counting a request: `Usage.hit` with in-memory counters and with Redis.

    python bench/limiter.py [--redis redis://127.0.0.1:6379/0] [--hits 20000]

Reports microseconds per counted request for each store, and the Redis cost as a
ratio to the in-memory one (both measured in this run, one process, one thread).
"""

from __future__ import annotations

import argparse
import time

from edge.limits import Usage
from models.tokens import Caller


def per_hit(storage: str, hits: int) -> float:
    """Mean microseconds of one `Usage.hit` on `storage`."""
    usage = Usage(storage, per_minute=10**9, per_day=10**9)
    caller = Caller(token_id=f"tok_bench_{time.time_ns()}", organisation_id="org_bench",
                    scopes=frozenset({"read"}), per_day=None)
    usage.hit(caller, "/v1/events")  # connect before timing
    started = time.perf_counter()
    for _ in range(hits):
        usage.hit(caller, "/v1/events")
    return (time.perf_counter() - started) / hits * 1e6


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    options.add_argument("--hits", type=int, default=20000)
    args = options.parse_args()
    memory = per_hit("memory://", args.hits)
    shared = per_hit(args.redis, args.hits)
    print("| store | µs per counted request | × memory |")
    print("|---|---:|---:|")
    print(f"| memory:// | {memory:.1f} | 1.00 |")
    print(f"| {args.redis} | {shared:.1f} | {shared / memory:.2f} |")


if __name__ == "__main__":
    main()

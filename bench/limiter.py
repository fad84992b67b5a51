"""The cost of counting a request: `Usage.hit` with in-memory counters and with Redis.

    python bench/limiter.py [--redis redis://127.0.0.1:6379/0] [--hits 20000]

Reports microseconds per counted request for each store, and the Redis cost as a
ratio to the in-memory one (both measured in this run, one process, one thread); then
the CPU a count costs the process on the event loop (`Usage.hit_async`, as a worker counts
a request whose token it knows), asked one at a time and 32 at once (a worker under load:
the counts asked while a round trip is on its way share the next one).
"""

from __future__ import annotations

import argparse
import asyncio
import time

import uvloop

from edge.limits import Usage
from models.tokens import Caller


def _caller() -> Caller:
    """A token of its own for one measurement: its counters start from nothing."""
    return Caller(token_id=f"tok_bench_{time.time_ns()}", organisation_id="org_bench",
                  scopes=frozenset({"read"}), per_day=None)


def per_hit(storage: str, hits: int) -> float:
    """Mean microseconds of one `Usage.hit` on `storage`."""
    usage, caller = Usage(storage, per_minute=10**9, per_day=10**9), _caller()
    usage.hit(caller, "/v1/events")  # connect before timing
    started = time.perf_counter()
    for _ in range(hits):
        usage.hit(caller, "/v1/events")
    return (time.perf_counter() - started) / hits * 1e6


def cpu_per_hit_async(storage: str, hits: int, at_once: int) -> float:
    """Mean microseconds of this process's CPU for one `Usage.hit_async` on `storage`, with
    `at_once` asked together."""
    usage, caller = Usage(storage, per_minute=10**9, per_day=10**9), _caller()

    async def asking(count: int) -> None:
        for _ in range(count):
            await usage.hit_async(caller, "/v1/events")

    async def measured() -> float:
        await usage.open()
        try:
            await asking(10)  # connect before timing
            started = time.process_time()
            await asyncio.gather(*(asking(hits // at_once) for _ in range(at_once)))
            return (time.process_time() - started) / (hits // at_once * at_once) * 1e6
        finally:
            await usage.close()

    return uvloop.run(measured())


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
    print("\n| on the event loop | CPU µs a count, one at a time | 32 at once |")
    print("|---|---:|---:|")
    for storage in ("memory://", args.redis):
        alone, together = (cpu_per_hit_async(storage, args.hits, at_once) for at_once in (1, 32))
        print(f"| {storage} | {alone:.1f} | {together:.1f} |")


if __name__ == "__main__":
    main()

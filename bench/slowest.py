"""The long tail's URLs one at a time: which kinds and which URLs take longest.

    .venv/bin/python bench/slowest.py [--size 1000000] [--count 1500] [--top 30]

Serves the service on a database `bench/run.py --keep` loaded (`agenda_bench_<size>`) with
one worker and nothing kept (AGENDA_RESPONSE_CACHE=false), asks each of `count` long-tail
URLs (bench/longtail.py) twice and keeps the faster time (the second finds PostgreSQL's
pages read), then prints the time per kind of URL (its path and the names of its query's
parameters), slowest total first, and the slowest URLs. A measurement of where a miss's
time goes, not a throughput: one request at a time, no wrk.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request

from run import BIN, PORT, ROOT, database, prepared, serve, stop


def kind(path: str) -> str:
    """A URL's path (ids as `{id}`) and the sorted names of its query's parameters."""
    parts = urllib.parse.urlsplit(path)
    segments = parts.path.split("/")  # "", "v1", the resource, its id or slug, ...
    head = "/".join(segments[:3] + ["{id}"] * (len(segments) > 3) + segments[4:])
    return f"{head}?{'&'.join(sorted(name for name, _ in urllib.parse.parse_qsl(parts.query)))}"


def timed(path: str, token: str) -> float:
    """Milliseconds for one request of `path` (an answer of 400 or up fails the run)."""
    request = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}",
                                     headers={"Authorization": f"Bearer {token}"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=60) as answer:
        answer.read()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--size", type=int, default=1_000_000)
    options.add_argument("--count", type=int, default=1500)
    options.add_argument("--top", type=int, default=30)
    args = options.parse_args()
    server_url = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
    env, token = prepared(database(server_url, f"agenda_bench_{args.size}", keep=True))
    env["AGENDA_RESPONSE_CACHE"] = "false"
    paths = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "longtail.py"), env["AGENDA_DATABASE_URL"],
         "--count", str(args.count)], env=env, check=True, capture_output=True,
        text=True).stdout.split()
    server = serve([str(BIN / "agenda"), "serve", "--port", str(PORT), "--workers", "1"],
                   env, PORT)
    try:
        for path in paths[:50]:  # the worker's first requests: imports, compiled statements
            timed(path, token)
        times = {path: min(timed(path, token), timed(path, token)) for path in paths}
    finally:
        stop(server)
    kinds = collections.defaultdict(list)
    for path, ms in times.items():
        kinds[kind(path)].append(ms)
    print(f"{len(times)} URLs in {sum(times.values()) / 1000:.1f} s, "
          f"median {statistics.median(times.values()):.1f} ms\n")
    print("| total s | URLs | median ms | max ms | kind |\n|---:|---:|---:|---:|---|")
    for name, spent in sorted(kinds.items(), key=lambda item: -sum(item[1])):
        print(f"| {sum(spent) / 1000:.2f} | {len(spent)} | {statistics.median(spent):.1f} "
              f"| {max(spent):.1f} | `{name}` |")
    print("\n| ms | URL |\n|---:|---|")
    for path, ms in sorted(times.items(), key=lambda item: -item[1])[:args.top]:
        print(f"| {ms:.1f} | `{path}` |")


if __name__ == "__main__":
    main()

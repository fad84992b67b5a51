"""Train the response cache's Zstandard dictionary (edge/answers.zdict) from demo answers.

    .venv/bin/python bench/dictionary.py [--events 10000] [--size 32768]

Loads a demo catalogue into the database `agenda_bench_<events>` (kept, as `run.py --keep`
keeps it; PostgreSQL: AGENDA_BENCH_DATABASE_URL, default the local server), serves it with
nothing kept, asks each of the long tail's URLs (bench/longtail.py: every kind of list and
detail) once, and trains a dictionary of `--size` bytes on the answers' `data`, the part a
kept answer compresses (edge/cache.py). The answers are built for the site
https://agenda.example, not the benchmark's, so that its URLs are no closer to the
dictionary than a deployment's. Run it again when what the answers hold changes shape (a
field added or renamed): an outdated dictionary costs ratio, never correctness, and a new
one has a new id, which the Redis keys of kept answers name. The same agenda on the same
day gives the same bytes; the demo agenda's lists start today, so another day gives
another dictionary: commit one with the measurement of its ratio (bench/RESULTS.md).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import subprocess
import sys
import urllib.request

import zstandard

from edge.answers import data_of
from run import BIN, PORT, ROOT, agenda, database, maintain, prepared, serve, stop

OUTPUT = ROOT / "edge" / "answers.zdict"
SITE = "https://agenda.example"


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--events", type=int, default=10_000)
    options.add_argument("--size", type=int, default=32 * 1024)
    args = options.parse_args()
    server_url = os.environ.get("AGENDA_BENCH_DATABASE_URL",
                                "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
    env, token = prepared(database(server_url, f"agenda_bench_{args.events}", keep=True))
    agenda(env, "demo-data", "--events", str(args.events), "--seed", "1")
    maintain(env["AGENDA_DATABASE_URL"])
    env |= {"AGENDA_RESPONSE_CACHE": "false", "AGENDA_SITE_URL": SITE}
    paths = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "longtail.py"), env["AGENDA_DATABASE_URL"]],
        env=env, check=True, capture_output=True, text=True).stdout.split()
    server = serve([str(BIN / "agenda"), "serve", "--port", str(PORT), "--workers", "2"],
                   env, PORT)

    def answer(path: str) -> bytes:
        request = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}",
                                         headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return data_of(response.read())

    try:
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            samples = list(pool.map(answer, paths))
    finally:
        stop(server)
    trained = zstandard.train_dictionary(args.size, samples)
    OUTPUT.write_bytes(trained.as_bytes())
    print(f"{OUTPUT.relative_to(ROOT)}: {len(trained.as_bytes()):,} bytes, id "
          f"{trained.dict_id()}, from {len(samples):,} answers "
          f"({sum(map(len, samples)) / len(samples):,.0f} bytes on average)")


if __name__ == "__main__":
    main()

"""Benchmark GET /events at growing sizes against the framework floor, in one run.

    python bench/run.py [--sizes 10000,100000,1000000] [--duration 10] [--connections 32]

Needs PostgreSQL (AGENDA_BENCH_DATABASE_URL, default the local server; a database
`agenda_bench` is created) and wrk (`apt-get install wrk`). For each size it loads
demo events (`agenda demo-data`), serves the service with 2 workers, runs wrk on
GET /events without and with each hot filter, then serves the floor (bench/floor.py:
a bare Connexion route returning a prebuilt body of the same size) and reports
requests/s, p50 and p99, and each throughput as a ratio to the floor's. Numbers are
only comparable within one run: wrk shares the machine's cores with the servers.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PORT, FLOOR_PORT = 18181, 18182
TODAY = dt.date.today()
SCENARIOS = {
    "no filter": "",
    "date window": f"from={TODAY + dt.timedelta(days=14)}&to={TODAY + dt.timedelta(days=21)}",
    "city": "city=utrecht",
    "genre": "genre=Techno",
    "radius": "lat=52.37&lng=4.89&radius_km=10",
    "q": "q=club",
    "price": "max_price=0",
}


def database(url: str, name: str = "agenda_bench") -> str:
    """A fresh database `name` on the server of `url`."""
    server = make_url(url)
    admin = create_engine(server.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return server.set(database=name).render_as_string(hide_password=False)


def maintain(url: str) -> None:
    """VACUUM (ANALYZE) after a load, as after any bulk load: otherwise autovacuum works
    through the fresh rows (and the trigram index's pending list) during the measurement."""
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text("VACUUM (ANALYZE)"))
    engine.dispose()


def agenda(env: dict, *args: str) -> str:
    """Run the `agenda` command; its standard output."""
    done = subprocess.run([str(BIN / "agenda"), *args], env=env, check=True,
                          capture_output=True, text=True)
    return done.stdout


def serve(command: list[str], env: dict, port: int) -> subprocess.Popen:
    """Start a server and wait until it answers."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return process
        except urllib.error.HTTPError:
            return process
        except OSError:
            time.sleep(0.1)
    stop(process)
    raise RuntimeError(f"server on {port} did not start")


def stop(process: subprocess.Popen) -> None:
    """Stop a server and its workers."""
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)


def wrk(url: str, token: str | None, *, duration: int, connections: int,
        script: Path | None = None, script_args: tuple[str, ...] = ()) -> dict:
    """Requests/s, p50 and p99 (ms) and the request count of wrk against `url`.

    `script` is a wrk Lua script (e.g. one that POSTs); `script_args` go to its `init`.
    """
    command = ["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency", url]
    if token:
        command[1:1] = ["-H", f"Authorization: Bearer {token}"]
    if script:
        command[1:1] = ["-s", str(script)]
        command += ["--", *script_args]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    if "Non-2xx" in output:
        raise RuntimeError(f"errors while benchmarking {url}:\n{output}")
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    return {"rps": rate, "p50": _ms(output, "50%"), "p99": _ms(output, "99%"),
            "requests": int(re.search(r"(\d+) requests in", output).group(1))}


def _ms(output: str, percentile: str) -> float:
    value, unit = re.search(rf"{percentile}\s+([\d.]+)(us|ms|s)", output).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--sizes", default="10000,100000,1000000")
    options.add_argument("--duration", type=int, default=10)
    options.add_argument("--connections", type=int, default=32)
    args = options.parse_args()
    url = database(os.environ.get("AGENDA_BENCH_DATABASE_URL",
                                  "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"))
    env = {**os.environ, "AGENDA_DATABASE_URL": url, "AGENDA_SECRET_KEY": "bench",
           "AGENDA_SITE_URL": f"http://127.0.0.1:{PORT}",
           # The limiter still runs and is measured; the limits themselves would stop wrk.
           "AGENDA_PER_MINUTE": "1000000000"}
    agenda(env, "db", "upgrade")
    agenda(env, "organisation", "create", "Bench")
    token = agenda(env, "token", "create", "--organisation", "Bench", "--scopes", "read",
                   "--name", "bench", "--per-day", "1000000000").strip().splitlines()[-1]
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        started = time.time()
        agenda(env, "demo-data", "--events", str(size), "--seed", "1")
        print(f"# {size:,} events loaded in {time.time() - started:.0f} s", flush=True)
        maintain(url)
        server = serve([str(BIN / "agenda"), "serve", "--port", str(PORT), "--workers", "2"],
                       env, PORT)
        try:
            base = f"http://127.0.0.1:{PORT}/v1/events?limit=25"
            body = urllib.request.urlopen(urllib.request.Request(
                base, headers={"Authorization": f"Bearer {token}"})).read()
            results = {name: wrk(f"{base}&{query}" if query else base, token,
                                 duration=args.duration, connections=args.connections)
                       for name, query in SCENARIOS.items()}
        finally:
            stop(server)
        floor = serve([str(BIN / "uvicorn"), "bench.floor:app", "--port", str(FLOOR_PORT),
                       "--workers", "2", "--log-level", "warning"],
                      {**env, "AGENDA_FLOOR_BYTES": str(len(body)), "PYTHONPATH": str(ROOT)},
                      FLOOR_PORT)
        try:
            bottom = wrk(f"http://127.0.0.1:{FLOOR_PORT}/v1/floor", None,
                         duration=args.duration, connections=args.connections)
        finally:
            stop(floor)
        rows.append((size, len(body), bottom, results))
        report(rows)


def report(rows) -> None:
    """A markdown table of the run so far."""
    print("\n| events | scenario | req/s | p50 ms | p99 ms | × floor |")
    print("|---:|---|---:|---:|---:|---:|")
    for size, body_size, bottom, results in rows:
        print(f"| {size:,} | floor ({body_size:,} B body) | {bottom['rps']:.0f} | "
              f"{bottom['p50']:.1f} | {bottom['p99']:.1f} | 1.00 |")
        for name, result in results.items():
            print(f"| {size:,} | {name} | {result['rps']:.0f} | {result['p50']:.1f} | "
                  f"{result['p99']:.1f} | {result['rps'] / bottom['rps']:.2f} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

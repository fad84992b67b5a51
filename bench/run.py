"""Benchmark the catalogue at growing sizes, hot URLs and a long tail, against the framework floor.

    python bench/run.py [--sizes 10000,100000,1000000] [--duration 10] [--connections 32]
                        [--output bench/results/latest-run.md] [--redis URL] [--no-organiser]
                        [--keep]

Needs PostgreSQL (AGENDA_BENCH_DATABASE_URL, default the local server; a database
`agenda_bench` is created, or with `--keep` one of each size, `agenda_bench_<size>`, kept
for the next run) and wrk (`apt-get install wrk`). For each size it loads
demo events (`agenda demo-data`) and serves the service with 2 workers, twice:

- with the response cache (edge/cache.py, the default): wrk repeats GET /events
  without and with each hot filter (`cached`); `revalidation` sends the first page
  with `If-None-Match: <its ETag>` (every answer must be a 304); `deep page` is the
  41st page, reached by following `meta.next_cursor` 40 times; `catalogue changing
  every second` repeats the unfiltered page while one event's title changes every
  second (each change makes every kept answer stale); with `--redis URL`, a third
  server counts the limits in that Redis for the unfiltered row;
- a long tail (`long tail`): 5,000 distinct catalogue URLs of every kind
  (bench/longtail.py: filters and their combinations, radius searches, free text,
  second pages, detail pages, the other lists), drawn by bench/longtail.lua with Zipf
  exponent 1.0 and uniformly; with `--redis URL` again with limits and kept answers in
  that Redis. Its rows give the share of answers the response cache had kept (`hits`):
  the Zipf draw `filling` (nothing of the tail kept yet), then each draw, after
  `WARM_SECONDS` of it, `cold`, from a second after a change to the catalogue (every
  kept answer stale), then `warm`, after `WARM_SECONDS` more of the same load;
- without keeping anything (AGENDA_RESPONSE_CACHE=false): the same filters, the deep
  page and the long tail, every request built (`built`): the cost of a miss; also the
  facet counts (`facets=genre,city,date`) unfiltered and within the organisation with the
  most events coming, beside the same two lists without them: a faceted request's cost
  next to the same list's miss. These four rows are measured in turns (`in_turns`),
  so that a machine whose speed drifts during the run drifts under each of them alike.

The floor (bench/floor.py: a bare Connexion route returning a prebuilt body of the size
of the first page, served the same way) is measured in turns with the unfiltered cached
page and its 304, beside the service keeping answers: the hot URL's ratios do not depend
on when the floor ran. Every row gives requests/s, p50 and p99, the CPU time of the
server's processes (master and workers) per request and that of PostgreSQL's processes on
this machine (a miss costs the database about two thirds of what it costs the workers),
the largest worker's resident memory after the run, and its throughput and CPU per
request as ratios to the floor's.
The table is printed after each size and, at the end, written with a line naming the
date, commit, machine and settings to `--output`, followed by the tables of
`bench/organiser.py` (POST /scan by 8 doors, deliveries of 500 tickets), which it runs
last unless `--no-organiser`. Numbers are only comparable within one run: wrk shares the
machine's cores with the servers.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import datetime as dt
import importlib.util
import json
import os
import platform
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from email.message import Message
from pathlib import Path

import redis
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from edge.cache import SHARED_PREFIX

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PORT, FLOOR_PORT = 18181, 18182
OUTPUT = ROOT / "bench" / "results" / "latest-run.md"
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
# Built only (the cost of a miss): facet counts, without a filter and within the organisation
# with the most events coming (`{organisation}`), each beside the same list without them.
FACETED = "facets=genre,city,date"
BUILT_ONLY = {
    "facets (genre,city,date)": FACETED,
    "organisation_id": "organisation_id={organisation}",
    "facets (genre,city,date), organisation_id": f"{FACETED}&organisation_id={{organisation}}",
}
# The deep page is the one after this many pages of the unfiltered list.
DEEP = 40
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
AUTOGROUP = Path("/proc/sys/kernel/sched_autogroup_enabled")
# wrk counts only statuses of 400 and up as errors; this script counts the 304s.
NOT_MODIFIED_LUA = """\
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) not_modified = 0 end
function response(status, headers, body)
  if status == 304 then not_modified = not_modified + 1 end
end
function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("not_modified") end
  io.write(string.format("304 responses: %d\\n", total))
end
"""
COLUMNS = ("| events | scenario | hits | req/s | p50 ms | p99 ms | CPU µs/req | PG CPU µs/req "
           "| RSS MB | × floor | × floor CPU |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:"
           "|---:|")
# The long tail: distinct URLs, of which this many are second pages (a cursor followed).
LONG_TAIL, SECOND_PAGES = 5000, 250
LONG_TAIL_LUA = ROOT / "bench" / "longtail.lua"
# A long tail's warm row follows its cold one after this many seconds more of the same load,
# unmeasured: each worker has then asked for most of the tail and kept what its bound holds
# (at 100k, a Zipf draw's hits in successive 8 s runs: 78%, 92%, 97%, 97%).
WARM_SECONDS = 24
LEGEND = ("hits: the share of answers the response cache had kept (long tail rows), + the "
          "share it served again once their check said a change had left them as they were "
          "(X-Cache: revalidated); "
          "long tail, filling: the Zipf draw's first seconds, nothing of the tail kept yet "
          f"(as after a restart); cold: after {WARM_SECONDS} s of the draw, measured from a "
          "second after a change to the catalogue (every kept answer stale: each URL's "
          "answer is checked or built once more, by each worker but for what the other "
          "shared (in Redis, or counting in memory in the host's file), as after every "
          "change; at the turn of the hour every one is built); "
          f"warm: after {WARM_SECONDS} s more of the same load, the catalogue unchanged (a "
          "draw the clock hour would turn during starts after it); "
          "CPU µs/req: utime + stime of the server's processes (uvicorn master and workers, "
          "not PostgreSQL) during the wrk run, per request answered; PG CPU µs/req: the same "
          "of PostgreSQL's processes on this machine (the floor makes no statement); RSS MB: "
          "the largest worker's VmRSS after the run; × floor: req/s over the floor's; "
          "× floor CPU: the floor's CPU µs/req over the row's (below 1: dearer per request "
          "than the floor).")


def database(url: str, name: str = "agenda_bench", *, keep: bool = False) -> str:
    """A fresh database `name` on the server of `url`; with `keep`, the one there if any."""
    server = make_url(url)
    admin = create_engine(server.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        there = connection.execute(text("SELECT 1 FROM pg_database WHERE datname = :name"),
                                   {"name": name}).first() is not None
        if there and not keep:
            connection.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        if not there or not keep:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return server.set(database=name).render_as_string(hide_password=False)


def prepared(url: str) -> tuple[dict, str]:
    """The environment serving the database at `url` (migrated) and a read token for it."""
    env = {**os.environ, "AGENDA_DATABASE_URL": url, "AGENDA_SECRET_KEY": "bench",
           "AGENDA_SITE_URL": f"http://127.0.0.1:{PORT}",
           # The limiter still runs and is measured; the limits themselves would stop wrk.
           "AGENDA_PER_MINUTE": "1000000000"}
    agenda(env, "db", "upgrade")
    with contextlib.suppress(subprocess.CalledProcessError):  # a kept database has it
        agenda(env, "organisation", "create", "Bench")
    token = agenda(env, "token", "create", "--organisation", "Bench", "--scopes", "read",
                   "--name", "bench", "--per-day", "1000000000").strip().splitlines()[-1]
    return env, token


def maintain(url: str) -> None:
    """VACUUM (ANALYZE) after a load, as after any bulk load: otherwise autovacuum works
    through the fresh rows (and the trigram index's pending list) during the measurement."""
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text("VACUUM (ANALYZE)"))
    engine.dispose()


def busiest_organisation(url: str) -> str:
    """The id of the organisation with the most approved events from today on."""
    engine = create_engine(url)
    with engine.connect() as connection:
        found = connection.execute(text(
            "SELECT organisation_id FROM events WHERE status = 'approved' AND date >= :today "
            "GROUP BY organisation_id ORDER BY count(*) DESC, organisation_id LIMIT 1"),
            {"today": TODAY}).scalar_one()
    engine.dispose()
    return found


def autogroup() -> str:
    """`on`, `off` or `unknown`: whether Linux schedules each session as one group
    (`kernel.sched_autogroup_enabled`); on, requests stall now and then (bench/README.md,
    "The machine")."""
    try:
        return "on" if AUTOGROUP.read_text().strip() == "1" else "off"
    except OSError:
        return "unknown"


def warn_of_autogroup() -> None:
    """Say on standard error when the measurement may stall now and then (autogroup on)."""
    if autogroup() == "on":
        print("# warning: kernel.sched_autogroup_enabled is 1: the cores are shared between "
              "sessions, and requests may stall for up to seconds now and then; as root: "
              "sysctl -w kernel.sched_autogroup_enabled=0 (bench/README.md)",
              file=sys.stderr, flush=True)


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


def processes() -> dict[int, tuple[str, list[str]]]:
    """The command name and the fields after it of /proc/<pid>/stat, of every process."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        found[int(entry.name)] = (stat[stat.index("(") + 1:stat.rindex(")")],
                                  stat[stat.rindex(")") + 2:].split())
    return found


def _cpu(fields: list[str]) -> int:
    # Fields 14 and 15 of stat(5): utime, stime (in clock ticks).
    return int(fields[11]) + int(fields[12])


def cpu_seconds(leader: int) -> float:
    """utime + stime of every process in the session of `leader` (a server and its workers)."""
    # Field 6 of stat(5): the session.
    return sum(_cpu(fields) for _name, fields in processes().values()
               if int(fields[3]) == leader) / CLOCK_TICKS


def database_cpu_seconds() -> float:
    """utime + stime of PostgreSQL's processes on this machine (the server, its backends
    and background workers): what a request costs the database when it runs here."""
    return sum(_cpu(fields) for name, fields in processes().values()
               if name == "postgres") / CLOCK_TICKS


def workers(leader: int) -> list[int]:
    """The worker processes of server `leader`: its children, less multiprocessing's
    resource tracker."""
    children = [pid for pid, (_name, fields) in processes().items()
                if int(fields[1]) == leader]
    return [pid for pid in children
            if b"resource_tracker" not in Path(f"/proc/{pid}/cmdline").read_bytes()]


def worker_rss_mb(leader: int) -> float:
    """The largest VmRSS of the workers of server `leader`, in MB."""
    sizes = [0]
    for pid in workers(leader):
        found = re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
        sizes.append(int(found.group(1)) if found else 0)
    return max(sizes) / 1024


def wrk(url: str, token: str | None, *, duration: int, connections: int,
        script: Path | None = None, script_args: tuple[str, ...] = (),
        headers: dict[str, str] | None = None,
        server: subprocess.Popen | None = None, warm_up: bool = False) -> dict:
    """Requests/s, p50 and p99 (ms), the request count and any socket errors of wrk on `url`.

    `script` is a wrk Lua script (e.g. one that POSTs); `script_args` go to its `init`.
    With `server`, also its CPU µs per request during the run, PostgreSQL's on this
    machine (`database_cpu_seconds`), and its largest worker's RSS (MB) after it. Answers
    of 400 and up are an error. With `warm_up`, the same load runs for a second first,
    unmeasured: a row measures the steady state (a cached row its cached answers, not the
    first requests of each worker, which go the full way).
    """
    command = ["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency", url]
    for name, value in {**({"Authorization": f"Bearer {token}"} if token else {}),
                        **(headers or {})}.items():
        command[1:1] = ["-H", f"{name}: {value}"]
    if script:
        command[1:1] = ["-s", str(script)]
        command += ["--", *script_args]
    if warm_up:
        subprocess.run([part if part != f"-d{duration}s" else "-d1s" for part in command],
                       check=True, capture_output=True)
    before = (cpu_seconds(server.pid), database_cpu_seconds()) if server else (0.0, 0.0)
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    spent, database = ((cpu_seconds(server.pid) - before[0], database_cpu_seconds() - before[1])
                       if server else (0.0, 0.0))
    if "Non-2xx" in output or re.search(r"tool errors: [1-9]", output):
        raise RuntimeError(f"errors while benchmarking {url}:\n{output}")
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    requests = int(re.search(r"(\d+) requests in", output).group(1))
    socket_errors = re.search(r"Socket errors: (connect \d+, read \d+, write \d+, "
                              r"timeout \d+)", output)
    not_modified = re.search(r"304 responses: (\d+)", output)
    hits = re.search(r"cache hits: (\d+) of (\d+), revalidated: (\d+)", output)
    result = {"rps": rate, "p50": _ms(output, "50%"), "p99": _ms(output, "99%"),
              "requests": requests,
              "socket_errors": socket_errors.group(1) if socket_errors else None,
              "not_modified": int(not_modified.group(1)) if not_modified else None,
              "hits": int(hits.group(1)) / max(int(hits.group(2)), 1) if hits else None,
              "revalidated": int(hits.group(3)) / max(int(hits.group(2)), 1) if hits else None}
    if server:
        result["cpu_us"] = spent * 1e6 / requests if requests else None
        result["db_cpu_us"] = database * 1e6 / requests if requests else None
        result["rss_mb"] = worker_rss_mb(server.pid)
    return result


def in_turns(measures: dict[str, Callable[..., dict]], *, duration: int, slices: int = 5,
             **options) -> dict[str, dict]:
    """Each of `measures` (a `wrk` run, given `duration`, `warm_up` and `options`) in turn,
    `slices` times (each a second of warm-up first, then `duration` / `slices` seconds a
    turn, at least one): rows whose ratios do not depend on when each ran. Requests/s and
    CPU µs per request over all of a row's turns; p50 and p99 the median of its turns';
    304s added up; RSS after its last."""
    seconds = max(1, duration // slices)
    turns: dict[str, list[dict]] = {name: [] for name in measures}
    for index in range(slices):
        for name, measure in measures.items():
            turns[name].append(measure(duration=seconds, warm_up=index == 0, **options))
    rows = {}
    for name, runs in turns.items():
        requests = sum(run["requests"] for run in runs)
        rows[name] = {
            "rps": requests / sum(run["requests"] / run["rps"] for run in runs),
            "p50": statistics.median(run["p50"] for run in runs),
            "p99": statistics.median(run["p99"] for run in runs),
            "requests": requests,
            "socket_errors": "; ".join(run["socket_errors"] for run in runs
                                       if run["socket_errors"]) or None,
            "not_modified": (None if runs[0]["not_modified"] is None
                             else sum(run["not_modified"] for run in runs)),
            "hits": None,
            "cpu_us": sum(run["cpu_us"] * run["requests"] for run in runs) / requests,
            "db_cpu_us": sum(run["db_cpu_us"] * run["requests"] for run in runs) / requests,
            "rss_mb": runs[-1]["rss_mb"]}
    return rows


def _ms(output: str, percentile: str) -> float:
    value, unit = re.search(rf"{percentile}\s+([\d.]+)(us|ms|s)", output).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def get(url: str, token: str) -> tuple[bytes, Message]:
    """The body and headers (names in any case) of one GET with the token."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request) as response:
        return response.read(), response.headers


def deep_page(base: str, token: str) -> str:
    """The URL of the page after `DEEP` pages of `base`, following `meta.next_cursor`."""
    url = base
    for page in range(DEEP):
        cursor = json.loads(get(url, token)[0])["meta"]["next_cursor"]
        if cursor is None:
            raise RuntimeError(f"{base} has only {page + 1} pages, not {DEEP + 1}")
        url = f"{base}&cursor={urllib.parse.quote(cursor, safe='')}"
    return url


def revalidation(url: str, token: str, server: subprocess.Popen, **options) -> dict:
    """wrk on `url` with If-None-Match: its ETag; an error unless every answer was a 304.

    A page with a next page changes at the turn of the clock hour, rightly: its
    `meta.next_cursor` carries the hour it was issued in (edge/cursors.py), so from then on
    the answer has another ETag. A run the hour would turn during starts after it."""
    past_the_hour(options["duration"] + 2)  # with a second of warm-up and one to spare
    tag = get(url, token)[1]["ETag"]
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder, "not-modified.lua")
        script.write_text(NOT_MODIFIED_LUA)
        result = wrk(url, token, headers={"If-None-Match": tag}, script=script, server=server,
                     **options)
    if result["not_modified"] != result["requests"]:
        # Which tags the workers give now (a connection each: either worker may answer).
        now = sorted({get(url, token)[1]["ETag"] for _ in range(8)})
        raise RuntimeError(f"{result['not_modified']} of {result['requests']} answers to "
                           f"If-None-Match: {tag} on {url} were a 304; tags now: {now}")
    return result


def past_the_hour(seconds: float) -> None:
    """Wait until the clock hour has turned when it would turn within `seconds`."""
    left = 3600 - time.time() % 3600
    if left <= seconds:
        time.sleep(left + 0.5)


def service(env: dict, token: str, paths: Path, *, cached: bool,
            **options) -> tuple[int, dict | None, dict]:
    """Serve the service keeping answers or not and measure it: the size of the first page,
    the floor's wrk figures and the wrk figures of each row. Keeping answers, the floor is
    served beside it and measured in turns with the hot URL and its 304 (otherwise None)."""
    label = "cached" if cached else "built"
    server = serve([str(BIN / "agenda"), "serve", "--port", str(PORT), "--workers", "2"],
                   {**env, "AGENDA_RESPONSE_CACHE": "true" if cached else "false"}, PORT)
    try:
        base = f"http://127.0.0.1:{PORT}/v1/events?limit=25"
        body = get(base, token)[0]
        bottom, results = None, {}
        if cached:
            with floor_served(env, len(body)) as floor:
                results = in_turns({
                    "floor": functools.partial(wrk, f"http://127.0.0.1:{FLOOR_PORT}/v1/floor",
                                               None, server=floor),
                    f"{label}: no filter": functools.partial(wrk, base, token, server=server),
                    f"{label}: revalidation (304)": functools.partial(revalidation, base,
                                                                      token, server),
                }, **options)
            bottom = results.pop("floor")
        results |= {f"{label}: {name}": wrk(f"{base}&{query}" if query else base, token,
                                             server=server, warm_up=True, **options)
                    for name, query in SCENARIOS.items() if f"{label}: {name}" not in results}
        if not cached:
            organisation = busiest_organisation(env["AGENDA_DATABASE_URL"])
            paired = {"no filter, in turns with the facets": base} | {
                name: f"{base}&{query.format(organisation=organisation)}"
                for name, query in BUILT_ONLY.items()}
            results |= in_turns({f"{label}: {name}": functools.partial(wrk, url, token,
                                                                       server=server)
                                 for name, url in paired.items()}, **options)
        results[f"{label}: deep page (page {DEEP + 1})"] = wrk(
            deep_page(base, token), token, server=server, warm_up=True, **options)
        if cached:
            with changing(env["AGENDA_DATABASE_URL"]):
                results[f"{label}: no filter, catalogue changing every second"] = wrk(
                    base, token, server=server, warm_up=True, **options)
        results |= long_tail(label, token, paths, server, env["AGENDA_DATABASE_URL"],
                             cold_only=not cached, **options)
    finally:
        stop(server)
    return len(body), bottom, results


def long_tail(label: str, token: str, paths: Path, server: subprocess.Popen,
              database_url: str, *, cold_only: bool = False, **options) -> dict:
    """The long tail's rows on a served service, drawn with Zipf 1.0 and uniformly. The Zipf
    draw first `filling`, nothing of the tail kept yet (as after a restart). Each draw
    then, after `WARM_SECONDS` of it (each worker has asked for most of the tail), `cold`:
    from a second after a change to the catalogue, every kept answer stale, so each worker
    checks or builds each URL's answer once more (what follows every change; at the turn
    of the hour every one is built); then `warm`, after `WARM_SECONDS` more of the same load
    with the catalogue unchanged (what the cache's bound keeps). `cold_only`: the uniform
    draw's cold row alone (a service keeping nothing).

    Every kept answer is built again at the turn of the clock hour (its cursor's and its
    first day's hour, edge/cursors.py): a draw the hour would turn during starts after it,
    or its warm row would measure a tail being filled again."""
    draws = {"uniform": "0"} if cold_only else {"Zipf 1.0": "1.0", "uniform": "0"}
    rows = {}
    for name, exponent in draws.items():
        measured = functools.partial(wrk, f"http://127.0.0.1:{PORT}", token,
                                     script=LONG_TAIL_LUA, script_args=(str(paths), exponent),
                                     server=server)
        row = f"{label}: long tail ({LONG_TAIL:,} URLs), {name}"
        if not cold_only:
            # Each row a second of warm-up and its duration, two warmings, a change.
            past_the_hour(3 * (options["duration"] + 1) + 2 * WARM_SECONDS + 5)
            if not rows:
                rows[f"{row}, filling"] = measured(warm_up=True, **options)
            measured(**{**options, "duration": WARM_SECONDS})
        change_catalogue(database_url)
        rows[f"{row}, cold"] = measured(warm_up=True, **options)
        if not cold_only:
            measured(**{**options, "duration": WARM_SECONDS})
            rows[f"{row}, warm"] = measured(**options)
    return rows


def long_tail_paths(env: dict, token: str, folder: Path) -> tuple[Path, tuple[int, float]]:
    """The long tail's URLs (bench/longtail.py) with second pages (a cursor followed), in a
    file for bench/longtail.lua, drawn from the database as loaded now; and what its answers
    weigh there (`weighed`)."""
    paths = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "longtail.py"), env["AGENDA_DATABASE_URL"],
         "--count", str(LONG_TAIL - SECOND_PAGES)],
        env=env, check=True, capture_output=True, text=True).stdout.split()
    server = serve([str(BIN / "agenda"), "serve", "--port", str(PORT), "--workers", "1"],
                   env, PORT)
    try:
        firsts = [path for path in paths if path.startswith("/v1/events?")]
        for path in firsts:
            if len(paths) == LONG_TAIL:
                break
            cursor = json.loads(get(f"http://127.0.0.1:{PORT}{path}", token)[0]
                                )["meta"]["next_cursor"]
            if cursor:
                paths.append(f"{path}&cursor={urllib.parse.quote(cursor, safe='')}")
        weight = weighed(paths, token)
    finally:
        stop(server)
    # Second pages among the rest, not all at the unpopular end of a Zipf draw.
    random.Random(1).shuffle(paths)
    file = folder / "long-tail.txt"
    file.write_text("\n".join(paths) + "\n")
    return file, weight


# Long-tail answers asked for once each to weigh them (`weighed`).
WEIGHED = 400


def weighed(paths: list[str], token: str) -> tuple[int, float]:
    """The mean size (bytes) of `WEIGHED` of the long tail's answers, drawn at random, and
    the mean number of items of the list pages among them: at a million events a filter's
    list holds more of them than at 10,000 (a page is full where it was short), so each
    answer is heavier. The same URLs are not the same work at every size."""
    sizes, items = [], []
    for path in random.Random(2).sample(paths, min(WEIGHED, len(paths))):
        body = get(f"http://127.0.0.1:{PORT}{path}", token)[0]
        sizes.append(len(body))
        data = json.loads(body)["data"]
        if isinstance(data, list):
            items.append(len(data))
    return round(statistics.mean(sizes)), statistics.mean(items) if items else 0.0


# One event's title, changed and changed back: a new catalogue stamp each time.
TOGGLE_TITLE = text("""
UPDATE events SET title = CASE WHEN title LIKE '% (changed)' THEN left(title, -10)
                               ELSE title || ' (changed)' END
WHERE id = (SELECT id FROM events WHERE status = 'approved' ORDER BY id LIMIT 1)
""")


def change_catalogue(url: str, engine=None) -> None:
    """One change to the catalogue of the database at `url` (`TOGGLE_TITLE`): every kept
    answer goes stale."""
    own = engine is None
    engine = create_engine(url) if own else engine
    with engine.begin() as connection:
        connection.execute(TOGGLE_TITLE)
    if own:
        engine.dispose()


@contextlib.contextmanager
def changing(url: str, every: float = 1.0):
    """Inside the block, the catalogue changes every `every` seconds (as imports and edits
    do under traffic): every kept answer goes stale, and is built again once per worker."""
    engine = create_engine(url)
    done = threading.Event()

    def change():
        while not done.wait(every):
            change_catalogue(url, engine)

    thread = threading.Thread(target=change, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        engine.dispose()


def shared_limits(env: dict, token: str, redis_url: str, paths: Path, **options) -> dict:
    """The unfiltered cached row and the long tail with limits counted (and answers shared)
    in Redis, as several workers or hosts count them in production: a round trip to Redis
    a request. The answers kept there before (an hour each: a run before this one) are
    deleted first, so that the long tail's `filling` row starts from nothing kept."""
    forget_shared_answers(redis_url)
    server = serve([str(BIN / "agenda"), "serve", "--port", str(PORT), "--workers", "2"],
                   {**env, "AGENDA_RATELIMIT_STORAGE": redis_url}, PORT)
    try:
        return {"cached: no filter, limits in Redis": wrk(
            f"http://127.0.0.1:{PORT}/v1/events?limit=25", token, server=server,
            warm_up=True, **options),
                **long_tail("cached, limits in Redis", token, paths, server,
                            env["AGENDA_DATABASE_URL"], **options)}
    finally:
        stop(server)


def forget_shared_answers(redis_url: str) -> None:
    """Delete the answers and heads the service keeps in the Redis at `redis_url`
    (edge/cache.py `SharedEntries`, under `SHARED_PREFIX`)."""
    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(match=f"{SHARED_PREFIX}*", count=1000))
        for start in range(0, len(keys), 1000):
            client.delete(*keys[start:start + 1000])
    finally:
        client.close()


@contextlib.contextmanager
def floor_served(env: dict, body_size: int):
    """The framework floor, answering a body of `body_size` bytes, served inside the block
    (uvicorn with 2 workers, as the service): its server process."""
    server = serve([str(BIN / "uvicorn"), "bench.floor:app", "--port", str(FLOOR_PORT),
                    "--workers", "2", "--log-level", "warning"],
                   {**env, "AGENDA_FLOOR_BYTES": str(body_size), "PYTHONPATH": str(ROOT)},
                   FLOOR_PORT)
    try:
        yield server
    finally:
        stop(server)


def main() -> None:
    """Set up, measure every size, print the table after each and write it at the end."""
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--sizes", default="10000,100000,1000000")
    options.add_argument("--duration", type=int, default=10)
    options.add_argument("--connections", type=int, default=32)
    options.add_argument("--output", type=Path, default=OUTPUT,
                         help="the markdown file the final table is written to")
    options.add_argument("--redis", metavar="URL",
                         help="also measure the unfiltered cached row with limits counted in "
                              "this Redis (e.g. redis://127.0.0.1:6379/0)")
    options.add_argument("--keep", action="store_true",
                         help="a database of each size (agenda_bench_<size>), kept for the next "
                              "run and used again (demo-data adds only what is missing): loading "
                              "1M events takes over an hour on 2 cores")
    options.add_argument("--organiser", action=argparse.BooleanOptionalAction, default=True,
                         help="then run bench/organiser.py (the door, deliveries) and add its "
                              "tables (default) or not")
    args = options.parse_args()
    warn_of_autogroup()
    server = os.environ.get("AGENDA_BENCH_DATABASE_URL",
                            "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
    if not args.keep:
        url = database(server)
        env, token = prepared(url)
    measuring = {"duration": args.duration, "connections": args.connections}
    rows, weights = [], {}
    for size in [int(s) for s in args.sizes.split(",")]:
        if args.keep:
            url = database(server, f"agenda_bench_{size}", keep=True)
            env, token = prepared(url)
        started = time.time()
        agenda(env, "demo-data", "--events", str(size), "--seed", "1")
        print(f"# {size:,} events loaded in {time.time() - started:.0f} s", flush=True)
        maintain(url)
        with tempfile.TemporaryDirectory() as folder:
            paths, weights[size] = long_tail_paths(env, token, Path(folder))
            body_size, bottom, results = service(env, token, paths, cached=True, **measuring)
            if args.redis:
                results |= shared_limits(env, token, args.redis, paths, **measuring)
            results |= service(env, token, paths, cached=False, **measuring)[2]
        rows.append((size, body_size, bottom, results))
        print("\n" + table(rows) + "\n\n" + weights_table(weights), flush=True)
    doors = organiser(args.duration) if args.organiser else ""
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(f"{heading(url, args)}\n\n{table(rows)}\n\n{LEGEND}\n\n"
                           f"{weights_table(weights)}\n{doors}")
    print(f"# written to {args.output}", flush=True)


def weights_table(weights: dict[int, tuple[int, float]]) -> str:
    """What the long tail's answers weigh at each size (`weighed`)."""
    lines = [f"The long tail's answers ({WEIGHED} of them, asked once each):", "",
             "| events | mean answer B | items a list page |", "|---:|---:|---:|"]
    lines += [f"| {size:,} | {size_bytes:,} | {items:.1f} |"
              for size, (size_bytes, items) in weights.items()]
    return "\n".join(lines)


def organiser(duration: int) -> str:
    """The tables of bench/organiser.py (its own servers and database), run after the sizes."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "organiser.py"),
                           "--duration", str(duration)],
                          check=True, capture_output=True, text=True)
    tables = "\n".join(line for line in done.stdout.splitlines() if not line.startswith("#"))
    print(tables, flush=True)
    return f"\nPOST /scan and deliveries (`bench/organiser.py`):\n{tables}\n"


def heading(url: str, args) -> str:
    """The line naming when, what and where the run measured."""
    def run(*command: str) -> str:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    engine = create_engine(url)
    with engine.connect() as connection:
        postgres = connection.execute(text("SHOW server_version")).scalar().split()[0]
        # A setting that moves PostgreSQL's share of a miss (docs/deployment.md).
        buffers = connection.execute(text("SHOW shared_buffers")).scalar()
    engine.dispose()
    commit = run("git", "rev-parse", "--short", "HEAD") or "unknown (not a git checkout)"
    if run("git", "status", "--porcelain"):
        commit += " (with uncommitted changes)"
    return (f"{dt.datetime.now():%Y-%m-%d %H:%M}, commit {commit}, on a {run('nproc')}-core "
            f"{platform.machine()} machine (autogroup {autogroup()}, PostgreSQL {postgres}, "
            f"shared_buffers {buffers}, "
            f"wrk -t2 with {args.connections} connections for {args.duration} s a row on the "
            f"same cores, `agenda serve --workers 2`, {installed()}):")


def installed() -> str:
    """How the measured service is installed: the test extras change a worker's memory."""
    if importlib.util.find_spec("pytest") is None:
        return "installed as for production (`pip install .`)"
    # httpx imports its command line (rich, pygments) and redis opentelemetry when present.
    return "installed with the test extras (~6 MB more a worker than `pip install .`)"


def table(rows) -> str:
    """A markdown table of the run so far."""
    lines = [COLUMNS]
    notes = []
    for size, body_size, bottom, results in rows:
        for name, result in {f"floor ({body_size:,} B body)": bottom, **results}.items():
            hits = _figure(result.get("hits") and result["hits"] * 100, ".0f")
            if hits != "–":
                hits += " %"
                if result.get("revalidated"):
                    hits += f" + {result['revalidated'] * 100:.0f} %"
            lines.append(f"| {size:,} | {name} | {hits} | "
                         f"{result['rps']:.0f} | {result['p50']:.1f} | "
                         f"{result['p99']:.1f} | {_figure(result['cpu_us'], '.0f')} | "
                         f"{_figure(result.get('db_cpu_us'), '.0f')} | "
                         f"{result['rss_mb']:.0f} | {result['rps'] / bottom['rps']:.2f} | "
                         f"{_figure(_ratio(bottom['cpu_us'], result['cpu_us']), '.2f')} |")
            if result["socket_errors"]:
                notes.append(f"{size:,} events, {name}: socket errors {result['socket_errors']} "
                             f"(of {result['requests']:,} requests)")
    return "\n".join(lines + ([""] + [f"- {note}" for note in notes] if notes else []))


def _figure(value: float | None, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def _ratio(floor_value: float | None, value: float | None) -> float | None:
    return floor_value / value if floor_value and value else None


if __name__ == "__main__":
    main()

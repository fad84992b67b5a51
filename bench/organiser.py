"""Benchmark the organiser endpoints against the framework floor, in one run.

    python bench/organiser.py [--duration 10] [--connections 8] [--deliveries N] [--used-passes 3]
                               [--no-invite]

Needs PostgreSQL (AGENDA_BENCH_DATABASE_URL, default the local server; a database
`agenda_bench_organiser` is created and dropped at the end) and wrk. It sets up an
organisation with a ticket shop, a door token (`scan`) and a shop token (`tickets`),
and imports tonight's event of that organisation (today 00:00-23:59 in Amsterdam, so
the doors are open at any hour; sold by an external shop). Then it serves the service
with 2 workers and measures:

- delivery: `--deliveries` POSTs of 500 external tickets each (fresh codes, one buyer
  address per ticket, none of them a member), each timed end to end; median and max
  seconds. The time includes the mails the request sends within its budget (~0.8 s;
  no SMTP url is set, so they go to the log), unless `--no-invite`.
- scan: POST /scan by 8 concurrent doors (wrk -t2, bench/scan.lua: a different
  delivered code every request). The first pass scans fresh tickets (`ok`); if it
  runs out of them the row says so. The second pass scans the tickets the first
  one used (`ok: false, status: used`, also HTTP 200), `--used-passes` times (default
  3), and the row gives the pass with the highest p99: a stall that came in one pass
  of two (bench/README.md, "The machine") shows there. Then those tickets are made
  valid again and the first pass is repeated with `AGENDA_DOOR_LANE=false` (every
  scan through Connexion and Flask, edge/door_lane.py off). p50, p99 and requests/s.

The floor (bench/floor.py, a bare Connexion POST route parsing the JSON body and
answering a prebuilt body of the service's answer size) is served the same way and
measured with the same wrk settings and script, and with the same 500-item body
for the delivery; every figure is also given as a ratio to the floor's. Numbers
are only comparable within one run: wrk shares the machine's cores with the servers.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from zoneinfo import ZoneInfo

from run import BIN, ROOT, agenda, database, serve, stop, warn_of_autogroup, wrk
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

DATABASE = "agenda_bench_organiser"
PORT, FLOOR_PORT = 18183, 18184
ITEMS = 500
# Fresh tickets are delivered for the first pass to scan at this rate for its whole duration
# (2,000 ran out on a machine that scanned 2,500 a second).
SCANS_PER_SECOND = 4_000
SCRIPT = Path(__file__).with_name("scan.lua")
EVENT = "bench-tonight"


def tonight(env: dict, organisation_id: str) -> None:
    """Import a venue and the organisation's event on all of today, sold by an external shop."""
    today = dt.datetime.now(ZoneInfo("Europe/Amsterdam")).date()
    records = [
        {"kind": "venue", "id": "bench-hall", "name": "Bench Hall", "city": "Utrecht",
         "country": "NL", "lat": 52.09, "lng": 5.12},
        {"kind": "event", "id": EVENT, "title": "Bench Night", "date": today.isoformat(),
         "start": "00:00", "end": "23:59", "venue_id": "bench-hall",
         "organisation_id": organisation_id, "external_ticketing": True},
    ]
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl") as file:
        file.write("".join(json.dumps(record) + "\n" for record in records))
        file.flush()
        agenda(env, "import", file.name, "--source", "bench")


def token(env: dict, organisation_id: str, scope: str) -> str:
    """A token of the organisation with one scope and no practical daily limit."""
    return agenda(env, "token", "create", "--organisation", organisation_id, "--scopes", scope,
                  "--name", f"bench {scope}", "--per-day", "1000000000").strip().splitlines()[-1]


def delivery_body(round_: int, invite: bool) -> bytes:
    """A delivery of 500 fresh tickets, each bought by another address."""
    items = [{"code": f"bench-{round_:03d}-{n:03d}", "email": f"buyer{round_}.{n}@bench.example",
              "name": f"Buyer {round_}.{n}", "type": "Regular", "price": 25.0}
             for n in range(ITEMS)]
    return json.dumps({"source": "other", "invite": invite, "items": items}).encode()


def post(url: str, token: str | None, body: bytes) -> tuple[float, bytes]:
    """Seconds of one POST end to end, and the answer."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    started = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(url, body, headers)) as response:
        answer = response.read()
    return time.perf_counter() - started, answer


def deliver(base: str, shop: str, bodies: list[bytes]) -> tuple[list[float], dict, int]:
    """Deliver every body; the seconds of each, the mails processed, one answer's size."""
    seconds, mails = [], {"mailed": 0, "left": 0, "budgetOut": 0}
    for body in bodies:
        took, answer = post(f"{base}/events/{EVENT}/external-tickets", shop, body)
        delivery = json.loads(answer)["data"]
        if delivery["totals"]["added"] != ITEMS:
            raise RuntimeError(f"a delivery added {delivery['totals']} of {ITEMS}")
        seconds.append(took)
        for key in mails:
            mails[key] += delivery["processed"][key]
    return seconds, mails, len(answer)


def used_codes(url: str) -> list[str]:
    """The codes of the tickets scanned, once the scans still in flight have landed."""
    engine = create_engine(url)
    codes: list[str] = []
    # wrk stops without waiting for its last requests; the server still completes them.
    while True:
        with engine.connect() as connection:
            now = list(connection.scalars(text(
                "SELECT code FROM tickets WHERE status = 'used' ORDER BY code")))
        if now == codes:
            break
        codes = now
        time.sleep(0.5)
    engine.dispose()
    return codes


def renew(url: str, *, keep: str) -> None:
    """Every used ticket valid again, but the one scanned by hand (`keep`); the table
    vacuumed, so that the next pass does not wade through the dead rows of the last."""
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text("UPDATE tickets SET status = 'valid', scanned_at = NULL "
                                "WHERE status = 'used' AND code <> :keep"), {"keep": keep})
        connection.execute(text("VACUUM ANALYZE tickets"))
    engine.dispose()


def drop(url: str) -> None:
    """Drop the benchmark's database."""
    server = make_url(url)
    admin = create_engine(server.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{server.database}" WITH (FORCE)'))
    admin.dispose()


def main() -> None:
    """Set up, measure and report; the database is dropped whatever happens."""
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--duration", type=int, default=10)
    options.add_argument("--connections", type=int, default=8)
    options.add_argument("--deliveries", type=int, default=None,
                         help="deliveries of 500 timed; their tickets are the ones scanned "
                              f"(default: enough for {SCANS_PER_SECOND:,} scans a second)")
    options.add_argument("--used-passes", type=int, default=3,
                         help="passes over the used tickets; the row gives the one with the "
                              "highest p99 (default 3)")
    options.add_argument("--invite", action=argparse.BooleanOptionalAction, default=True,
                         help="send the waiting mails (default) or not")
    args = options.parse_args()
    if args.used_passes < 1:
        options.error("--used-passes must be at least 1")
    warn_of_autogroup()
    if args.deliveries is None:
        args.deliveries = max(20, math.ceil(args.duration * SCANS_PER_SECOND / ITEMS))
    url = database(os.environ.get("AGENDA_BENCH_DATABASE_URL",
                                  "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"),
                   DATABASE)
    env = {key: value for key, value in os.environ.items() if key != "AGENDA_SMTP_URL"}
    env |= {"AGENDA_DATABASE_URL": url, "AGENDA_SECRET_KEY": "bench",
            "AGENDA_SITE_URL": f"http://127.0.0.1:{PORT}",
            # The limiter still runs and is measured; the limits themselves would stop wrk.
            "AGENDA_PER_MINUTE": "1000000000"}
    try:
        with tempfile.TemporaryDirectory() as folder:
            measure(args, url, env, Path(folder))
    finally:
        drop(url)


def measure(args, url: str, env: dict, folder: Path) -> None:
    """Set up, measure the service, then the floor; print the table."""
    agenda(env, "db", "upgrade")
    organisation = agenda(env, "organisation", "create", "Bench Organiser", "--ticket-shop",
                          "https://shop.bench.example").strip().splitlines()[-1]
    door, shop = token(env, organisation, "scan"), token(env, organisation, "tickets")
    tonight(env, organisation)
    bodies = [delivery_body(round_, args.invite) for round_ in range(args.deliveries)]
    codes = [item["code"] for body in bodies for item in json.loads(body)["items"]]
    fresh, used = folder / "fresh.txt", folder / "used.txt"
    # The last code is scanned once by hand, for the size of an accepted scan's answer.
    fresh.write_text("\n".join(codes[:-1]) + "\n")
    base = f"http://127.0.0.1:{PORT}/v1"
    scanning = {"duration": args.duration, "connections": args.connections, "script": SCRIPT}
    server = serve([str(BIN / "agenda"), "serve", "--port", str(PORT), "--workers", "2"],
                   env, PORT)
    try:
        seconds, mails, delivery_size = deliver(base, shop, bodies)
        print(f"# {len(codes):,} tickets delivered", flush=True)
        _took, answer = post(f"{base}/scan", door, json.dumps({"code": codes[-1]}).encode())
        if json.loads(answer)["data"]["status"] != "ok":
            raise RuntimeError(f"the door refused a delivered ticket: {answer!r}")
        first = wrk(f"{base}/scan", door, script_args=(str(fresh), "2"), **scanning)
        scanned = used_codes(url)
        # Each code goes out once until the list runs out; after that the two wrk threads,
        # one on odd and one on even lines, wrap around at their own pace.
        if first["requests"] <= len(codes) - 1 and len(scanned) - 1 < first["requests"]:
            raise RuntimeError(f"the door refused fresh tickets: {len(scanned) - 1} accepted")
        used.write_text("\n".join(code for code in scanned if code != codes[-1]) + "\n")
        second = max((wrk(f"{base}/scan", door, script_args=(str(used), "2"), **scanning)
                      for _ in range(args.used_passes)), key=lambda result: result["p99"])
        if len(used_codes(url)) != len(scanned):
            raise RuntimeError("the second pass accepted tickets that were used already")
    finally:
        stop(server)
    # The first pass again, the full way (through Connexion and Flask) on the same tickets.
    renew(url, keep=codes[-1])
    server = serve([str(BIN / "agenda"), "serve", "--port", str(PORT), "--workers", "2"],
                   {**env, "AGENDA_DOOR_LANE": "false"}, PORT)
    try:
        full_way = wrk(f"{base}/scan", door, script_args=(str(fresh), "2"), **scanning)
    finally:
        stop(server)
    floor_env = {**env, "PYTHONPATH": str(ROOT), "AGENDA_FLOOR_POST_BYTES": str(len(answer))}
    floor_command = [str(BIN / "uvicorn"), "bench.floor:app", "--port", str(FLOOR_PORT),
                     "--workers", "2", "--log-level", "warning"]
    floor = serve(floor_command, floor_env, FLOOR_PORT)
    try:
        bottom = wrk(f"http://127.0.0.1:{FLOOR_PORT}/v1/floor", None,
                     script_args=(str(fresh), "2"), **scanning)
    finally:
        stop(floor)
    floor = serve(floor_command, {**floor_env, "AGENDA_FLOOR_POST_BYTES": str(delivery_size)},
                  FLOOR_PORT)
    try:
        floor_seconds = [post(f"http://127.0.0.1:{FLOOR_PORT}/v1/floor", None, body)[0]
                         for body in bodies]
    finally:
        stop(floor)
    report(args, scans={"floor": bottom, "fresh": first, "used": second, "full way": full_way},
           fresh_tickets=len(codes) - 1, first_accepted=len(scanned) - 1,
           answer_size=len(answer), deliveries=(seconds, floor_seconds),
           mails=mails, delivery_size=delivery_size)


def report(args, *, scans: dict, fresh_tickets: int, first_accepted: int, answer_size: int,
           deliveries: tuple[list[float], list[float]], mails: dict, delivery_size: int) -> None:
    """The markdown tables and a one-line summary."""
    bottom, first, second = scans["floor"], scans["fresh"], scans["used"]
    full_way = scans["full way"]
    if first_accepted >= first["requests"]:
        fresh = "fresh tickets (`ok`)"
    else:
        fresh = (f"fresh tickets until they ran out ({first_accepted:,} `ok` "
                 f"of {first['requests']:,})")
    print(f"\n| POST /scan, {args.connections} doors, {args.duration} s | requests | req/s | "
          f"p50 ms | p99 ms | × floor req/s | × floor p50 | × floor p99 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    rows = [(f"floor ({answer_size} B answer)", bottom), (fresh, first),
            (f"used tickets (`ok: false`, `used`), the worst of {args.used_passes} passes",
             second),
            ("fresh tickets, the full way (`AGENDA_DOOR_LANE=false`)", full_way)]
    for name, result in rows:
        print(f"| {name} | {result['requests']:,} | {result['rps']:.0f} | {result['p50']:.1f} | "
              f"{result['p99']:.1f} | {result['rps'] / bottom['rps']:.2f} | "
              f"{result['p50'] / bottom['p50']:.1f} | {result['p99'] / bottom['p99']:.1f} |")
    seconds, floor_seconds = deliveries
    print(f"\n| POST of 500 items, n = {len(seconds)} | median s | max s | × floor median | "
          f"× floor max |")
    print("|---|---:|---:|---:|---:|")
    for name, times in ((f"floor, same body ({delivery_size:,} B answer)", floor_seconds),
                        ("/events/{id}/external-tickets", seconds)):
        print(f"| {name} | {statistics.median(times):.3f} | {max(times):.3f} | "
              f"{statistics.median(times) / statistics.median(floor_seconds):.1f} | "
              f"{max(times) / max(floor_seconds):.1f} |")
    print(f"\nDelivery mails (invite {'on' if args.invite else 'off'}): {mails['mailed']:,} sent "
          f"within the requests' budgets, {mails['left']:,} left to the worker, "
          f"{mails['budgetOut']} of {len(seconds)} requests ran out of budget.")
    print(f"Summary: POST /scan p50 {first['p50']:.1f} ms "
          f"({first['p50'] / bottom['p50']:.1f}× floor), p99 {first['p99']:.1f} ms "
          f"({first['p99'] / bottom['p99']:.1f}× floor), {first['rps']:.0f} req/s "
          f"({first['rps'] / bottom['rps']:.2f}× floor); a 500-item delivery "
          f"{statistics.median(seconds):.2f} s median, {max(seconds):.2f} s max "
          f"({statistics.median(seconds) / statistics.median(floor_seconds):.0f}× floor).")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

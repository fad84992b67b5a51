"""The instructions a public answer's handler takes, counted by valgrind's callgrind.

    python bench/instructions.py DATABASE_URL URLS_FILE [--rounds 5] [--tree PATH]
    python bench/instructions.py DATABASE_URL URLS_FILE --server [--connections 8] ...

A count the machine's other work does not move (its clock and CPU time drift by a fifth
or more within minutes on a shared machine), to compare two trees of the same path:
run it once with `--tree` pointing at a checkout of the other (`git worktree add`).

It builds the service (the response cache off) on the database, reads each URL's handler
and arguments as the response cache does, and calls the handlers before the framework, as
a miss is built (`edge.context.lane`): once over the URLs unmeasured, then `--rounds`
times with callgrind's instrumentation on. It prints the instructions per handler call.
Only this process's: not PostgreSQL's, not the event loop's (HTTP, admission, the answer
sent), nor the handing over to a thread and back. Under valgrind the processor's SHA
instructions are not used: a change to hashing is timed, not counted.

With `--server`, a whole worker's instead: uvicorn serving the tree as `agenda serve`
runs it (one worker, the response cache off: every answer built), under callgrind, asked
for each URL once unmeasured, then `--rounds` times over `--connections` connections at
once, counted; the instructions a request, of every thread of the worker (the event loop,
the catalogue threads, the service's own). The database is prepared as bench/run.py
prepares its own (migrated, its Bench organisation and a read token).
"""

from __future__ import annotations

import argparse
import http.client
import os
import queue
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUEST_ID = "00000000-0000-4000-8000-000000000000"


def handlers(database_url: str, urls: list[str]):
    """The service, and each URL's (handler, arguments) that the response cache builds."""
    os.environ.update(AGENDA_DATABASE_URL=database_url, AGENDA_SECRET_KEY="bench",
                      AGENDA_SITE_URL="http://127.0.0.1:8000", AGENDA_RESPONSE_CACHE="false")
    import logging

    from agenda.app import create_app

    logging.disable(logging.CRITICAL)
    app = create_app()
    app.test_client().get("/v1/terms")  # the layers (the response cache among them) made
    service = app.app.extensions["agenda"]
    calls = []
    for url in urls:
        path, _, query = url.partition("?")
        operation = service.routes.find("GET", path)
        handler = service.cache.handlers.get(operation)
        if handler is not None:
            calls.append((handler, operation.arguments.read(path, query.encode())))
    return service, calls


def child(database_url: str, urls_file: Path, rounds: int) -> None:
    """Under valgrind: the calls once, READY, then (told to go) `rounds` times, DONE."""
    from edge import context
    from edge.state import RequestState

    service, calls = handlers(database_url, urls_file.read_text().split())

    def run(times: int) -> None:
        for _ in range(times):
            for handler, arguments in calls:
                with context.lane(service, RequestState(request_id=REQUEST_ID)):
                    handler(**arguments)

    run(1)
    print(f"READY {len(calls)}", flush=True)
    sys.stdin.readline()
    run(rounds)
    print("DONE", flush=True)
    sys.stdin.readline()


def instrument(pid: int, state: str) -> None:
    """Callgrind's instrumentation of the process `pid` switched `state` ("on", "off")."""
    subprocess.run(["callgrind_control", "-i", state, str(pid)], check=True,
                   capture_output=True)


def _counted(file: Path) -> int:
    """The instructions an output file of callgrind holds (its `totals:`)."""
    return sum(int(line.split()[1]) for line in file.read_text().splitlines()
               if line.startswith("totals:"))


def served(database_url: str, urls: list[str], *, rounds: int, tree: Path,
           connections: int, out: Path) -> None:
    """Serve `tree` under callgrind and ask for `urls` (see the module's text)."""
    import run  # bench/run.py: the database migrated and a read token, as its runs have

    env, token = run.prepared(database_url)
    env = {**env, "AGENDA_RESPONSE_CACHE": "false", "PYTHONPATH": str(tree)}
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env["AGENDA_SITE_URL"] = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
         sys.executable, "-OO", "-P", "-m", "uvicorn", "agenda.asgi:app", "--app-dir",
         str(tree), "--port", str(port), "--workers", "1", "--log-level", "warning",
         "--no-access-log", "--http", "agenda.protocol:Protocol"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        _started(port, server)
        ask(port, token, urls, connections)
        instrument(server.pid, "on")
        ask(port, token, urls * rounds, connections)
        instrument(server.pid, "off")
    finally:
        server.terminate()
        server.wait(timeout=120)


def _started(port: int, server: subprocess.Popen) -> None:
    """Once the server under callgrind answers (it starts in a minute or so)."""
    for _ in range(600):
        if server.poll() is not None:
            raise SystemExit("the counted server stopped as it started")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.5)
    raise SystemExit("the counted server did not start")


def ask(port: int, token: str, urls: list[str], connections: int) -> None:
    """GET each of `urls` over `connections` keep-alive connections at once; every answer
    must be a 200."""
    waiting: queue.SimpleQueue = queue.SimpleQueue()
    for url in urls:
        waiting.put(url)
    failures: list[str] = []

    def client() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        while True:
            try:
                url = waiting.get_nowait()
            except queue.Empty:
                return
            connection.request("GET", url, headers={"Authorization": f"Bearer {token}"})
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                failures.append(f"{response.status} {url}")

    clients = [threading.Thread(target=client) for _ in range(connections)]
    for started in clients:
        started.start()
    for started in clients:
        started.join()
    if failures:
        raise SystemExit(f"not answered 200: {failures[:5]}")


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("database_url")
    options.add_argument("urls", type=Path, help="a file of paths, one a line")
    options.add_argument("--rounds", type=int, default=5)
    options.add_argument("--tree", type=Path, default=ROOT,
                         help="the checkout whose code is counted (default: this one)")
    options.add_argument("--server", action="store_true",
                         help="count a whole worker serving the URLs (see the text)")
    options.add_argument("--connections", type=int, default=8,
                         help="with --server: the connections asking at once")
    options.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = options.parse_args()
    if args.child:
        child(args.database_url, args.urls, args.rounds)
        return
    if args.server:
        urls = args.urls.read_text().split()
        with tempfile.TemporaryDirectory() as folder:
            served(args.database_url, urls, rounds=args.rounds, tree=args.tree.resolve(),
                   connections=args.connections, out=Path(folder) / "callgrind.out")
            total = sum(_counted(file) for file in Path(folder).glob("callgrind.out*"))
        requests = len(urls) * args.rounds
        print(f"{args.tree}: {total // requests:,} instructions a request of the whole worker "
              f"({requests:,} requests of {len(urls)} URLs, {args.connections} connections)")
        return
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "callgrind.out"
        counted = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no",
             f"--callgrind-out-file={out}", sys.executable, "-P", __file__,
             args.database_url, str(args.urls.resolve()), "--rounds", str(args.rounds),
             "--child"],
            env={**os.environ, "PYTHONPATH": str(args.tree.resolve())},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        ready = counted.stdout.readline().split()
        if not ready or ready[0] != "READY":
            raise SystemExit(f"the counted process did not start: {ready}")
        instrument(counted.pid, "on")
        counted.stdin.write("go\n")
        counted.stdin.flush()
        if counted.stdout.readline().strip() != "DONE":
            raise SystemExit("the counted process stopped before its rounds ended")
        instrument(counted.pid, "off")
        counted.stdin.write("end\n")
        counted.stdin.close()
        counted.wait()
        total = sum(_counted(file) for file in Path(folder).glob("callgrind.out*"))
    calls = int(ready[1]) * args.rounds
    print(f"{args.tree}: {total // calls:,} instructions a handler call "
          f"({calls:,} calls of {ready[1]} URLs)")


if __name__ == "__main__":
    main()

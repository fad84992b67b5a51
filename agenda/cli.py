"""The `agenda` command: database, organisations, tokens, data in, serving and the demo."""

from __future__ import annotations

import os
import secrets
import stat
import sys
import tempfile
import time
from pathlib import Path

import click

from adapters import mail
from agenda.demo import catalogue as demo_data
from agenda.demo import festivals as demo_festivals
from agenda.demo import people as demo_people
from agenda.settings import load
from edge import openapi
from models import (changes, deliveries, importing, members, migrate, organisations, outbox,
                    tokens)
from models.db import make_engine, make_sessionmaker, now
from models.errors import DomainError
from models.unit_of_work import transaction


class _Database:
    """The configured database for one command; closed when the command ends."""

    def __enter__(self):
        self.settings = load()
        self.engine = make_engine(self.settings.database_url)
        self.sessions = make_sessionmaker(self.engine)
        return self

    def __exit__(self, *_exc):
        self.engine.dispose()


def _fail(error: DomainError):
    params = error.params
    detail = "; ".join(f"{p['name']}: {p['message']}" for p in params)
    raise click.ClickException(f"{error.message} {detail}".strip())


@click.group()
def main():
    """The Event Agenda Service."""


@main.group()
def db():
    """The database."""


@db.command("upgrade")
def db_upgrade():
    """Apply every pending migration."""
    with _Database() as database:
        migrate.upgrade(database.engine)
        click.echo(f"database is up to date: {database.engine.url.render_as_string()}")


@main.group()
def organisation():
    """Organisations."""


@organisation.command("create")
@click.argument("name")
@click.option("--ticket-shop", "ticket_shop", help="URL of the organisation's own ticket shop.")
@click.option("--suspended", is_flag=True, help="Create it suspended (refused everywhere).")
def organisation_create(name, ticket_shop, suspended):
    """Create an organisation; prints its id."""
    try:
        with _Database() as database, transaction(database.sessions) as session:
            created = organisations.create_organisation(
                session, name=name, ticket_shop_url=ticket_shop, suspended=suspended)
            click.echo(created.id)
    except DomainError as error:
        _fail(error)


@main.group()
def token():
    """Live API tokens."""


@token.command("create")
@click.option("--organisation", "organisation_key", required=True, help="Id or name.")
@click.option("--scopes", required=True, help="Comma-separated: read,scan,attendance,tickets.")
@click.option("--name", required=True)
@click.option("--per-day", type=click.IntRange(min=1), help="Daily quota (default 10,000).")
def token_create(organisation_key, scopes, name, per_day):
    """Create a token; the token alone is the last line of the output."""
    try:
        with _Database() as database, transaction(database.sessions) as session:
            owner = organisations.get_organisation(session, organisation_key)
            record, secret = tokens.create_token(
                session, organisation=owner, name=name,
                scopes=[s.strip() for s in scopes.split(",") if s.strip()], per_day=per_day)
            click.echo(f"token {record.prefix}... for {owner.name}, scopes "
                       f"{' '.join(record.scope_list)} (shown once):")
            click.echo(secret)
    except DomainError as error:
        _fail(error)


@token.command("revoke")
@click.argument("prefix")
def token_revoke(prefix):
    """Revoke the token with this visible prefix."""
    try:
        with _Database() as database, transaction(database.sessions) as session:
            record = tokens.revoke_token(session, prefix)
            click.echo(f"revoked {record.prefix}")
    except DomainError as error:
        _fail(error)


@token.command("set-limit")
@click.argument("prefix")
@click.argument("per_day", type=click.IntRange(min=1))
def token_set_limit(prefix, per_day):
    """Set the daily quota of the token with this visible prefix."""
    try:
        with _Database() as database, transaction(database.sessions) as session:
            record = tokens.set_daily_limit(session, prefix, per_day)
            click.echo(f"{record.prefix} may make {record.per_day} requests a day")
    except DomainError as error:
        _fail(error)


# Files and demo sets from this size on show a progress bar (on stderr).
PROGRESS_FROM = 1000


class _NoProgress:
    """Stands in for a progress bar on small jobs."""

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        return None

    def update(self, _steps):
        """Nothing to show."""


def _progress(length: int, label: str):
    """A progress bar on stderr for `length` steps; none for small jobs."""
    if length < PROGRESS_FROM:
        return _NoProgress()
    return click.progressbar(length=length, label=label, file=sys.stderr)


@main.command("import")
@click.argument("file", type=click.File("r", encoding="utf-8"))
@click.option("--source", help="Origin recorded on records that do not name their own.")
def import_command(file, source):
    """Import catalogue records from a JSON Lines FILE ("-": stdin); all or nothing.

    One record a line (docs/import.md): organisations, venues, artists, events,
    releases, upserted by id. A file with any bad line changes nothing; every
    bad line is reported with its number. The database must be up to date
    (`agenda db upgrade`).
    """
    lines = file.readlines()
    try:
        with _Database() as database, transaction(database.sessions) as session:
            with _progress(len(lines), "checking") as bar:
                checked = importing.check(session, lines=lines, source=source,
                                          progress=bar.update)
            with _progress(len(checked), "writing ") as bar:
                result = importing.write(session, checked, progress=bar.update)
    except DomainError as error:
        _fail_lines(error)
    click.echo(f"imported {file.name}:")
    click.echo(result.summary())


def _fail_lines(error: DomainError, shown: int = 50):
    """A bad file: every bad line, one per output line (the first `shown` of them)."""
    params = error.params
    told = [f"{p['name']}: {p['message']}" for p in params[:shown]]
    if len(params) > shown:
        told.append(f"... and {len(params) - shown} more bad lines")
    raise click.ClickException("\n".join([error.message, *told]))


@main.command("demo-data")
@click.option("--events", default=2000, show_default=True,
              type=click.IntRange(demo_data.MIN_EVENTS, demo_data.MAX_EVENTS),
              help="Number of events to build.")
@click.option("--seed", default=1, show_default=True, type=click.IntRange(0, demo_data.MAX_SEED),
              help="The same seed builds the same agenda.")
def demo_data_command(events, seed):
    """Migrate, then add a realistic, deterministic NL/BE agenda of demo data.

    Ids come from the seed: running it again with the same seed adds only what
    is missing, never a record twice. Dates lie around today.
    """
    with _Database() as database:
        migrate.upgrade(database.engine)
        with transaction(database.sessions) as session, _progress(events, "demo data") as bar:
            added = demo_data.add_demo_data(session, events=events, seed=seed,
                                            progress=bar.update)
    click.echo(added.summary())


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8080, show_default=True, type=int)
@click.option("--workers", type=click.IntRange(min=1),
              help="Worker processes [default: one per CPU core].")
def serve(host, port, workers):
    """Serve the site (production mode: no response validation, compact JSON)."""
    _serve(host, port, workers or os.cpu_count() or 1)


def _serve(host: str, port: int, workers: int) -> None:
    if not os.environ.get("AGENDA_SECRET_KEY"):
        # Every worker must sign and check cursors with the same key.
        os.environ["AGENDA_SECRET_KEY"] = secrets.token_urlsafe(32)
        click.echo("AGENDA_SECRET_KEY is not set: using a key for this run only.", err=True)
    os.environ.setdefault("AGENDA_SITE_URL", f"http://{host}:{port}")
    # The document is checked here, once, for every worker.
    document = openapi.load_document(load().base_url)
    os.environ[openapi.CHECKED_VARIABLE] = openapi.digest_of(document).hex()
    storage = os.environ.get("AGENDA_RATELIMIT_STORAGE", "memory://")
    if workers > 1 and storage.startswith("memory://"):
        click.echo(f"{workers} workers count requests each on their own (memory://): the "
                   "rate limits are only exact with AGENDA_RATELIMIT_STORAGE=redis://...",
                   err=True)
        _host_cache()
    # One malloc arena a process (glibc; other C libraries ignore it; an operator's own value
    # is kept). By default glibc gives each thread that allocates beside another its own
    # arena; a worker's catalogue threads then hold ~12 MB each, of which ~5 is in use: the
    # rest is freed memory split between arenas, which neither can hand to the other. The
    # GIL lets one thread at a time run Python, so the one arena is rarely waited for. At
    # 1M events with the limits in Redis, after the long tail (bench/RESULTS.md): the
    # largest worker 156 MB -> 147, its CPU a request no higher.
    os.environ.setdefault("MALLOC_ARENA_MAX", "1")
    # This process becomes uvicorn's own command. Its workers start (multiprocessing's spawn)
    # by importing the main module again: as `python -m uvicorn` that is nothing, where this
    # module would bring alembic and the demo data into every worker (~6 MB each). -OO
    # (passed on to the workers) keeps every module's docstrings out of memory (~4 MB a
    # worker): the MCP tools' descriptions are not docstrings (mcp_server/tools.py), and the
    # libraries' asserts guard against their callers' programming errors only. -P: the
    # current directory is not put on the path, where `-m` would put it (a stray uvicorn.py
    # or agenda/ there would be imported instead of the installed ones); nor by uvicorn,
    # which puts its `--app-dir` (by default the current directory) first: the directory
    # this command's own package came from.
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [
        sys.executable, "-OO", "-P", "-m", "uvicorn", "agenda.asgi:app",
        "--app-dir", str(Path(__file__).resolve().parent.parent), "--host", host,
        "--port", str(port), "--workers", str(workers), "--log-level", "info",
        "--no-access-log", "--no-proxy-headers",
        # uvicorn's httptools protocol, each answer's head and body in one write.
        "--http", "agenda.protocol:Protocol",
        # A worker starts in seconds, slower on a busy machine; uvicorn's default of 5 s
        # kills and restarts workers that are merely slow.
        "--timeout-worker-healthcheck", "60"])


# Where the workers' file of answers goes first: a file system in memory (Linux's), so that
# writing it costs no disk; else the temporary folder.
MEMORY_FOLDERS = ("/dev/shm",)
# A server's file in that folder, by its process id (uvicorn's master, as this process
# becomes).
HOST_CACHE_FILE = "answers-{pid}.sqlite3"


def _host_cache() -> None:
    """The file the workers share public answers in (edge/cache.py `HostEntries`), started
    empty: the operator's `AGENDA_HOST_CACHE_PATH` (empty: none), else this server's own, in
    a folder only this user may write (another user's answers would be served), where the
    files of servers no longer running are removed (in memory, each held its bound)."""
    path = os.environ.get("AGENDA_HOST_CACHE_PATH")
    if path is None:
        memory = [Path(folder) for folder in MEMORY_FOLDERS
                  if os.path.isdir(folder) and os.access(folder, os.W_OK)]
        folder = (memory or [Path(tempfile.gettempdir())])[0] / f"agenda-{os.getuid()}"
        folder.mkdir(mode=0o700, exist_ok=True)
        owned = folder.lstat()  # a link is not this user's folder
        if (not stat.S_ISDIR(owned.st_mode) or owned.st_uid != os.getuid()
                or owned.st_mode & 0o022):
            click.echo(f"{folder} is not this user's alone: the workers keep answers each on "
                       "their own", err=True)
            return
        for left in folder.glob(HOST_CACHE_FILE.format(pid="*") + "*"):
            pid = left.name.split("-")[1].split(".")[0]
            if pid.isdigit() and not _running(int(pid)):
                left.unlink(missing_ok=True)
        path = os.environ["AGENDA_HOST_CACHE_PATH"] = str(
            folder / HOST_CACHE_FILE.format(pid=os.getpid()))
    if path:
        for suffix in ("", "-wal", "-shm"):
            Path(path + suffix).unlink(missing_ok=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        pass
    return True


DEMO_SCOPES = ("read", "scan", "attendance", "tickets")
# The agenda `agenda demo` loads into an empty database.
DEMO_EVENTS, DEMO_SEED = 2000, 1


def _demo_tokens(session, owner) -> dict[str, str]:
    """A new token per scope for the demo organisation."""
    return {scope: tokens.create_token(session, organisation=owner, name=f"demo {scope}",
                                       scopes=[scope])[1]
            for scope in DEMO_SCOPES}


def _demo_member(session, owner) -> tuple[str, str] | None:
    """(email, a new password) of the demo organisation's owner, who signs in to the pages."""
    person = demo_people.demo_member(session, organisation_id=owner.id)
    if person is None:
        return None
    password = secrets.token_urlsafe(12)
    members.set_password(session, person=person, password=password)
    return person.email, password


def _organiser_examples(base: str, minted: dict[str, str],
                        shown: demo_people.Showcase) -> list[str]:
    """Commands that try the organiser endpoints on the demo organisation's own events."""
    def curl(scope: str) -> str:
        return f"curl -s -H 'Authorization: Bearer {minted[scope]}'"

    lines = []
    if shown.coming:
        lines.append(f"{curl('attendance')} {base}/events/{shown.coming}/attendance")
    if shown.ticket:
        lines.append(f"{curl('scan')} -H 'Content-Type: application/json' "
                     f"-d '{{\"code\": \"{shown.ticket}\"}}' {base}/scan")
    if shown.external:
        lines.append(f"{curl('tickets')} {base}/events/{shown.external}/external-tickets")
        lines.append(f"{curl('attendance')} {base}/events/{shown.external}/external-sales")
    return lines


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8080, show_default=True, type=int)
def demo(host, port):
    """Migrate, load demo data once, create fresh tokens per scope, print, serve.

    A demo agenda (2,000 events of seed 1, as `agenda demo-data` builds it) is
    loaded on the first start, when the database has no events; a start on a
    later day adds that day's events of the demo organisation, with tickets to
    scan. Tokens are shown only when created, so every run mints a new set to print.
    """
    os.environ.setdefault("AGENDA_SITE_URL", f"http://{host}:{port}")
    with _Database() as database:
        migrate.upgrade(database.engine)
        with transaction(database.sessions) as session:
            if not demo_data.has_events(session):
                with _progress(DEMO_EVENTS, "demo data") as bar:
                    added = demo_data.add_demo_data(session, events=DEMO_EVENTS, seed=DEMO_SEED,
                                                    progress=bar.update)
                click.echo(added.summary())
            else:
                added = demo_data.add_tonight(session, seed=DEMO_SEED)
                if sum(added.added.values()):
                    click.echo(added.summary())
            owner = demo_people.demo_organisation(session)
            minted = _demo_tokens(session, owner)
            member = _demo_member(session, owner)
            shown = demo_people.showcase(session, organisation_id=owner.id, now=now())
            festival, profile = demo_festivals.showcase(
                session, prefix=demo_data.prefix_of(DEMO_SEED))
    settings = database.settings
    base = f"{settings.site_url}/v1"
    click.echo(f"\nEvent Agenda Service demo on {settings.database_url}")
    click.echo(f"Organisation: {owner.name}. New tokens, one per scope (shown once):")
    for scope, secret in minted.items():
        click.echo(f"  {scope:<10} {secret}")
    click.echo("\nTry:")
    click.echo(f"  curl -s {base}/terms")
    click.echo(f"  curl -s -H 'Authorization: Bearer {minted['read']}' {base}/me")
    click.echo(f"  curl -s {base}/openapi.json | head -c 300")
    read = f"curl -s -H 'Authorization: Bearer {minted['read']}'"
    if festival:
        click.echo(f"  {read} {base}/events/{festival}/token-prices")
    if profile:
        click.echo(f"  {read} {base}/users/{profile}/badges")
    site = settings.site_url
    click.echo(f"\nPages: {site}/ (the agenda), {site}/docs (the API reference); every `url` "
               "in an answer opens one.")
    if member is not None:
        click.echo(f"Sign in at {site}/signin as the owner of {owner.name} (the organiser portal "
                   f"{site}/portal, OAuth consent), a new password every run:")
        click.echo(f"  email     {member[0]}")
        click.echo(f"  password  {member[1]}")
    click.echo(f"MCP: {site}/mcp with the read token as Bearer, or through OAuth "
               f"(discovery: {site}/.well-known/oauth-protected-resource).")
    examples = _organiser_examples(base, minted, shown)
    if examples:
        click.echo(f"\nAs {owner.name} (a second scan of the same code answers `used`):")
        for line in examples:
            click.echo(f"  {line}")
    click.echo()
    sys.stdout.flush()
    _serve(host, port, 1)



# Mails the worker sends per pass before it looks for new ones again.
WORKER_BATCH = 200


@main.command()
@click.option("--once", is_flag=True, help="Send every mail that is due now, then stop.")
@click.option("--interval", default=5.0, show_default=True, type=click.FloatRange(min=0.1),
              help="Seconds to wait when nothing is due.")
def worker(once, interval):
    """Send the queued mails (AGENDA_SMTP_URL), retrying failed ones with backoff, and
    prune the change feed of changes older than it keeps.

    A sent mail's address is forgotten: the outbox keeps no address and a
    waiting ticket keeps only the keyed hash. With --once the exit status is 1
    when the mail server could not be reached.
    """
    with _Database() as database:
        settings = database.settings
        try:
            while True:
                # Here, not as changes commit: deleting a month-old import's changes at a
                # commit would hold up every writer of the catalogue (models/changes.py).
                with transaction(database.sessions) as session:
                    changes.prune(session, now=now())
                mailer = mail.mailer_for(settings.smtp_url, sender_name=settings.provider_name,
                                         sender_address=settings.contact)
                try:
                    report = outbox.send_due(database.sessions, mailer=mailer, now=now(),
                                             limit=None if once else WORKER_BATCH)
                finally:
                    mailer.close()
                done = report.mailed + report.failed + report.dead
                if done or once:
                    click.echo(f"mailed {report.mailed}, failed {report.failed}, "
                               f"given up {report.dead}, still queued {report.left}")
                if report.unreachable:
                    click.echo("the mail server could not be reached", err=True)
                if once:
                    sys.exit(1 if report.unreachable else 0)
                if done < WORKER_BATCH or report.unreachable:
                    time.sleep(interval)
        except KeyboardInterrupt:
            click.echo("worker stopped")


@main.group()
def person():
    """Members."""


@person.command("create")
@click.option("--email", required=True)
@click.option("--handle", required=True)
@click.option("--name", required=True)
@click.option("--password", prompt=True, hide_input=True, confirmation_prompt=True,
              help="Asked for when not given (not echoed).")
@click.option("--role", "roles", multiple=True, metavar="ORG:ROLE",
              help="A role in an organisation (id or name): owner, editor, door or viewer. "
                   "Repeatable.")
@click.option("--private", is_flag=True, help="Keep the profile (and its badges) private.")
def person_create(email, handle, name, password, roles, private):
    """Create a member who signs in with EMAIL and a password (for OAuth and the pages)."""
    try:
        with _Database() as database, transaction(database.sessions) as session:
            member = members.create_person(session, email=email, handle=handle, name=name,
                                           password=password, now=now(),
                                           visibility="private" if private else "public")
            for given in roles:
                organisation_key, _, role = given.rpartition(":")
                if not organisation_key:
                    raise click.BadParameter(f"{given!r} is not ORG:ROLE", param_hint="--role")
                members.set_role(session, person=member, organisation_key=organisation_key,
                                 role=role)
            click.echo(f"created {member.handle} ({member.id})")
    except DomainError as error:
        _fail(error)


@person.command("link")
@click.argument("email")
def person_link(email):
    """Attach the delivered tickets waiting for EMAIL to the member with that address."""
    if not os.environ.get("AGENDA_SECRET_KEY"):
        raise click.ClickException("AGENDA_SECRET_KEY is not set: waiting tickets are found "
                                   "through a keyed hash made with the service's key.")
    try:
        with _Database() as database, transaction(database.sessions) as session:
            member, linked = deliveries.link_by_address(
                session, email=email, secret_key=database.settings.secret_key, now=now())
            click.echo(f"linked {linked} waiting ticket{'s' * (linked != 1)} to {member.handle}")
    except DomainError as error:
        _fail(error)


if __name__ == "__main__":
    main()

"""The `agenda` command: database, organisations, tokens, serving and the demo."""

from __future__ import annotations

import os
import secrets
import sys

import click

from agenda.settings import load
from models import migrate, organisations, tokens
from models.db import make_engine, make_sessionmaker
from models.errors import DomainError


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
    params = error.details.get("params", [])
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
        with _Database() as database, database.sessions.begin() as session:
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
        with _Database() as database, database.sessions.begin() as session:
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
        with _Database() as database, database.sessions.begin() as session:
            record = tokens.revoke_token(session, prefix)
            click.echo(f"revoked {record.prefix}")
    except DomainError as error:
        _fail(error)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8080, show_default=True, type=int)
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1))
def serve(host, port, workers):
    """Serve the site (production mode: no response validation, compact JSON)."""
    _serve(host, port, workers)


def _serve(host: str, port: int, workers: int) -> None:
    import uvicorn

    if not os.environ.get("AGENDA_SECRET_KEY"):
        # Every worker must sign and check cursors with the same key.
        os.environ["AGENDA_SECRET_KEY"] = secrets.token_urlsafe(32)
        click.echo("AGENDA_SECRET_KEY is not set: using a key for this run only.", err=True)
    os.environ.setdefault("AGENDA_SITE_URL", f"http://{host}:{port}")
    uvicorn.run("agenda.asgi:app", host=host, port=port, workers=workers,
                log_level="info", access_log=False, proxy_headers=False)


DEMO_ORGANISATION = "Demo Nights"
DEMO_SCOPES = ("read", "scan", "attendance", "tickets")


def _demo_tokens(session) -> dict[str, str]:
    """The demo organisation (created once) and a new token per scope."""
    owner = organisations.find_organisation(session, DEMO_ORGANISATION)
    if owner is None:
        owner = organisations.create_organisation(
            session, name=DEMO_ORGANISATION, verified=True,
            ticket_shop_url="https://shop.demo-nights.example",
            bio="Club nights and festivals across the Netherlands and Belgium.",
            website="https://demo-nights.example")
    return {scope: tokens.create_token(session, organisation=owner, name=f"demo {scope}",
                                       scopes=[scope])[1]
            for scope in DEMO_SCOPES}


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8080, show_default=True, type=int)
def demo(host, port):
    """Migrate, create the demo organisation once and fresh tokens per scope, print, serve.

    Tokens are shown only when created, so every run mints a new set to print.
    """
    os.environ.setdefault("AGENDA_SITE_URL", f"http://{host}:{port}")
    with _Database() as database:
        migrate.upgrade(database.engine)
        with database.sessions.begin() as session:
            minted = _demo_tokens(session)
    settings = database.settings
    base = f"{settings.site_url}/v1"
    click.echo(f"\nEvent Agenda Service demo on {settings.database_url}")
    click.echo(f"Organisation: {DEMO_ORGANISATION}. New tokens, one per scope (shown once):")
    for scope, secret in minted.items():
        click.echo(f"  {scope:<10} {secret}")
    click.echo("\nTry:")
    click.echo(f"  curl -s {base}/terms")
    click.echo(f"  curl -s -H 'Authorization: Bearer {minted['read']}' {base}/me")
    click.echo(f"  curl -s {base}/openapi.json | head -c 300\n")
    sys.stdout.flush()
    _serve(host, port, 1)


if __name__ == "__main__":
    main()

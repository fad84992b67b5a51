"""`create_app(overrides)`: the Connexion application serving the whole site."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import logging

import connexion
import orjson
from connexion.middleware.main import ConnexionMiddleware
from sqlalchemy.engine import Engine
from sqlalchemy.orm import sessionmaker

from adapters.direct import PLANNED_ONCE, PLANNED_ONCE_RUNNER, DirectStatements, KeptStatement
from adapters.watch import Watch, forget_on_commit
from agenda.health import HealthCheck
from agenda.logs import direct_writer
from agenda.settings import Settings, load
from edge import cache, context, openapi
from edge.admission import CurrentStamp, bearer_handler
from edge.compression import Compression, Kept
from edge.cors import Cors
from edge.door_lane import DoorLane
from edge.limits import Usage
from edge.middleware import RequestMiddleware
from edge.middleware import log as access_log
from edge.problems import ErrorHandlers
from edge.routes import RouteTable
from edge.threads import Threads
from handlers import (artists, badges, changes, cities, events, festivals, genres, meta,
                      organisations, organiser, radar, venues)
from mcp_server.endpoint import McpEndpoint
from models.db import connection_arguments, make_engine, make_sessionmaker
from models import stamp
from models.stamp import CATALOGUE_TABLES
from oauth import server as oauth_server
from oauth import views as oauth_views
from oauth.prefetch import Prefetch
from pages import site
from pages import views as pages_views
from portal import views as portal_views

# Threads Connexion's FlaskApp runs handlers on (a2wsgi's WSGIMiddleware default).
FLASK_HANDLER_THREADS = 10
# The handlers of the public answers that need a token: a miss of the response cache is
# built by calling them before the framework (edge/cache.py).
CATALOGUE = (
    events.list_events, events.get_event, festivals.get_token_prices,
    festivals.list_token_reports, venues.list_venues, venues.get_venue, artists.list_artists,
    artists.get_artist, organisations.list_organisations, organisations.get_organisation,
    genres.list_genres, radar.list_releases, badges.list_badges, badges.list_user_badges,
    cities.list_cities, changes.list_changes,
)
# Threads building public answers the response cache misses (edge/cache.py): enough to keep
# the database busy, few enough not to contend with the event loop for the GIL. Two, not
# four: a worker on the long tail at 1M held 4-6 MB less, its answers as fast (in turns,
# bench/RESULTS.md).
CATALOGUE_THREADS = 2
# Threads scanning tickets in the door's lane (edge/door_lane.py): 8 doors on 2 workers keep
# 4 busy each; more scans at once wait for one (a scan holds it ~1 ms on local PostgreSQL).
DOOR_THREADS = 4


@dataclasses.dataclass
class Service:
    """Everything one running service holds: settings, database, counters, its document."""

    settings: Settings
    engine: Engine
    sessions: sessionmaker
    # Sessions of the public answers built before the framework (edge/cache.py), which only
    # read: in autocommit, each statement its own transaction.
    reads: sessionmaker
    # On PostgreSQL, where the reads' statements planned once run (`build_service`).
    catalogue_engine: Engine | None
    # Runs the key lookups of the hot paths: the token lookup of every request, a door's
    # lookup and take of a ticket (`DirectStatements.execute` on `direct_engine`; tests run it
    # on their own connection).
    direct: object
    direct_engine: Engine
    # What runs the direct statements (`direct`, the reads' planned once), each holding its
    # connections between statements: closed before the engines are disposed.
    held: tuple[DirectStatements, ...]
    usage: Usage
    document: dict
    document_json: bytes
    # The bodies that do not change while the process runs, by path, compressed once
    # (edge/compression.py): the document, the stylesheet, /docs.
    kept: dict[str, Kept]
    # The document's operations, for every layer that needs one (edge/routes.py).
    routes: RouteTable
    # The OAuth authorization server (oauth/server.py), set by `create_app`.
    oauth_server: object = None
    # The response cache (edge/cache.py), when on; set as Connexion builds its stack.
    cache: object = None
    admissions: Threads | None = None
    door_threads: Threads | None = None
    catalogue_threads: Threads | None = None
    # What this process knows of tokens and the catalogue stamp without reading the database
    # (adapters/watch.py): on PostgreSQL, unless `listen` is off.
    watch: Watch | None = None
    # With a watch: the stamp read again before an answer kept under the one it knows is
    # served (edge/admission.py `confirmed_stamp`).
    current_stamp: CurrentStamp | None = None

    def close(self) -> None:
        """Close the database connections, the admission threads and the shared answers."""
        if self.cache is not None:
            self.cache.close()
        if self.current_stamp is not None:
            self.current_stamp.close()
        for statements in self.held:
            statements.close()
        self.engine.dispose()
        self.direct_engine.dispose()
        if self.catalogue_engine is not None:
            self.catalogue_engine.dispose()
        self.admissions.shutdown()
        self.door_threads.shutdown()
        self.catalogue_threads.shutdown()
        if self.watch is not None:
            self.watch.close()

    async def admitting(self, function, *args):
        """`function(*args)` on the admission threads: the token lookup and counting of a
        request that cannot be admitted on the event loop (`admission.admit`). Threads of
        their own, not the shared pool of 40: with dozens of threads contending for the GIL
        with the event loop, served-again answers had a p99 of 1.1 s at 3,500 req/s; on one
        thread, 16 ms at 5,300 req/s (2 workers, 2 cores)."""
        return await self.admissions.run(function, *args)


def build_service(settings: Settings) -> Service:
    """Connect to the database and counters and load the document (once per process)."""
    # One connection per thread that may hold one: Flask's handlers (a2wsgi), the response
    # cache's and the door's lanes; and apart, for the direct statements of the admission
    # threads and the door's lane, in autocommit (each statement commits as it runs:
    # `DirectStatements` switches nothing), without pre-ping (it replaces a dropped one)
    # and with generic plans (key lookups: planned once, not at every scan; a door's scan
    # costs PostgreSQL half the CPU). Both bound each statement of a request, and each
    # wait for the database, by the deadline.
    engine = make_engine(settings.database_url,
                         pool_size=FLASK_HANDLER_THREADS + DOOR_THREADS + CATALOGUE_THREADS,
                         statement_timeout_ms=settings.statement_timeout_ms, requests=True)
    direct_engine = make_engine(settings.database_url,
                                pool_size=settings.admission_threads + DOOR_THREADS,
                                pre_ping=False, plans=None, autocommit=True,
                                statement_timeout_ms=settings.statement_timeout_ms)
    document = openapi.load_document(settings.base_url)
    sessions = make_sessionmaker(engine)
    # Public answers built before the framework only read: each statement on its own,
    # without the BEGIN and ROLLBACK round trips around them (two of a list page's four).
    # On PostgreSQL their statements planned once run on connections of their own that plan
    # every prepared statement once (`PLANNED_ONCE_RUNNER`): no session's connection, no
    # plan mode set and reset around each.
    reads = make_sessionmaker(engine.execution_options(isolation_level="AUTOCOMMIT"))
    direct_statements = DirectStatements(direct_engine)
    catalogue_engine, catalogue_statements = None, None
    if engine.dialect.name == "postgresql":
        catalogue_engine = make_engine(settings.database_url, pool_size=CATALOGUE_THREADS,
                                       pre_ping=False, plans=PLANNED_ONCE,
                                       statement_timeout_ms=settings.statement_timeout_ms,
                                       requests=True, autocommit=True)
        catalogue_statements = DirectStatements(catalogue_engine)
        reads.configure(info={PLANNED_ONCE_RUNNER: catalogue_statements.execute})
    routes = RouteTable(document, "/v1")
    document_json = orjson.dumps(document)
    watch = None
    if settings.listen and engine.dialect.name == "postgresql":
        watch = Watch(settings.database_url).start()
        forget_on_commit(watch, engine, sessions, catalogue=frozenset(CATALOGUE_TABLES))
    service = Service(
        settings=settings, engine=engine, sessions=sessions, reads=reads,
        catalogue_engine=catalogue_engine, watch=watch,
        direct=direct_statements.execute, direct_engine=direct_engine,
        held=tuple(runner for runner in (direct_statements, catalogue_statements) if runner),
        usage=Usage(settings.ratelimit_storage, per_minute=settings.per_minute,
                    per_day=settings.per_day),
        document=document, document_json=document_json, routes=routes,
        kept={routes.of(meta.get_openapi).route: Kept.of(document_json),
              site.STYLESHEET_PATH: site.STYLESHEET},
        admissions=Threads(settings.admission_threads, "admit"),
        door_threads=Threads(DOOR_THREADS, "door"),
        catalogue_threads=Threads(CATALOGUE_THREADS, "catalogue"),
    )
    if watch is not None:
        seconds = settings.statement_timeout_ms / 1000
        service.current_stamp = CurrentStamp(KeptStatement(
            settings.database_url, stamp.READ, engine.dialect,
            connection_arguments(statement_timeout_ms=settings.statement_timeout_ms),
            seconds), seconds)
    return service


def create_app(overrides: dict | None = None) -> connexion.FlaskApp:
    """The ASGI application: REST API under /v1, health check at /healthz, MCP at /mcp."""
    openapi.install()
    settings = load(overrides)
    service = build_service(settings)
    mcp = McpEndpoint(service)

    def outermost(app):
        return RequestMiddleware(app, service, access_line=direct_writer(access_log))

    def compressing(app):
        return Compression(app, service.kept)

    def health(app):
        return HealthCheck(app, service)

    def cached(app):
        service.cache = cache.ResponseCache(app, service, handlers=CATALOGUE)
        return service.cache

    def doors(app):
        if not settings.door_lane:
            return app
        return DoorLane(app, service, operation=service.routes.of(organiser.scan_ticket),
                        scan=organiser.scan)

    def documents_first(app):
        return Prefetch(app, service)

    # /mcp goes to the SDK's app right inside the outer middleware (request ids, body cap),
    # beside Connexion's stack; the SDK's session manager runs in the app's lifespan.
    @contextlib.asynccontextmanager
    async def lifespan(app=None):
        await service.usage.open()
        try:
            async with mcp.lifespan(app):
                yield
        finally:
            await service.usage.close()
        # uvicorn ends a worker with the signal it got once this returns (no atexit): what
        # the log handlers hold (agenda/asgi.py writes lines in batches) is written now.
        for handler in logging.getLogger().handlers:
            handler.flush()

    app = connexion.FlaskApp(
        __name__,
        # CORS first: its headers go on every answer of its endpoints, whichever layer wrote it.
        # Compression right inside the response cache, which sends its answers compressed
        # itself: a hit never passes through it (~12 µs each), every answer built below does.
        middlewares=[Cors, outermost, health, cached, compressing, doors, mcp.route, documents_first,
                     *ConnexionMiddleware.default_middlewares],
        lifespan=lifespan,
    )
    app.add_api(
        # Connexion resolves references and rewrites `servers` in the dict it is given.
        copy.deepcopy(service.document),
        base_path="/v1",
        pythonic_params=True,
        strict_validation=True,
        validate_responses=settings.validate_responses,
        validator_map=openapi.validator_map(settings.secret_key),
        security_map={"bearer": bearer_handler(service)},
        swagger_ui_options=connexion.options.SwaggerUIOptions(swagger_ui=False, serve_spec=False),
    )
    ErrorHandlers(service.routes.allowed_methods).install(app)
    flask_app = app.app
    flask_app.extensions["agenda"] = service
    flask_app.json.compact = True
    context.install(flask_app)
    _install_site(flask_app, service)
    app.service = service
    app.mcp = mcp
    return app


def _install_site(flask_app, service: Service) -> None:
    """The pages and OAuth endpoints at the site root, with their session cookie."""
    flask_app.secret_key = service.settings.secret_key
    flask_app.config.update(
        SESSION_COOKIE_NAME="agenda_session", SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=service.settings.site_url.startswith("https://"))
    flask_app.register_blueprint(oauth_views.blueprint)
    flask_app.register_blueprint(pages_views.blueprint)
    flask_app.register_blueprint(portal_views.blueprint)
    service.oauth_server = oauth_server.build_server(flask_app)

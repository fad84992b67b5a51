"""Every setting of the service, read once from `AGENDA_*` environment variables."""

from __future__ import annotations

import dataclasses
import os
import secrets
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class Settings:
    """The service's configuration; `load()` builds it, tests pass overrides."""

    site_url: str = "http://127.0.0.1:8080"
    database_url: str = f"sqlite:///{Path.cwd() / 'agenda.sqlite3'}"
    ratelimit_storage: str = "memory://"
    smtp_url: str | None = None
    secret_key: str = ""
    # Checked against every response in tests; costs ~1 ms a request, so off in production.
    validate_responses: bool = False
    max_body_bytes: int = 1024 * 1024
    # Public answers kept per process for repeated requests (edge/cache.py); off keeps none,
    # building every answer (to measure a miss, or to rule the cache out).
    response_cache: bool = True
    response_cache_bytes: int = 16 * 1024 * 1024
    # A file the workers of one server on this host keep public answers in for each other,
    # when the limits are counted in memory (edge/cache.py `HostEntries`; in Redis, the
    # answers are shared there): `agenda serve` names one of its own (in /dev/shm) and
    # starts it empty. Within this bound, outside the workers' memory.
    host_cache_path: str | None = None
    host_cache_bytes: int = 256 * 1024 * 1024
    # Well-formed door scans answered before the framework (edge/door_lane.py); off sends
    # every scan the full way (to measure it, or to rule the lane out).
    door_lane: bool = True
    # Threads per process that admit requests (token lookup, counting), each with a database
    # connection of its own. One admits ~5,000 requests/s on local PostgreSQL; more raise
    # throughput a little and the p99 a lot (they contend for the GIL with the event loop:
    # 2 threads, p99 119 ms against 16). Raise it when the database is far away.
    admission_threads: int = 1
    # PostgreSQL: each process keeps the tokens it has seen and the catalogue stamp, told of
    # changes by notifications (adapters/watch.py), instead of reading them every request.
    # Off where LISTEN does not work (a PgBouncer pooling transactions), or where nothing
    # commits (the tests' transactions).
    listen: bool = True
    # The server's log lines are written in batches, at most this many seconds late (at once
    # from a warning on, and as the server stops).
    log_flush_seconds: int = 1
    # How long a request's statement, or its wait for the database (a lock, a connection, a
    # thread that admits it), may take before the request is answered 503 with Retry-After.
    # The command line (imports, migrations, the worker) has no such bound.
    statement_timeout_ms: int = 5000
    per_minute: int = 120
    per_day: int = 10_000
    provider_name: str = "Event Agenda Service B.V."
    provider_chamber_of_commerce: str = "00000000"
    provider_vat: str = "NL000000000B01"
    provider_address: str = "Keizersgracht 1, 1015 AA Amsterdam, NL"
    contact: str = "api@agenda.example"
    terms_version: str = "2026-11-01"
    # OAuth clients identified by a metadata document URL: allow http on loopback hosts
    # (tests run their client there); never in production, where private targets are refused.
    oauth_metadata_documents_on_loopback: bool = False

    @property
    def base_url(self) -> str:
        """The REST root: the site URL with `/v1`."""
        return f"{self.site_url}/v1"


_BOOLEAN = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}


def load(overrides: dict | None = None) -> Settings:
    """Settings from the environment, then `overrides` (a dict of field names) on top."""
    values: dict = {}
    for field in dataclasses.fields(Settings):
        raw = os.environ.get(f"AGENDA_{field.name.upper()}")
        if raw is None:
            continue
        if field.type == "bool":
            values[field.name] = _BOOLEAN[raw.strip().lower()]
        elif field.type == "int":
            values[field.name] = int(raw)
        else:
            values[field.name] = raw
    values.update(overrides or {})
    if not values.get("secret_key"):
        # A per-process key keeps a demo working; cursors and hashes then do not survive
        # a restart, which is why production sets AGENDA_SECRET_KEY.
        values["secret_key"] = secrets.token_urlsafe(32)
    values["site_url"] = values.get("site_url", Settings.site_url).rstrip("/")
    return Settings(**values)

"""Opening a store by URL: SQLite (the embedded default) or PostgreSQL."""

from __future__ import annotations

from pawflow.clock import Clock
from pawflow.errors import InvalidInput
from pawflow.redaction import remember_url
from pawflow.store.database import Database, SqliteDatabase
from pawflow.store.store import DEFAULT_PAYLOAD_CAP, Store

DEFAULT_URL = "sqlite:///data/pawflow.db"


def open_store(
    url: str = DEFAULT_URL,
    *,
    clock: Clock | None = None,
    payload_cap: int = DEFAULT_PAYLOAD_CAP,
    migrate: bool = True,
) -> Store:
    """Open (and by default migrate) the store at ``url``.

    ``sqlite:///relative/path.db``, ``sqlite:////absolute/path.db``, ``sqlite://:memory:``
    is not offered (every thread would get its own empty database); ``postgresql://…``.
    """
    db: Database
    remember_url(url)  # its password never reaches a log or a stored error
    if url.startswith("sqlite:///"):
        db = SqliteDatabase(url.removeprefix("sqlite:///"))
    elif url.startswith(("postgresql://", "postgres://")):
        # psycopg is loaded only for a PostgreSQL store, never for the embedded default.
        from pawflow.store.postgres import PostgresDatabase  # noqa: PLC0415

        db = PostgresDatabase(url)
    else:
        raise InvalidInput(
            f"unsupported store URL {url!r}: use sqlite:///path/to/file.db or postgresql://…"
        )
    store = Store(db, clock=clock, payload_cap=payload_cap)
    if migrate:
        try:
            store.migrate()
        except BaseException:
            store.close()
            raise
    return store

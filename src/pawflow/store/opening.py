"""Opening a store by URL: SQLite (the embedded default) or PostgreSQL."""

from __future__ import annotations

import contextlib
from pathlib import Path

import platformdirs

from pawflow import extras
from pawflow.clock import Clock
from pawflow.errors import InvalidInput
from pawflow.redaction import remember_url
from pawflow.store.engine.database import Database
from pawflow.store.engine.sqlite import SqliteDatabase
from pawflow.store.store import DEFAULT_PAYLOAD_CAP, Store


def data_dir() -> Path:
    """The user's PawFlow folder, whatever the current directory: ``$XDG_DATA_HOME/pawflow``
    (``~/.local/share/pawflow``) on Linux, ``~/Library/Application Support/pawflow`` on
    macOS, ``%LOCALAPPDATA%\\pawflow`` on Windows."""
    return Path(platformdirs.user_data_dir("pawflow", appauthor=False))


def default_url() -> str:
    """The store every command opens unless told otherwise (``--db``, ``PAWFLOW_DB``): one
    SQLite file in :func:`data_dir`, so ``pawflow serve`` and ``pawflow users add`` run from
    different folders share one database."""
    return f"sqlite:///{data_dir() / 'pawflow.db'}"


def open_store(
    url: str | None = None,
    *,
    clock: Clock | None = None,
    payload_cap: int = DEFAULT_PAYLOAD_CAP,
    migrate: bool = True,
    timeout: float | None = None,
) -> Store:
    """Open (and by default migrate) the store at ``url`` (by default :func:`default_url`).

    ``sqlite:///relative/path.db``, ``sqlite:////absolute/path.db``, ``sqlite://:memory:``
    is not offered (every thread would get its own empty database); ``postgresql://…``.
    On PostgreSQL, ``timeout`` bounds how long a transaction waits for a connection, and a
    connection for the server (5 s by default, ``PAWFLOW_DB_TIMEOUT`` for ``pawflow serve``):
    past it the store is unavailable (``StoreUnavailable``).
    """
    url = default_url() if url is None else url
    db: Database
    remember_url(url)  # its password never reaches a log or a stored error
    if url.startswith("sqlite:///"):
        db = SqliteDatabase(url.removeprefix("sqlite:///"))
    elif url.startswith(("postgresql://", "postgres://")):
        # psycopg is loaded only for a PostgreSQL store, never for the embedded default;
        # it is the `postgres` extra.
        extras.require("postgres", part="a PostgreSQL store")
        from pawflow.store.engine.postgres import PostgresDatabase  # noqa: PLC0415

        db = PostgresDatabase(url) if timeout is None else PostgresDatabase(url, timeout=timeout)
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


def postgres_available(admin_url: str) -> bool:
    """Whether the PostgreSQL server of ``admin_url`` answers."""
    from pawflow.store.engine import postgres  # noqa: PLC0415 (psycopg only when asked)

    return postgres.available(admin_url)


def throwaway_postgres(
    admin_url: str, *, migrated: bool = False
) -> contextlib.AbstractContextManager[str]:
    """Create a fresh database, yield its URL, drop it afterwards (for tests); with
    ``migrated``, one already at the newest schema."""
    from pawflow.store.engine import postgres  # noqa: PLC0415 (psycopg only when asked)

    return postgres.throwaway(admin_url, migrated=migrated)

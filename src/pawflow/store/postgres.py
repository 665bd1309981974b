"""The PostgreSQL backend: a connection pool, LISTEN/NOTIFY for notices between processes.

Only this module imports psycopg, and only a ``postgresql://`` store URL imports this module,
so an embedded SQLite store never loads it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
import threading
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import psycopg.errors
import psycopg_pool
from psycopg.rows import dict_row

from pawflow.errors import Conflict, StoreError, StoreUnavailable
from pawflow.store.database import NOTIFY_CHANNEL, Database, Params, Tx, sql

NOTIFY_LIMIT = 7000
"""Bytes per notification payload (PostgreSQL refuses 8000 and more)."""


def _payloads(origin: str, notices: set[str]) -> list[str]:
    """A transaction's notices as few notifications as fit: usually one."""
    payloads: list[str] = []
    batch: list[str] = []
    size = 0
    for notice in sorted(notices):
        length = len(json.dumps(notice))
        if length > NOTIFY_LIMIT:
            notice, length = "changed", 9  # listeners then look at everything
        if batch and size + length > NOTIFY_LIMIT:
            payloads.append(json.dumps([origin, batch]))
            batch, size = [], 0
        batch.append(notice)
        size += length + 2
    if batch:
        payloads.append(json.dumps([origin, batch]))
    return payloads


def _read_payload(payload: str) -> tuple[str, list[str]]:
    try:
        origin, notices = json.loads(payload)
        if isinstance(origin, str) and all(isinstance(n, str) for n in notices):
            return origin, list(notices)
    except (ValueError, TypeError):
        pass
    return "", [payload]  # a bare notice, from a process that sends one at a time


class PostgresDatabase(Database):
    """A PostgreSQL database through a connection pool; notices travel by LISTEN/NOTIFY."""

    dialect = "postgres"
    skip_locked = " FOR UPDATE SKIP LOCKED"

    def __init__(self, url: str, *, max_connections: int = 10, timeout: float = 30.0) -> None:
        super().__init__()
        self.url = url
        self.origin = secrets.token_hex(8)
        """Marks this instance's notifications, which its own LISTEN thread skips."""
        self._sql_cache: dict[str, str] = {}
        try:
            # Fail fast and clearly when the server is not there, rather than after the
            # pool has retried for its whole timeout.
            psycopg.connect(url, connect_timeout=min(int(timeout), 10)).close()
        except psycopg.Error as exc:
            raise StoreUnavailable(f"cannot reach PostgreSQL: {exc}") from exc
        try:
            self.pool: psycopg_pool.ConnectionPool[psycopg.Connection[Any]] = (
                psycopg_pool.ConnectionPool(
                    url,
                    min_size=1,
                    max_size=max_connections,
                    timeout=timeout,
                    kwargs={"row_factory": dict_row, "autocommit": False},
                    open=True,
                )
            )
            self.pool.wait(timeout=timeout)
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            raise StoreUnavailable(f"cannot reach PostgreSQL: {exc}") from exc

    def _translate(self, sql: str) -> str:
        cached = self._sql_cache.get(sql)
        if cached is None:
            cached = sql.replace("%", "%%").replace("?", "%s")
            self._sql_cache[sql] = cached
        return cached

    def run(self, cursor: Any, sql: str, params: Params) -> None:
        try:
            cursor.execute(self._translate(sql), params)
        except psycopg.errors.IntegrityError as exc:
            raise Conflict(f"constraint violated: {exc}") from exc
        except psycopg.errors.OperationalError as exc:
            raise StoreUnavailable(f"database unavailable: {exc}") from exc
        except psycopg.Error as exc:
            raise StoreError(f"database error: {exc}") from exc

    def lock_key(self, tx: Tx, key: str) -> None:
        sql(tx).execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (key,))

    @contextlib.contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[Tx]:
        try:
            with self.pool.connection() as conn, conn.transaction():
                tx = Tx(self, conn.cursor())
                yield tx
                tx._close()
                for payload in _payloads(self.origin, tx._notices):
                    sql(tx).execute("SELECT pg_notify(?, ?)", (NOTIFY_CHANNEL, payload))
        except psycopg_pool.PoolTimeout as exc:
            raise StoreUnavailable(f"no database connection available: {exc}") from exc
        except psycopg.errors.OperationalError as exc:
            raise StoreUnavailable(f"database unavailable: {exc}") from exc
        except psycopg.Error as exc:
            raise StoreError(f"database error: {exc}") from exc
        self._finish(tx)

    def listen(self, callback: Callable[[str], None]) -> Callable[[], None]:
        stop = threading.Event()

        def watch() -> None:
            while not stop.is_set():
                try:
                    with psycopg.connect(self.url, autocommit=True) as conn:
                        conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
                        callback("changed")  # anything missed while (re)connecting
                        while not stop.is_set():
                            for note in conn.notifies(timeout=0.25):
                                origin, notices = _read_payload(note.payload)
                                # This process's listeners heard its commits directly.
                                if origin != self.origin:
                                    for notice in notices:
                                        callback(notice)
                except psycopg.Error:
                    if stop.wait(0.5):
                        return

        return self._watch(callback, watch, stop, "pawflow-pg-listen")

    def close(self) -> None:
        self.pool.close()


def available(admin_url: str) -> bool:
    """Whether the PostgreSQL server of ``admin_url`` answers."""
    try:
        with psycopg.connect(admin_url, connect_timeout=3):
            return True
    except psycopg.Error:
        return False


def _database_url(admin_url: str, name: str) -> str:
    base, _, _ = admin_url.rpartition("/")
    return f"{base}/{name}"


@contextlib.contextmanager
def throwaway(admin_url: str, *, migrated: bool = False) -> Iterator[str]:
    """Create a fresh database, yield its URL, drop it afterwards (for tests). With
    ``migrated``, it is a copy of a database at the newest schema (:func:`migrated_template`)
    instead of an empty one."""
    name = "pawflow_test_" + secrets.token_hex(6)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if migrated:
            _copy_template(conn, admin_url, name)
        else:
            conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _database_url(admin_url, name)
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


TEMPLATE_PREFIX = "pawflow_template_"
_templates: dict[str, str] = {}  # admin URL -> the template this process last copied


def _copy_template(conn: psycopg.Connection[Any], admin_url: str, name: str) -> None:
    for attempt in range(3):
        template = _templates.get(admin_url) or migrated_template(admin_url)
        _templates[admin_url] = template
        try:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
            return
        except psycopg.errors.InvalidCatalogName:  # dropped for a newer schema: make it again
            _templates.pop(admin_url, None)
            if attempt == 2:
                raise


def migrated_template(admin_url: str) -> str:
    """The name of a database at the newest schema, made by the migrations themselves, for
    tests to copy (``CREATE DATABASE … TEMPLATE``, a file copy) instead of migrating each
    database anew. One per schema: named by a digest of the migrations, made once under an
    advisory lock however many test processes ask, and nobody connects to it once made.
    Making one drops those of other schemas."""
    from pawflow.store.migrations import migrate, migrations_for  # noqa: PLC0415

    steps = migrations_for("postgres")
    digest = hashlib.sha256("\0".join(step.sql for step in steps).encode()).hexdigest()
    name = TEMPLATE_PREFIX + digest[:16]
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (TEMPLATE_PREFIX,))
        try:
            found = conn.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE %s",
                (TEMPLATE_PREFIX.replace("_", r"\_") + "%",),
            ).fetchall()
            if (name,) in found:
                return name
            building = f"{name}_{secrets.token_hex(4)}"
            conn.execute(f'CREATE DATABASE "{building}"')
            try:
                db = PostgresDatabase(_database_url(admin_url, building))
                try:
                    migrate(db)
                finally:
                    db.close()
                conn.execute(f'ALTER DATABASE "{building}" RENAME TO "{name}"')
            except BaseException:
                conn.execute(f'DROP DATABASE IF EXISTS "{building}" WITH (FORCE)')
                raise
            for (older,) in found:
                conn.execute(f'DROP DATABASE IF EXISTS "{older}" WITH (FORCE)')
            return name
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (TEMPLATE_PREFIX,))

"""The PostgreSQL backend: a connection pool, LISTEN/NOTIFY for notices between processes.

Only this module imports psycopg, and only a ``postgresql://`` store URL imports this module,
so an embedded SQLite store never loads it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import secrets
import threading
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import psycopg.errors
import psycopg_pool
from psycopg.rows import dict_row

from pawflow.errors import Conflict, StoreError, StoreUnavailable
from pawflow.loops import Loop
from pawflow.store.database import NOTIFY_CHANNEL, Database, Params, Tx, sql

log = logging.getLogger("pawflow.store")

NOTIFY_LIMIT = 7000
"""Bytes per notification payload (PostgreSQL refuses 8000 and more)."""
DEFAULT_TIMEOUT = 5.0
"""Seconds a transaction waits for a connection (and a connection for the server) before
the store is unavailable (``PAWFLOW_DB_TIMEOUT``)."""
PROBE_INTERVAL = 0.25
"""Seconds between two tries to reach the server while it is down."""


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


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

    def __init__(
        self, url: str, *, max_connections: int = 10, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        super().__init__()
        self.url = url
        self.origin = secrets.token_hex(8)
        """Marks this instance's notifications, which its own LISTEN thread skips."""
        self.timeout = timeout
        self.max_connections = max_connections
        self._sql_cache: dict[str, str] = {}
        self._closing = threading.Event()
        self._probing = False
        self._probe_lock = threading.Lock()
        self._renew_lock = threading.Lock()
        try:
            # Fail fast and clearly when the server is not there, rather than after the
            # pool has retried for its whole timeout.
            self._connect().close()
        except psycopg.Error as exc:
            raise StoreUnavailable(f"cannot reach PostgreSQL: {_one_line(exc)}") from exc
        self.pool = self._new_pool()
        try:
            self.pool.wait(timeout=timeout)
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            self.pool.close()
            raise StoreUnavailable(f"cannot reach PostgreSQL: {_one_line(exc)}") from exc

    @property
    def connect_timeout(self) -> int:
        """libpq's ``connect_timeout``: whole seconds, 2 at least."""
        return max(2, math.ceil(self.timeout))

    def _connect(self, **options: Any) -> psycopg.Connection[Any]:
        return psycopg.connect(self.url, connect_timeout=self.connect_timeout, **options)

    def _new_pool(self) -> psycopg_pool.ConnectionPool[psycopg.Connection[Any]]:
        return psycopg_pool.ConnectionPool(
            self.url,
            min_size=1,
            max_size=self.max_connections,
            timeout=self.timeout,
            kwargs={
                "row_factory": dict_row,
                "autocommit": False,
                "connect_timeout": self.connect_timeout,
            },
            open=True,
        )

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
        problem = self.availability.problem
        if problem is not None:  # fail at once while the server is known to be away
            self._suspect()
            raise StoreUnavailable(f"the database is unreachable: {problem}")
        conn: psycopg.Connection[Any] | None = None
        try:
            with self.pool.connection() as conn, conn.transaction():
                tx = Tx(self, conn.cursor())
                yield tx
                tx._close()
                for payload in _payloads(self.origin, tx._notices):
                    sql(tx).execute("SELECT pg_notify(?, ?)", (NOTIFY_CHANNEL, payload))
        except psycopg_pool.PoolTimeout as exc:
            self._suspect()
            raise StoreUnavailable(f"no database connection available: {exc}") from exc
        except psycopg.errors.OperationalError as exc:
            if conn is None or conn.broken:
                self._suspect()
            raise StoreUnavailable(f"database unavailable: {exc}") from exc
        except psycopg.Error as exc:
            raise StoreError(f"database error: {exc}") from exc
        except StoreUnavailable:
            if conn is not None and conn.broken:
                self._suspect()
            raise
        self._finish(tx)

    # -- outages ------------------------------------------------------------------------

    def _suspect(self) -> None:
        """A connection broke, or none came: find out on a thread of its own whether the
        server is away (then transactions fail at once until it answers again, tried every
        ``PROBE_INTERVAL`` seconds) or only that connection was lost."""
        with self._probe_lock:
            if self._probing or self._closing.is_set():
                return
            self._probing = True
        threading.Thread(target=self._probe, name="pawflow-pg-probe", daemon=True).start()

    def _probe(self) -> None:
        try:
            while not self._closing.is_set():
                try:
                    self._connect(autocommit=True).close()
                except psycopg.Error as exc:
                    self.availability.lost(f"cannot reach PostgreSQL: {_one_line(exc)}")
                    if self._closing.wait(PROBE_INTERVAL):
                        return
                    continue
                self._reconnected()
                return
        except Exception:  # the next transaction that fails tries again
            log.warning("probing the database failed", exc_info=True)
        finally:
            with self._probe_lock:
                self._probing = False

    def _reconnected(self) -> None:
        """The server answers: after an outage, start over with a new pool (the old one's
        connections are dead, and it would wait out its own doubling backoff before making
        new ones), and say the store is back; otherwise only drop the dead idle ones."""
        with self._renew_lock:
            if self._closing.is_set():
                return
            if self.availability.down:
                old, self.pool = self.pool, self._new_pool()
                # Connections on loan are closed when given back; its threads end meanwhile.
                threading.Thread(target=old.close, name="pawflow-pg-old-pool", daemon=True).start()
                self.availability.back()
            else:
                self.pool.check()

    def listen(self, callback: Callable[[str], None]) -> Callable[[], None]:
        def watch(loop: Loop) -> None:
            reconnecting = loop.failures.count > 0
            try:
                with self._connect(autocommit=True) as conn:
                    conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
                    if reconnecting:  # the server may have restarted: so did the pool's
                        self._reconnected()
                    callback("changed")  # anything missed while (re)connecting
                    loop.failures.succeeded()
                    while not loop.stopping():
                        for note in conn.notifies(timeout=0.25):
                            origin, notices = _read_payload(note.payload)
                            # This process's listeners heard its commits directly.
                            if origin != self.origin:
                                for notice in notices:
                                    callback(notice)
            except psycopg.OperationalError:
                self._suspect()
                raise

        return self._watch(callback, watch, "pg-listen")

    def close(self) -> None:
        self._closing.set()
        with self._renew_lock:
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

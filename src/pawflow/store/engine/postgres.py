"""The PostgreSQL backend: a connection pool, LISTEN/NOTIFY for notices between processes.

Only this module imports psycopg, and only a ``postgresql://`` store URL imports this module,
so an embedded SQLite store never loads it.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import logging
import math
import os
import re
import secrets
import threading
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import psycopg.errors
import psycopg_pool
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row

from pawflow.errors import Conflict, InvalidInput, PawFlowError, StoreError, StoreUnavailable
from pawflow.loops import Loop
from pawflow.store.engine.database import NOTIFY_CHANNEL, NUL_REFUSED, Database, Params, Tx, sql

_ARRAY = re.compile(r"(?<!%)%s(::\w+\[\])")
"""A parameter cast to an array type (``?::text[]``, a batch's column) goes in binary:
psycopg writes a text array's literal in Python, quoting each element, in five times the
time (a batch of 256 queue rows: 1.2 ms against 0.25)."""

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


def _translated(exc: psycopg.Error) -> PawFlowError:
    """The store's error for what the server (or the connection to it) said."""
    if isinstance(exc, psycopg.DataError) and "NUL" in str(exc) and exc.diag.sqlstate is None:
        return InvalidInput(NUL_REFUSED)  # psycopg's own refusal, before anything was sent
    if isinstance(exc, psycopg.errors.IntegrityError):
        return Conflict(f"constraint violated: {exc}")
    if isinstance(exc, psycopg.errors.OperationalError):
        return StoreUnavailable(f"database unavailable: {exc}")
    return StoreError(f"database error: {exc}")


def _payload_start(origin: str) -> str:
    """How every payload :func:`_payloads` makes for ``origin`` begins."""
    return json.dumps([origin, []])[:-3]


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
    pipelines = True

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
                # Transactions begin and end by statements of the store's own (BEGIN goes
                # with the first statement, COMMIT with the last ones: see transaction()).
                "autocommit": True,
                "connect_timeout": self.connect_timeout,
            },
            open=True,
        )

    def _translate(self, sql: str) -> str:
        cached = self._sql_cache.get(sql)
        if cached is None:
            cached = _ARRAY.sub(r"%b\1", sql.replace("%", "%%").replace("?", "%s"))
            self._sql_cache[sql] = cached
        return cached

    def run(self, cursor: Any, sql: str, params: Params) -> None:
        try:
            cursor.execute(self._translate(sql), params)
        except psycopg.Error as exc:
            raise _translated(exc) from exc

    def run_batch(self, cursor: Any, statements: list[tuple[str, Params]]) -> None:
        """Send ``statements`` in one pipeline: one exchange with the server for them all
        (the cursor holds the last one's result); the first that fails raises."""
        try:
            with cursor.connection.pipeline():
                for sql, params in statements:
                    cursor.execute(self._translate(sql), params)
        except psycopg.Error as exc:
            raise _translated(exc) from exc

    def lock_key(self, tx: Tx, key: str) -> None:
        sql(tx).send("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (key,))

    @contextlib.contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[Tx]:
        problem = self.availability.problem
        if problem is not None:  # fail at once while the server is known to be away
            self._suspect()
            raise StoreUnavailable(f"the database is unreachable: {problem}")
        conn: psycopg.Connection[Any] | None = None
        try:
            with self.pool.connection() as conn:
                tx = Tx(self, conn.cursor())
                statements = sql(tx)
                statements.send("BEGIN")  # goes with the first statement
                try:
                    yield tx
                    tx._close()
                    # Delivered at commit wherever it runs: it goes ahead of the last
                    # statements, so that only COMMIT follows a user's event counter, which
                    # stays locked until then.
                    for payload in reversed(_payloads(self.origin, tx._notices)):
                        notify = "SELECT pg_notify(?, ?)"
                        statements.send(notify, (NOTIFY_CHANNEL, payload), ahead=True)
                    if not statements.idle:  # the last statements and COMMIT: one exchange
                        statements.send("COMMIT")
                        statements.flush()
                except BaseException:
                    if statements.sent and not conn.broken:
                        with contextlib.suppress(psycopg.Error):
                            if conn.info.transaction_status != TransactionStatus.IDLE:
                                conn.execute("ROLLBACK")
                    raise
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
                    mine = _payload_start(self.origin)
                    while not loop.stopping():
                        for note in conn.notifies(timeout=0.25):
                            # This process's listeners heard its commits directly.
                            if note.payload.startswith(mine):
                                continue
                            origin, notices = _read_payload(note.payload)
                            if origin != self.origin:
                                for notice in notices:
                                    callback(notice)
            except psycopg.OperationalError:
                self._suspect()
                raise

        return self._watch(callback, watch, "pg-listen")

    def close(self) -> None:
        self._closing.set()
        self._stop_watchers()
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
    """A fresh database's URL for the block (for tests). With ``migrated``, one at the newest
    schema: a copy of :func:`migrated_template`, which this process empties again afterwards
    and hands to its next caller (:class:`_Spares`) — making and dropping a database costs a
    checkpoint each, emptying one a few milliseconds. Without, an empty database, dropped
    afterwards."""
    if migrated:
        with _spares.database(admin_url) as url:
            yield url
        return
    name = "pawflow_test_" + secrets.token_hex(6)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _database_url(admin_url, name)
    finally:
        _drop(admin_url, name)


def _drop(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# What makes two databases the same schema: tables, columns, indexes, triggers, and the
# migrations recorded. A database whose shape changed under a test is dropped, never reused.
_SHAPE = """
SELECT md5(concat_ws('|',
  (SELECT string_agg(concat_ws(':', table_name, column_name, data_type, column_default),
                     ',' ORDER BY table_name, column_name)
     FROM information_schema.columns WHERE table_schema = 'public'),
  (SELECT string_agg(indexdef, ',' ORDER BY indexdef) FROM pg_indexes
    WHERE schemaname = 'public'),
  (SELECT string_agg(tgname, ',' ORDER BY tgname) FROM pg_trigger WHERE NOT tgisinternal),
  (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM pawflow_schema t)))
"""
# Empty every table but the migrations' own, foreign keys aside (a superuser's right), and
# start every sequence again.
_EMPTY = """
DO $$
DECLARE t record;
BEGIN
  SET LOCAL session_replication_role = replica;
  FOR t IN SELECT tablename FROM pg_tables
            WHERE schemaname = 'public' AND tablename <> 'pawflow_schema' LOOP
    EXECUTE format('DELETE FROM %I', t.tablename);
  END LOOP;
  PERFORM setval(format('%I.%I', schemaname, sequencename), start_value, false)
     FROM pg_sequences WHERE schemaname = 'public';
END $$
"""
SPARE_PREFIX = "pawflow_spare_"


class _Spares:
    """Migrated databases of this process, emptied after each use and handed out again.

    Each is named after the process (``pawflow_spare_<pid>_…``): the process drops its own
    when it exits, and the first process to ask drops those of processes that are gone.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ready: dict[tuple[str, str], list[str]] = {}  # (admin URL, template) -> names
        self._shapes: dict[str, str] = {}  # template -> its shape
        self._made: set[tuple[str, str]] = set()  # (admin URL, name)
        self._reaped = False

    @contextlib.contextmanager
    def database(self, admin_url: str) -> Iterator[str]:
        name, template = self._take(admin_url)
        url = _database_url(admin_url, name)
        reusable = False
        try:
            yield url
        finally:
            with contextlib.suppress(psycopg.Error):
                reusable = self._empty(admin_url, url, name, template)
            if reusable:
                with self._lock:
                    self._ready.setdefault((admin_url, template), []).append(name)
            else:
                self._made.discard((admin_url, name))
                _drop(admin_url, name)

    def _take(self, admin_url: str) -> tuple[str, str]:
        with self._lock:
            if not self._reaped:
                self._reaped = True
                _reap(admin_url)
                atexit.register(self._drop_all)
            template = _templates.get(admin_url)
            ready = self._ready.get((admin_url, template or ""), [])
            if template is not None and ready:
                return ready.pop(), template
        name = f"{SPARE_PREFIX}{os.getpid()}_{secrets.token_hex(4)}"
        with psycopg.connect(admin_url, autocommit=True) as conn:
            template = _copy_template(conn, admin_url, name)
        with self._lock:
            self._made.add((admin_url, name))
        if template not in self._shapes:
            with psycopg.connect(_database_url(admin_url, name), autocommit=True) as conn:
                self._shapes[template] = _shape(conn)
        return name, template

    def _empty(self, admin_url: str, url: str, name: str, template: str) -> bool:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            )
        with psycopg.connect(url, autocommit=True) as conn:
            if _shape(conn) != self._shapes.get(template):
                return False
            with conn.transaction():
                conn.execute(_EMPTY)
        return True

    def _drop_all(self) -> None:
        for admin_url, name in list(self._made):
            with contextlib.suppress(psycopg.Error):
                _drop(admin_url, name)


def _shape(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute(_SHAPE).fetchone()
    return str(row[0]) if row else ""


def _reap(admin_url: str) -> None:
    """Drop the spare databases of processes that are gone (killed before they could)."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s",
            (SPARE_PREFIX.replace("_", r"\_") + "%",),
        ).fetchall()
        for (name,) in rows:
            pid = name.removeprefix(SPARE_PREFIX).split("_", 1)[0]
            if pid.isdigit() and not _alive(int(pid)):
                with contextlib.suppress(psycopg.Error):
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_spares = _Spares()


TEMPLATE_PREFIX = "pawflow_template_"
_templates: dict[str, str] = {}  # admin URL -> the template this process last copied


def _copy_template(conn: psycopg.Connection[Any], admin_url: str, name: str) -> str:
    """Make ``name`` a copy of the migrated template; the template's name."""
    for attempt in range(3):
        template = _templates.get(admin_url) or migrated_template(admin_url)
        _templates[admin_url] = template
        try:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
            return template
        except psycopg.errors.InvalidCatalogName:  # dropped for a newer schema: make it again
            _templates.pop(admin_url, None)
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def migrated_template(admin_url: str) -> str:
    """The name of a database at the newest schema, made by the migrations themselves, for
    tests to copy (``CREATE DATABASE … TEMPLATE``, a file copy) instead of migrating each
    database anew. One per schema: named by a digest of the migrations, made once under an
    advisory lock however many test processes ask, and nobody connects to it once made.
    Making one drops those of other schemas."""
    from pawflow.store.engine.migrations import migrate, migrations_for  # noqa: PLC0415

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

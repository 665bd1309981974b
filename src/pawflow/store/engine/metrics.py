"""What the store tells ``/metrics``, and the store's side of tracing.

**Gauges** come from one statement per scrape (:meth:`StoreGauges.samples`, kept for a few
seconds): the parts of :data:`QUERIES` joined by ``UNION ALL``. Each part reads rows that
are waiting — pending requests, resolved continuations not yet delivered, queued turns,
FlowFiles in flow queues, live leases — through the partial indexes on them, never the
history: a store with a million answered requests costs a scrape what one with a thousand
does. Another module adds its own part with :func:`add_gauges` (the outbox's depth by
channel is one, :mod:`pawflow.store.reach.outbox`).

**Counters** of outcomes are kept in this process (:mod:`pawflow.telemetry`); a change
counts them with :func:`count`, which applies the count once its transaction commits (and
not at all if it, or the savepoint it was made in, rolls back).

**Spans**: :func:`asked` finds the request behind a signal (its kind, when it left pending,
and the trace context of its ask), and :func:`resuming` is the span of a requester carrying
on after an answer, linked to the ask and timed from the answer.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

from pawflow import telemetry
from pawflow.clock import to_millis
from pawflow.errors import PawFlowError
from pawflow.interactions import Kind
from pawflow.records import CHANNELS
from pawflow.store.engine.database import Row, Tx, sql
from pawflow.telemetry import Counter, Family, Sample

if TYPE_CHECKING:
    from opentelemetry.trace import Span

log = logging.getLogger("pawflow.metrics")

DEFAULT_TTL = timedelta(seconds=5)
REQUEST_SIGNALS = ("confirmation", "interaction")
"""The families of the signals requests fire (``confirmation:<request id>``, …)."""

PENDING_AGE_BUCKETS = (60, 300, 900, 3600, 4 * 3600, 86400, 7 * 86400)
"""Seconds: the ages a pending request is counted under (1 min … 7 days)."""

Rows = Mapping[str, list[Row]]
KINDS = tuple(kind.value for kind in Kind)


class Store(Protocol):
    """What this module needs of a :class:`pawflow.store.Store`."""

    def transaction(self, *, write: bool = True) -> contextlib.AbstractContextManager[Tx]: ...

    def now(self) -> datetime: ...


@dataclass(frozen=True)
class GaugeQuery:
    """One part of a scrape's statement and the samples its rows make.

    ``sql`` selects the columns ``a``, ``b``, ``c`` (texts: label values) and ``n``, ``t``,
    ``s`` (numbers: a count, a time, a sum); ``params(now)`` gives its parameters, now in
    epoch milliseconds; ``samples(rows, now)`` turns the rows of every part, by part name,
    into samples of ``families``.
    """

    name: str
    sql: str
    families: Sequence[Family]
    samples: Callable[[Rows, int], list[Sample]]
    params: Callable[[int], Sequence[Any]] = lambda now: ()


QUERIES: list[GaugeQuery] = []
"""The parts of every scrape's statement, in order."""


def add_gauges(query: GaugeQuery) -> None:
    """Read ``query`` in every scrape from now on (once, however often it is added)."""
    if all(known.name != query.name for known in QUERIES):
        QUERIES.append(query)


def _seconds(now: int, then: Any) -> float:
    return max(0.0, (now - int(then)) / 1000) if then is not None else 0.0


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float | Decimal) else 0.0


# -- the parts -------------------------------------------------------------------------------

_BUCKET = (
    "CASE "
    + " ".join(f"WHEN created_at >= ? THEN '{bound}'" for bound in PENDING_AGE_BUCKETS)
    + " ELSE '+Inf' END"
)

PENDING = Family("pawflow_requests_pending", "gauge", "Requests waiting for an answer.", ("kind",))
PENDING_AGE = Family(
    "pawflow_requests_pending_age_seconds",
    "gaugehistogram",
    "Requests waiting for an answer, by how long they have waited.",
    ("kind",),
)
OLDEST = Family(
    "pawflow_requests_oldest_pending_age_seconds",
    "gauge",
    "How long the oldest request still waiting has waited.",
    ("kind",),
)
OVERDUE = Family(
    "pawflow_requests_overdue",
    "gauge",
    "Requests past their deadline that the sweeper has not expired yet.",
    ("kind",),
)


def _pending_samples(rows: Rows, now: int) -> list[Sample]:
    by_kind: dict[str, dict[str, tuple[int, float]]] = {}
    oldest: dict[str, int] = {}
    for row in rows["pending"]:
        kind, count = str(row["a"]), int(row["n"])
        by_kind.setdefault(kind, {})[str(row["b"])] = (count, count * now - _number(row["s"]))
        oldest[kind] = min(oldest.get(kind, now), int(row["t"]))
    found: list[Sample] = []
    for kind in sorted({*KINDS, *by_kind}):  # every kind, waiting or not: 0 is a value too
        buckets = by_kind.get(kind, {})
        labels = {"kind": kind}
        running, waited = 0, 0.0
        for bound in [*map(str, PENDING_AGE_BUCKETS), "+Inf"]:
            count, total = buckets.get(bound, (0, 0.0))
            running += count
            waited += total
            found.append(Sample(f"{PENDING_AGE.name}_bucket", {**labels, "le": bound}, running))
        found.append(Sample(f"{PENDING_AGE.name}_gcount", labels, running))
        found.append(Sample(f"{PENDING_AGE.name}_gsum", labels, waited / 1000))
        found.append(Sample(PENDING.name, labels, running))
        found.append(Sample(OLDEST.name, labels, _seconds(now, oldest.get(kind, now))))
    overdue = {str(row["a"]): int(row["n"]) for row in rows["overdue"]}
    for kind in sorted({*KINDS, *overdue}):
        found.append(Sample(OVERDUE.name, {"kind": kind}, overdue.get(kind, 0)))
    return found


add_gauges(
    GaugeQuery(
        "pending",
        # Through the partial index of pending requests: as many rows as are waiting.
        f"SELECT kind AS a, b, '' AS c, COUNT(*) AS n, MIN(created_at) AS t,"
        f" SUM(created_at) AS s FROM (SELECT kind, created_at, {_BUCKET} AS b"
        " FROM interactions WHERE status = 'pending') AS pending GROUP BY kind, b",
        (PENDING, PENDING_AGE, OLDEST, OVERDUE),
        _pending_samples,
        lambda now: [now - bound * 1000 for bound in PENDING_AGE_BUCKETS],
    )
)
add_gauges(
    GaugeQuery(
        "overdue",
        "SELECT kind AS a, '' AS b, '' AS c, COUNT(*) AS n, MIN(expires_at) AS t,"
        " CAST(NULL AS BIGINT) AS s FROM interactions"
        " WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ? GROUP BY kind",
        (),
        lambda rows, now: [],  # read by the pending part's samples
        lambda now: [now],
    )
)

WAITING = Family(
    "pawflow_deliveries_waiting",
    "gauge",
    "Answered (or timed out) waits not yet handed to their requester, by target kind.",
    ("target",),
)
WAITING_AGE = Family(
    "pawflow_deliveries_oldest_waiting_age_seconds",
    "gauge",
    "How long the oldest wait not yet handed to its requester has waited, by target kind.",
    ("target",),
)


def _waiting_samples(rows: Rows, now: int) -> list[Sample]:
    counts: dict[str, int] = {}
    oldest: dict[str, int] = {}
    for row in rows["waiting"]:
        kind = str(row["a"]).split(":", 1)[0]
        counts[kind] = counts.get(kind, 0) + int(row["n"])
        oldest[kind] = min(oldest.get(kind, now), int(row["t"] or now))
    return [
        sample
        for kind in sorted(counts)
        for sample in (
            Sample(WAITING.name, {"target": kind}, counts[kind]),
            Sample(WAITING_AGE.name, {"target": kind}, _seconds(now, oldest[kind])),
        )
    ]


add_gauges(
    GaugeQuery(
        "waiting",
        # Grouped by an expression, not the column: SQLite would otherwise walk the
        # target index over every parked continuation (seconds at a million) to spare a
        # sort, rather than read the few resolved ones through their partial index.
        "SELECT target || '' AS a, '' AS b, '' AS c, COUNT(*) AS n, MIN(resolved_at) AS t,"
        " CAST(NULL AS BIGINT) AS s FROM continuations WHERE status = 'resolved'"
        " GROUP BY target || ''",
        (WAITING, WAITING_AGE),
        _waiting_samples,
    )
)

TURNS = Family(
    "pawflow_turn_queue",
    "gauge",
    "Chat turns queued or running, by kind (message, wakeup) and status.",
    ("kind", "status"),
)
TURN_AGE = Family(
    "pawflow_turn_queue_oldest_age_seconds",
    "gauge",
    "How long the turn longest due has been waiting to run.",
    ("kind",),
)


TURN_KINDS = ("message", "wakeup")


def _turn_samples(rows: Rows, now: int) -> list[Sample]:
    counts = {(str(row["a"]), str(row["b"])): int(row["n"]) for row in rows["turns"]}
    due = {str(row["a"]): row["t"] for row in rows["turns"] if row["b"] == "queued"}
    kinds = sorted({*TURN_KINDS, *(kind for kind, _ in counts)})
    found = [
        Sample(TURNS.name, {"kind": kind, "status": status}, counts.get((kind, status), 0))
        for kind in kinds
        for status in ("queued", "running")
    ]
    found += [Sample(TURN_AGE.name, {"kind": k}, _seconds(now, due.get(k))) for k in kinds]
    return found


add_gauges(
    GaugeQuery(
        "turns",
        # Two partial indexes, one per status: queued turns by due time, running by lease.
        "SELECT kind AS a, 'queued' AS b, '' AS c, COUNT(*) AS n, MIN(due_at) AS t,"
        " CAST(NULL AS BIGINT) AS s FROM chat_turns WHERE status = 'queued' GROUP BY kind"
        " UNION ALL SELECT kind AS a, 'running' AS b, '' AS c, COUNT(*) AS n,"
        " MIN(started_at) AS t, CAST(NULL AS BIGINT) AS s FROM chat_turns"
        " WHERE status = 'running' GROUP BY kind",
        (TURNS, TURN_AGE),
        _turn_samples,
    )
)

FLOW_QUEUE = Family(
    "pawflow_flow_queue",
    "gauge",
    "FlowFiles of deployed flows by deployment, task and status (queued, running, parked).",
    ("deployment_id", "deployment", "task", "status"),
)


def _flow_samples(rows: Rows, now: int) -> list[Sample]:
    names = {str(row["a"]): str(row["b"]) for row in rows["deployments"]}
    found = []
    for row in rows["flow_queue"]:
        deployment = str(row["a"]).removeprefix("flow:")
        labels = {
            "deployment_id": deployment,
            "deployment": names.get(deployment, ""),
            "task": str(row["b"]),
            "status": str(row["c"]),
        }
        found.append(Sample(FLOW_QUEUE.name, labels, int(row["n"])))
    return found


add_gauges(
    GaugeQuery(
        "flow_queue",
        # The queue holds live FlowFiles only: a finished one's row is deleted.
        "SELECT target AS a, task AS b, status AS c, COUNT(*) AS n, MIN(created_at) AS t,"
        " CAST(NULL AS BIGINT) AS s FROM flow_queue GROUP BY target, task, status",
        (FLOW_QUEUE,),
        _flow_samples,
    )
)
add_gauges(
    GaugeQuery(
        "deployments",
        "SELECT id AS a, name AS b, status AS c, 1 AS n, CAST(NULL AS BIGINT) AS t,"
        " CAST(NULL AS BIGINT) AS s FROM flow_deployments",
        (),
        lambda rows, now: [],  # names for the flow queue's samples
    )
)

LEASES = Family(
    "pawflow_lease_held",
    "gauge",
    "1 for each live lease (a deployment, an agent, a process) and the server holding it.",
    ("lease", "holder"),
)
add_gauges(
    GaugeQuery(
        "leases",
        "SELECT name AS a, owner AS b, '' AS c, 1 AS n, expires_at AS t,"
        " CAST(NULL AS BIGINT) AS s FROM leases WHERE expires_at > ?",
        (LEASES,),
        lambda rows, now: [
            Sample(LEASES.name, {"lease": str(row["a"]), "holder": str(row["b"])}, 1)
            for row in rows["leases"]
        ],
        lambda now: [now],
    )
)

STORE_UP = Family(
    "pawflow_store_up", "gauge", "1 when the last scrape could read the store, else 0."
)
STORE_READ = Family(
    "pawflow_store_read_seconds", "gauge", "How long the last scrape's store read took."
)


def families() -> list[Family]:
    """The families of the gauges every scrape reads from the store."""
    found = [family for query in QUERIES for family in query.families]
    return [*found, STORE_UP, STORE_READ]


def read(tx: Tx, now: datetime, queries: Sequence[GaugeQuery]) -> dict[str, list[Row]]:
    """The rows of every part of ``queries``, read in one statement, by part name."""
    millis = to_millis(now)
    parts: list[str] = []
    params: list[Any] = []
    for index, query in enumerate(queries):
        parts.append(
            f"SELECT '{query.name}' AS series, a, b, c, n, t, s FROM ({query.sql}) AS part{index}"
        )
        params.extend(query.params(millis))
    rows: dict[str, list[Row]] = {query.name: [] for query in queries}
    for row in sql(tx).all(" UNION ALL ".join(parts), params):
        rows[str(row["series"])].append(row)
    return rows


class StoreGauges:
    """The gauges of :data:`QUERIES`, read from ``store`` at most once per ``ttl``."""

    def __init__(self, store: Store, *, ttl: timedelta = DEFAULT_TTL) -> None:
        self.store = store
        self.ttl = ttl
        self.reads = 0
        self._lock = threading.Lock()
        self._cached: tuple[datetime, list[Sample]] | None = None

    def families(self) -> list[Family]:
        return families()

    def samples(self) -> list[Sample]:
        """The gauges' samples, from the store unless read less than ``ttl`` ago."""
        with self._lock:
            now = self.store.now()
            if self._cached is not None and now - self._cached[0] < self.ttl:
                return self._cached[1]
            started = time.perf_counter()
            queries = list(QUERIES)
            try:
                with self.store.transaction(write=False) as tx:
                    rows = read(tx, now, queries)
            except PawFlowError as exc:
                log.warning("metrics: the store could not be read: %s", exc)
                return [Sample(STORE_UP.name, {}, 0)]
            self.reads += 1
            millis = to_millis(now)
            found = [sample for query in queries for sample in query.samples(rows, millis)]
            found.append(Sample(STORE_UP.name, {}, 1))
            found.append(Sample(STORE_READ.name, {}, time.perf_counter() - started))
            self._cached = (now, found)
            return found


def zero_counters() -> None:
    """Make the request counters' series exist, at 0, for every kind (and channel), so a
    rate over them starts from the first request."""
    for kind in KINDS:
        telemetry.REQUESTS_CREATED.inc(0, kind=kind)
        for outcome in ("cancelled", "expired"):
            telemetry.REQUESTS_CLOSED.inc(0, kind=kind, outcome=outcome, via="")
        for via in CHANNELS:
            telemetry.REQUESTS_CLOSED.inc(0, kind=kind, outcome="answered", via=via)


# -- counting after commit -------------------------------------------------------------------

_STAGED = "metrics.counts"


def count(tx: Tx, counter: Counter, **labels: str) -> None:
    """Count one on ``counter`` once ``tx`` commits (not if it or its savepoint rolls back)."""
    staged = tx.local.get(_STAGED)
    if staged is None:
        staged = tx.local[_STAGED] = []
        tx.after_commit(lambda: _apply(staged))
    staged.append((counter, labels))


def _apply(staged: list[tuple[Counter, dict[str, str]]]) -> None:
    for counter, labels in staged:
        counter.inc(**labels)


# -- the request behind a signal ---------------------------------------------------------------


def asked(tx: Tx, signal_id: str | None) -> Row | None:
    """The request whose signal ``signal_id`` is (kind, status, answered_at, trace_context),
    or None when it names no request."""
    family, _, request_id = (signal_id or "").partition(":")
    if family not in REQUEST_SIGNALS or not request_id:
        return None
    return sql(tx).one(
        "SELECT id, kind, status, answered_at, trace_context FROM interactions"
        " WHERE id = ? AND signal_id = ?",
        (request_id, signal_id),
    )


@contextlib.contextmanager
def resuming(
    store: Store, signal_id: str | None, requester: str, **ids: str | None
) -> Iterator[Span]:
    """The span of ``requester`` (``flow``, ``agent``) carrying on after the request behind
    ``signal_id`` left pending: linked to its ask, and timed from the answer."""
    request = None
    if signal_id is not None and signal_id.partition(":")[0] in REQUEST_SIGNALS:
        try:
            with store.transaction(write=False) as tx:
                request = asked(tx, signal_id)
        except PawFlowError as exc:  # the resume goes on; only its span and timing miss out
            log.warning("the request behind %s could not be read: %s", signal_id, exc)
    request_id = None if request is None else str(request["id"])
    attributes = {"pawflow.requester": requester, "pawflow.signal_id": signal_id}
    with telemetry.span("pawflow.resume", attributes, request_id=request_id, **ids) as current:
        if request is not None and request["answered_at"] is not None:
            telemetry.link(current, request["trace_context"])
            outcome = str(request["status"])
            current.set_attribute("pawflow.outcome", outcome)
            waited = _seconds(to_millis(store.now()), request["answered_at"])
            telemetry.RESUME_LATENCY.observe(waited, requester=requester, outcome=outcome)
            log.debug(
                "%s resumed %.3f s after request %s was %s", requester, waited, request_id, outcome
            )
        yield current

"""What PawFlow tells whoever runs it: trace spans, in-process tallies, ids for log lines.

**Spans** go through the OpenTelemetry API only. Until a process configures an SDK
(``pawflow serve`` does, from the ``OTEL_*`` variables: :mod:`pawflow.observability`) each
span is a no-op; without the API installed (the core, without the ``otel`` extra) there is
none at all, and :func:`span` only names the ids for the log lines. The store opens
``pawflow.ask`` when a request is published and keeps its trace context (a W3C
``traceparent``) with the request; ``pawflow.answer`` (and ``.cancel``, ``.expire``),
``pawflow.deliver`` and ``pawflow.resume`` — in whatever process, however much later — are
spans *linked* to that ask.

**Tallies** are counters and histograms kept in this process (a dictionary increment under a
lock): requests created and closed, deliveries, answer → resume latency. Whatever serves
``/metrics`` renders them with the gauges it reads from the store
(:mod:`pawflow.store.engine.metrics`); another module adds its own with :class:`Counter` or
:class:`Histogram` (they register themselves in :data:`INSTRUMENTS`).

**Log ids**: :func:`log_context` names the request, conversation, deployment or turn a
piece of work is about; :class:`JsonFormatter` writes them, and the current trace and span
ids, on every line logged meanwhile (``PAWFLOW_LOG_FORMAT=json``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar, Token
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, cast

try:
    from opentelemetry import trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
except ModuleNotFoundError:  # the core alone: no tracing, and nothing paid for it
    TRACING = False
else:
    TRACING = True
    _TRACER = trace.get_tracer("pawflow")
    _PROPAGATOR = TraceContextTextMapPropagator()

if TYPE_CHECKING:
    from opentelemetry.trace import Span

LOG_IDS = ("request_id", "conversation_id", "deployment_id", "turn_id")
"""The PawFlow ids a log line and a span may carry."""

_IDS: ContextVar[Mapping[str, str] | None] = ContextVar("pawflow_log_ids", default=None)


# -- spans ------------------------------------------------------------------------------------


def span(
    name: str, attributes: Mapping[str, str | int | None] | None = None, **ids: str | None
) -> contextlib.AbstractContextManager[Span]:
    """A span named ``name``, current for the block, and the ``ids`` (of :data:`LOG_IDS`)
    on it (as ``pawflow.<id>``) and on every line logged inside it. Without a configured
    tracer no span is made, nor its attributes, nor a generator: the block gets the one
    non-recording span, and its log lines the ids."""
    if not tracing():
        return _Unrecording(ids)
    return _traced(name, attributes, ids)


@contextlib.contextmanager
def _traced(
    name: str, attributes: Mapping[str, str | int | None] | None, ids: Mapping[str, str | None]
) -> Iterator[Span]:
    given = {key: value for key, value in ids.items() if value}
    attrs: dict[str, str | int] = {f"pawflow.{key}": value for key, value in given.items()}
    attrs.update({key: value for key, value in (attributes or {}).items() if value is not None})
    with _TRACER.start_as_current_span(name, attributes=attrs) as current, log_context(**given):
        yield current


class _Unrecorded:
    """The span :func:`span` yields without a tracer (or without the OpenTelemetry API):
    records nothing."""

    def is_recording(self) -> bool:
        return False

    def set_attribute(self, key: str, value: Any) -> None:
        pass

    def add_link(self, context: Any, attributes: Any = None) -> None:
        pass


_UNRECORDED = _Unrecorded()


def tracing() -> bool:
    """Whether a tracer provider is configured (an SDK's, not the API's stand-in)."""
    if not TRACING:
        return False
    provider = trace.get_tracer_provider()
    return not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def traceparent() -> str | None:
    """The current span's context as a W3C ``traceparent``; None when there is no span."""
    if not TRACING or not trace.get_current_span().get_span_context().is_valid:
        return None
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return carrier.get("traceparent")


def link(current: Span, stored: str | None, relation: str = "ask") -> None:
    """Link ``current`` to the span whose ``traceparent`` was ``stored`` (nothing if None,
    unreadable, or when ``current`` is not recorded)."""
    if not stored or not current.is_recording():
        return
    context = trace.get_current_span(
        _PROPAGATOR.extract({"traceparent": stored})
    ).get_span_context()
    if context.is_valid:
        current.add_link(context, {"pawflow.link": relation})


def recording() -> bool:
    """Whether the current span is recorded (a configured SDK is tracing this work)."""
    return TRACING and trace.get_current_span().is_recording()


# -- log ids ------------------------------------------------------------------------------------


class _LogIds:
    """The block of :func:`log_context`: the ids named for its log lines, if any."""

    __slots__ = ("_ids", "_token")

    def __init__(self, ids: Mapping[str, str | None]) -> None:
        self._ids = ids
        self._token: Token[Mapping[str, str] | None] | None = None

    def __enter__(self) -> None:
        given = {key: value for key, value in self._ids.items() if value}
        if given:
            self._token = _IDS.set({**(_IDS.get() or {}), **given})

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _IDS.reset(self._token)
            self._token = None


class _Unrecording(_LogIds):
    """The block of :func:`span` without a tracer: the ids for its log lines, no span."""

    __slots__ = ()

    def __enter__(self) -> Span:  # type: ignore[override]
        super().__enter__()
        return cast("Span", _UNRECORDED)


def log_context(**ids: str | None) -> contextlib.AbstractContextManager[None]:
    """Name, for every line logged in the block, what it is about (:data:`LOG_IDS`)."""
    return _LogIds(ids)


def log_ids() -> dict[str, str]:
    """The ids of the work at hand: :func:`log_context`'s, and the trace's if one is on."""
    found = dict(_IDS.get() or {})
    if not TRACING:
        return found
    context = trace.get_current_span().get_span_context()
    if context.is_valid:
        found["trace_id"] = trace.format_trace_id(context.trace_id)
        found["span_id"] = trace.format_span_id(context.span_id)
    return found


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the ids of :func:`log_ids`,
    and the traceback if any (secrets are masked before, by the handlers' filters)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            **log_ids(),
        }
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure_logging(level: str = "info", log_format: str = "text") -> None:
    """Log to standard error from ``level`` up: ``text`` (``LEVEL logger: message``) or
    ``json`` (:class:`JsonFormatter`). Once per process; later calls change nothing."""
    handler = logging.StreamHandler()
    handler.setFormatter(
        JsonFormatter()
        if log_format == "json"
        else logging.Formatter("%(levelname)s %(name)s: %(message)s")
    )
    logging.basicConfig(level=level.upper(), handlers=[handler])


# -- tallies ------------------------------------------------------------------------------------

MetricType = Literal["counter", "gauge", "histogram", "gaugehistogram"]


@dataclass(frozen=True)
class Family:
    """A metric as the exposition names it: ``name`` (a counter's without ``_total``)."""

    name: str
    type: MetricType
    help: str
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class Sample:
    """One value of a family (``name`` with its suffix: ``_total``, ``_bucket``, …)."""

    name: str
    labels: Mapping[str, str]
    value: float


INSTRUMENTS: list[Counter | Histogram] = []
"""Every counter and histogram of this process, in the order they were declared."""


class Counter:
    """A counter kept in this process, by label values."""

    def __init__(self, name: str, help: str, labels: Sequence[str] = ()) -> None:
        self.family = Family(name, "counter", help, tuple(labels))
        self._values: dict[tuple[str, ...], float] = {}
        self._lock = threading.Lock()
        INSTRUMENTS.append(self)

    def inc(self, amount: float = 1.0, /, **labels: str) -> None:
        key = tuple(str(labels.get(name, "")) for name in self.family.labels)
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def value(self, **labels: str) -> float:
        key = tuple(str(labels.get(name, "")) for name in self.family.labels)
        with self._lock:
            return self._values.get(key, 0.0)

    def samples(self) -> list[Sample]:
        with self._lock:
            values = dict(self._values)
        name = f"{self.family.name}_total"
        return [
            Sample(name, dict(zip(self.family.labels, key, strict=True)), value)
            for key, value in sorted(values.items())
        ]


class Histogram:
    """A histogram kept in this process, by label values, over fixed ``buckets``."""

    def __init__(
        self, name: str, help: str, labels: Sequence[str], buckets: Sequence[float]
    ) -> None:
        self.family = Family(name, "histogram", help, tuple(labels))
        self.buckets = tuple(sorted(buckets))
        self._values: dict[tuple[str, ...], tuple[list[int], float]] = {}
        self._lock = threading.Lock()
        INSTRUMENTS.append(self)

    def observe(self, value: float, /, **labels: str) -> None:
        key = tuple(str(labels.get(name, "")) for name in self.family.labels)
        with self._lock:
            counts, total = self._values.get(key) or ([0] * (len(self.buckets) + 1), 0.0)
            index = next((i for i, b in enumerate(self.buckets) if value <= b), len(self.buckets))
            counts[index] += 1
            self._values[key] = (counts, total + value)

    def count(self, **labels: str) -> int:
        key = tuple(str(labels.get(name, "")) for name in self.family.labels)
        with self._lock:
            found = self._values.get(key)
            return 0 if found is None else sum(found[0])

    def samples(self) -> list[Sample]:
        with self._lock:
            values = {key: (list(counts), total) for key, (counts, total) in self._values.items()}
        found: list[Sample] = []
        name = self.family.name
        for key, (counts, total) in sorted(values.items()):
            labels = dict(zip(self.family.labels, key, strict=True))
            running = 0
            for bound, count in zip([*self.buckets, float("inf")], counts, strict=True):
                running += count
                le = "+Inf" if bound == float("inf") else _number(bound)
                found.append(Sample(f"{name}_bucket", {**labels, "le": le}, running))
            found.append(Sample(f"{name}_count", labels, running))
            found.append(Sample(f"{name}_sum", labels, total))
        return found


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


LATENCY_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600)

REQUESTS_CREATED = Counter("pawflow_requests_created", "Requests published, by kind.", ("kind",))
REQUESTS_CLOSED = Counter(
    "pawflow_requests_closed",
    "Requests that left pending, by kind, outcome (answered, cancelled, expired) and, for an"
    " answer, where it came from (answered_via).",
    ("kind", "outcome", "via"),
)
DELIVERIES = Counter(
    "pawflow_deliveries",
    "Resolved continuations handed to their requester's handler (result delivered), left"
    " for a retry (result deferred) or held back by a full flow queue (result held), by"
    " target kind (flow, agent, …).",
    ("target", "result"),
)
NOTIFICATIONS = Counter(
    "pawflow_notifications",
    "Copies of requests sent to people by a channel (email, slack, apprise, …): result sent,"
    " retried (an attempt failed; another follows after a backoff) or failed (for good);"
    " and webhook or A2A push deliveries dropped because too many wait (result dropped).",
    ("channel", "result"),
)
RESUME_LATENCY = Histogram(
    "pawflow_resume_latency_seconds",
    "From a request leaving pending (answered, cancelled, expired) to its requester resuming"
    " on it, by requester (flow, agent) and outcome.",
    ("requester", "outcome"),
    LATENCY_BUCKETS,
)

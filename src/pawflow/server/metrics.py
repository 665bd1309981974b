"""``/metrics``: what a PawFlow server tells Prometheus (``PAWFLOW_METRICS=on``).

The exposition joins three sources: the tallies of this process (:mod:`pawflow.telemetry`:
requests created and closed, deliveries, answer → resume latency), the gauges read from the
store in one statement per scrape and kept ``metrics_cache`` seconds
(:class:`pawflow.store.engine.metrics.StoreGauges`), and the process's own (CPU, memory, open
files). Every metric is described in ``docs/operations.md``.

:func:`mount` adds the route to an app made by ``create_app``; with ``metrics_port`` set,
:class:`MetricsServer` serves the same metrics on a port of their own instead. With
``metrics_token`` set, both answer only ``Authorization: Bearer <metrics_token>``. Under
``pawflow serve --workers`` the tallies are those of every worker, added up
(:mod:`pawflow.server.tallies`).
"""

from __future__ import annotations

import hmac
import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from fastapi import FastAPI, Request
from fastapi.responses import Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
    make_wsgi_app,
)
from prometheus_client.exposition import ThreadingWSGIServer
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from pawflow import telemetry
from pawflow.server import tallies
from pawflow.server.settings import ServerSettings
from pawflow.store import CLOCK_FAMILIES, Store, StoreGauges, clock_samples, zero_counters
from pawflow.telemetry import Family, Sample

PATH = "/metrics"
_SUFFIXES = ("_total", "_bucket", "_count", "_sum", "_gcount", "_gsum")
_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="pawflow-metrics"'}


class PawFlowCollector(Collector):
    """The tallies of this process (and of its fellow workers) and the store's gauges, at
    each collection."""

    def __init__(self, gauges: StoreGauges, store: Store) -> None:
        self.gauges = gauges
        self.store = store

    def collect(self) -> Iterator[Metric]:
        counted = tallies.merged()
        for instrument in list(telemetry.INSTRUMENTS):
            yield from _metrics([instrument.family], counted.get(instrument.family.name, []))
        yield from _metrics(self.gauges.families(), self.gauges.samples())
        clock = clock_samples(self.store.clock)
        if clock:  # only where the server keeps the database's time
            yield from _metrics(CLOCK_FAMILIES, clock)


def _metrics(families: Iterable[Family], samples: Iterable[Sample]) -> Iterator[Metric]:
    metrics = {f.name: Metric(f.name, f.help, f.type) for f in families}
    for sample in samples:
        name = sample.name
        metric = metrics.get(name)
        if metric is None:
            base = next((name.removesuffix(s) for s in _SUFFIXES if name.endswith(s)), name)
            metric = metrics[base]
        metric.add_sample(name, dict(sample.labels), sample.value)
    yield from metrics.values()


def registry_for(store: Store, *, cache: float = 5.0) -> CollectorRegistry:
    """A registry of everything ``/metrics`` shows for ``store``."""
    zero_counters()
    registry = CollectorRegistry(auto_describe=False)
    gauges = StoreGauges(store, ttl=timedelta(seconds=cache))
    registry.register(PawFlowCollector(gauges, store))
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    return registry


def authorized(header: str | None, token: str | None) -> bool:
    """Whether an ``Authorization`` header passes (anything does without a token)."""
    if token is None:
        return True
    scheme, _, given = (header or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip(), token)


def mount(app: FastAPI) -> None:
    """Serve ``GET /metrics`` from the app (made by ``create_app``)."""
    settings: ServerSettings = app.state.pawflow.settings
    registry = registry_for(app.state.pawflow.store, cache=settings.metrics_cache)

    @app.get(PATH, include_in_schema=False)
    def metrics(request: Request) -> Response:
        if not authorized(request.headers.get("authorization"), settings.metrics_token):
            return Response("a metrics token is required\n", 401, headers=_CHALLENGE)
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Scrapes are not logged (the app's access log does not see them either)."""


class MetricsServer:
    """The metrics on a port of their own (``metrics_port``), as a service of the server."""

    def __init__(self, store: Store, settings: ServerSettings) -> None:
        assert settings.metrics_port is not None
        self.host = settings.host
        self.port = settings.metrics_port
        self.token = settings.metrics_token
        self.registry = registry_for(store, cache=settings.metrics_cache)
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    def _app(self) -> Callable[..., Iterable[bytes]]:
        exposition = make_wsgi_app(self.registry)

        def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            if not authorized(environ.get("HTTP_AUTHORIZATION"), self.token):
                start_response("401 Unauthorized", list(_CHALLENGE.items()))
                return [b"a metrics token is required\n"]
            return exposition(environ, start_response)  # type: ignore[no-any-return]

        return app

    def start(self) -> None:
        if self._server is not None:
            return
        self._server = make_server(
            self.host, self.port, self._app(), ThreadingWSGIServer, handler_class=_Quiet
        )
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="pawflow-metrics", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

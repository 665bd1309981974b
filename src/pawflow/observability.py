"""What ``pawflow serve`` sets up so that whoever runs it sees what it does: the tracing SDK
and its exporter (from the standard ``OTEL_*`` variables), the HTTP spans of the app, and
the metrics (``PAWFLOW_METRICS=on``). ``docs/operations.md`` tells how to use them.

``pawflow.serve`` loads this module only when it serves, so no other command pays for the
SDK, the FastAPI instrumentation or prometheus-client.

Tracing is on when ``OTEL_TRACES_EXPORTER`` names an exporter (``otlp``, ``console``, …) or
an OTLP endpoint is given (``OTEL_EXPORTER_OTLP_ENDPOINT``,
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``: then ``otlp`` is the default exporter), and not
``OTEL_SDK_DISABLED=true``. The OTLP exporter is the ``otlp`` extra
(``pip install 'pawflow[otlp]'``); it reads its endpoint, headers and protocol from its own
``OTEL_EXPORTER_OTLP_*`` variables. A process that set up a tracer provider itself (a test,
an application embedding PawFlow) keeps it. The SDK and the instrumentation are the ``otel``
extra, loaded only when tracing is on: without it, a server that is asked to trace says which
extra to install, and one that is not serves as ever.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI

from pawflow import extras
from pawflow.errors import ConfigError
from pawflow.loops import Service
from pawflow.redaction import redact
from pawflow.server import metrics, tallies
from pawflow.server.settings import ServerSettings
from pawflow.store import Store

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Span

EXPORTERS = "opentelemetry_traces_exporter"
"""The entry point group where span exporters are found by name (the SDK's own)."""


def _exporter_names(env: Mapping[str, str]) -> list[str]:
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
    )
    names = env.get("OTEL_TRACES_EXPORTER", "otlp" if endpoint else "none")
    return [name.strip() for name in names.split(",") if name.strip() not in ("", "none")]


def _exporter(name: str, env: Mapping[str, str]) -> SpanExporter:
    if name == "otlp":  # as the SDK reads it: the protocol picks the exporter
        protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get(
            "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"
        )
        name = "otlp_proto_http" if protocol.startswith("http") else "otlp_proto_grpc"
    found = entry_points(group=EXPORTERS, name=name)
    if not found:
        extra = " (pip install 'pawflow[otlp]')" if name.startswith("otlp") else ""
        raise ConfigError(f"OTEL_TRACES_EXPORTER: no span exporter named {name!r}{extra}")
    exporter: SpanExporter = next(iter(found)).load()()
    return exporter


def configure_tracing(env: Mapping[str, str] | None = None) -> bool:
    """Set up the SDK's tracer provider from ``env`` (the process's by default); whether
    this process now records spans."""
    env = os.environ if env is None else env
    names = _exporter_names(env)
    if not extras.installed("opentelemetry.sdk"):
        if names:
            extras.require("otel", part=f"tracing (OTEL_TRACES_EXPORTER={','.join(names)})")
        return False
    # The SDK is the `otel` extra: loaded here only (PLC0415), by a server that serves.
    from opentelemetry import trace  # noqa: PLC0415
    from opentelemetry.sdk.resources import Resource  # noqa: PLC0415
    from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
    from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: PLC0415

    if isinstance(trace.get_tracer_provider(), TracerProvider):
        return True  # set up already, by whoever embeds the server
    if not names:
        return False
    named = "OTEL_SERVICE_NAME" in env or "service.name=" in env.get("OTEL_RESOURCE_ATTRIBUTES", "")
    provider = TracerProvider(
        resource=Resource.create({} if named else {"service.name": "pawflow"})
    )
    for name in names:
        provider.add_span_processor(BatchSpanProcessor(_exporter(name, env)))
    trace.set_tracer_provider(provider)
    return True


_URL_ATTRIBUTES = ("http.target", "http.url", "url.full", "url.query")


def _mask_request(span: Span, scope: dict[str, Any]) -> None:
    """An HTTP span never carries a secret of its URL (``/signin?token=…``)."""
    if not span.is_recording():
        return
    attributes = getattr(span, "attributes", None) or {}
    for name in _URL_ATTRIBUTES:
        value = attributes.get(name)
        if isinstance(value, str):
            span.set_attribute(name, redact(value))


def instrument(app: FastAPI) -> None:
    """HTTP spans for every request the app serves (the FastAPI instrumentation)."""
    with extras.needed("otel", part="the HTTP spans of the server"):
        from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor  # noqa: PLC0415

    FastAPIInstrumentor.instrument_app(
        app, server_request_hook=_mask_request, exclude_spans=["receive", "send"]
    )


@dataclass
class Observed:
    """What serving adds to the app: its endpoints and services, and whether it traces."""

    endpoints: list[Callable[[FastAPI], object]] = field(default_factory=list)
    services: list[Service] = field(default_factory=list)
    tracing: bool = False


def setup(
    store: Store,
    settings: ServerSettings,
    env: Mapping[str, str] | None = None,
    *,
    metrics_server: bool = True,
) -> Observed:
    """Tracing from the environment; the metrics as the settings ask (``/metrics`` on the
    app, or a port of their own — which only one process serves: without
    ``metrics_server`` it is left to another, as the workers of ``serve --workers`` leave it
    to their supervisor)."""
    observed = Observed(tracing=configure_tracing(env))
    shared = tallies.shared_dir()
    if settings.metrics and shared is not None:  # a worker: its tallies, for the others
        observed.services.append(tallies.TallyWriter(shared))
    if settings.metrics and settings.metrics_port is not None:
        if metrics_server:
            observed.services.append(metrics.MetricsServer(store, settings))
    elif settings.metrics:
        observed.endpoints.append(metrics.mount)
    return observed

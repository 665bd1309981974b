"""Traces leave ``pawflow serve`` over OTLP as the standard ``OTEL_*`` variables say: a local
collector speaking OTLP/HTTP receives the spans of a request asked through the API."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from pawflow.client import Client
from pawflow.errors import ConfigError
from pawflow.observability import _exporter, _exporter_names
from pawflow.server.testing import free_port
from pawflow.testing import eventually
from tests.served import Served


class Collector:
    """An OTLP/HTTP trace receiver: keeps every span it is sent, with its service name."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, str]] = []
        self.port = free_port()
        received = self.spans

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = ExportTraceServiceRequest.FromString(body)
                for resource in request.resource_spans:
                    service = next(
                        a.value.string_value
                        for a in resource.resource.attributes
                        if a.key == "service.name"
                    )
                    for scope in resource.scope_spans:
                        received.extend((service, span.name) for span in scope.spans)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)

    @contextlib.contextmanager
    def running(self) -> Iterator[Collector]:
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_spans_reach_an_otlp_collector(tmp_path: Path) -> None:
    collector = Collector()
    served = Served(
        f"sqlite:///{tmp_path / 'pawflow.db'}",
        tmp_path,
        env={
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{collector.port}",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_BSP_SCHEDULE_DELAY": "100",
            "OTEL_SERVICE_NAME": "pawflow-test",
        },
    )
    with collector.running():
        served.start()
        try:
            with Client(served.url, served.token("ada")) as client:
                conversation = client.create_conversation().id
                client.request_interaction(conversation, "confirm", "Traced?")
            eventually(lambda: ("pawflow-test", "pawflow.ask") in collector.spans, timeout=30)
            assert any(name.startswith("POST /api/actions") for _, name in collector.spans)
        finally:
            served.kill()


def test_tracing_is_on_only_when_asked() -> None:
    assert _exporter_names({}) == []
    assert _exporter_names({"OTEL_TRACES_EXPORTER": "none"}) == []
    assert _exporter_names({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}) == ["otlp"]
    assert _exporter_names({"OTEL_TRACES_EXPORTER": "console, otlp"}) == ["console", "otlp"]
    assert _exporter_names({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}) == []


def test_an_unknown_exporter_is_named() -> None:
    with pytest.raises(ConfigError, match="no span exporter named 'nonesuch'"):
        _exporter("nonesuch", {})

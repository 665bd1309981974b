"""Tracing that is off costs nothing: no span is made, the log lines keep their ids."""

from __future__ import annotations

import pytest

from pawflow import telemetry

trace = pytest.importorskip("opentelemetry.trace")
sdk = pytest.importorskip("opentelemetry.sdk.trace")


def test_without_a_tracer_no_span_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace, "get_tracer_provider", trace.ProxyTracerProvider)
    assert not telemetry.tracing()
    with telemetry.span("pawflow.answer", {"pawflow.kind": "confirm"}, request_id="r1") as span:
        assert not span.is_recording()
        with telemetry.span("pawflow.ask") as other:
            assert other is span  # the one shared stand-in, not a new object each time
        assert telemetry.log_ids()["request_id"] == "r1"
        assert telemetry.traceparent() is None
    assert "request_id" not in telemetry.log_ids()


def test_with_a_tracer_the_span_is_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    provider = sdk.TracerProvider()
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    monkeypatch.setattr(telemetry, "_TRACER", provider.get_tracer("pawflow"))
    assert telemetry.tracing()
    with telemetry.span("pawflow.answer", request_id="r2") as span:
        assert span.is_recording()
        assert telemetry.traceparent() is not None

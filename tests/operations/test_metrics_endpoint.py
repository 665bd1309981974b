"""``/metrics`` on the app or on a port of its own, behind its token when one is set."""

from __future__ import annotations

from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from pawflow.server import metrics
from pawflow.server.settings import ServerSettings
from pawflow.server.testing import free_port, live_server
from pawflow.store import Question, Store
from pawflow.testing import eventually


def families(text: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    found: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return found


def test_the_app_serves_metrics_behind_their_token(sqlite_store: Store) -> None:
    settings = ServerSettings(metrics=True, metrics_token="m-token-0123456789")
    with live_server(sqlite_store, settings=settings, endpoints=[metrics.mount]) as server:
        conversation = sqlite_store.create_conversation("ada").id
        sqlite_store.ask(Question("ada", conversation, "choice", "Which?", options=["a"]))
        assert httpx.get(f"{server.url}/metrics").status_code == 401
        wrong = {"Authorization": "Bearer m-token-0123456789x"}
        assert httpx.get(f"{server.url}/metrics", headers=wrong).status_code == 401
        right = {"Authorization": "Bearer m-token-0123456789"}
        response = httpx.get(f"{server.url}/metrics", headers=right)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain; version=")
        found = families(response.text)
        assert found["pawflow_requests_pending"][(("kind", "choice"),)] == 1
        assert found["pawflow_requests_created_total"][(("kind", "choice"),)] >= 1
        assert (("kind", "form"),) in found["pawflow_requests_created_total"]  # from 0
        assert "process_cpu_seconds_total" in found
        assert (
            "/metrics"
            not in httpx.get(
                f"{server.url}/openapi.json",
                headers={"Authorization": f"Bearer {server.token('ada')}"},
            ).text
        )


def test_metrics_on_a_port_of_their_own(sqlite_store: Store, tmp_path: Path) -> None:
    settings = ServerSettings(metrics=True, metrics_port=free_port())
    server = metrics.MetricsServer(sqlite_store, settings)
    server.start()
    try:
        url = f"http://127.0.0.1:{settings.metrics_port}/metrics"
        response = eventually(lambda: httpx.get(url))
        assert response.status_code == 200
        assert "pawflow_store_up 1.0" in response.text
    finally:
        server.stop()
    server.stop()  # twice is fine


def test_a_port_of_their_own_asks_for_the_token_too(sqlite_store: Store) -> None:
    settings = ServerSettings(metrics=True, metrics_port=free_port(), metrics_token="t" * 20)
    server = metrics.MetricsServer(sqlite_store, settings)
    server.start()
    try:
        url = f"http://127.0.0.1:{settings.metrics_port}/metrics"
        assert httpx.get(url).status_code == 401
        assert httpx.get(url, headers={"Authorization": "Bearer " + "t" * 20}).status_code == 200
    finally:
        server.stop()

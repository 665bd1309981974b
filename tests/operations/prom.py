"""A real Prometheus (Debian's ``prometheus``) scraping a PawFlow server, and its HTTP API."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from pawflow.server.testing import free_port
from pawflow.testing import eventually
from tests.conftest import IN_CI

METRICS_TOKEN = "scrape-me-0123456789"


def prometheus_binary() -> str:
    found = shutil.which("prometheus")
    if found is None:
        if IN_CI:
            pytest.fail("prometheus is missing (make test installs Debian's prometheus package)")
        pytest.skip("prometheus is missing: apt-get install prometheus (or make test)")
    return found


@contextlib.contextmanager
def prometheus(directory: Path, target: str, interval: str = "250ms") -> Iterator[str]:
    """Prometheus scraping ``target`` every ``interval``, with the metrics token; yields its
    URL."""
    binary = prometheus_binary()
    port = free_port()
    config = directory / "prometheus.yml"
    config.write_text(
        f"global: {{scrape_interval: {interval}, scrape_timeout: {interval}}}\n"
        "scrape_configs:\n"
        "  - job_name: pawflow\n"
        f"    authorization: {{credentials: {METRICS_TOKEN}}}\n"
        f"    static_configs: [{{targets: ['{target}']}}]\n"
    )
    log = (directory / "prometheus.log").open("w")
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={directory / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:

        def ready() -> bool:
            assert process.poll() is None, (directory / "prometheus.log").read_text()
            with contextlib.suppress(httpx.TransportError):
                return httpx.get(f"{url}/-/ready", timeout=2).status_code == 200
            return False

        eventually(ready, timeout=60, interval=0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def query(url: str, promql: str) -> dict[str, float]:
    """An instant query's result: each series' value, by its labels (sorted, as text)."""
    response = httpx.get(f"{url}/api/v1/query", params={"query": promql}, timeout=10)
    response.raise_for_status()
    body = response.json()
    assert body["status"] == "success", body
    found = {}
    for series in body["data"]["result"]:
        labels = ",".join(
            f"{k}={v}" for k, v in sorted(series["metric"].items()) if k not in ("job", "instance")
        )
        found[labels] = float(series["value"][1])
    return found


def becomes(url: str, promql: str, expected: float, timeout: float = 30) -> None:
    """Wait until ``promql`` (one series) reads ``expected`` in Prometheus."""

    def check() -> bool:
        values = query(url, promql)
        return list(values.values()) == [expected]

    try:
        eventually(check, timeout=timeout, interval=0.1)
    except AssertionError:
        raise AssertionError(f"{promql} = {query(url, promql)}, expected {expected}") from None

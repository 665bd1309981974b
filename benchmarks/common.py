"""What every benchmark section shares: the run's settings, the report, timing helpers.

A section prints figures, one a line, each with the floor or the peer it is measured against
in the same run and the ratio between them. Nothing is asserted: the numbers are for people.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from pawflow.testing import POSTGRES_ADMIN_URL, postgres_available, throwaway_postgres

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Run:
    """The settings of one benchmark run, handed to every section."""

    scratch: Path
    quick: bool = False
    peers: bool = True
    repeats: int = 3
    postgres: bool = field(default_factory=postgres_available)
    lines: list[str] = field(default_factory=list)
    results: dict[str, tuple[str, bool | None]] = field(default_factory=dict)
    """What was measured for each row of :data:`goals.GOALS`, and whether it meets it."""

    def n(self, full: int, quick: int) -> int:
        """A count: ``full`` normally, ``quick`` under ``--quick``."""
        return quick if self.quick else full

    def say(self, text: str) -> None:
        self.lines.append(text)
        print(text, flush=True)

    def heading(self, title: str) -> None:
        self.say("")
        self.say(f"## {title}")

    def figure(
        self,
        name: str,
        value: float,
        unit: str,
        *,
        against: str = "",
        ratio: float | None = None,
        goal: str = "",
    ) -> None:
        """One figure; ``against`` names what ``ratio`` compares it with."""
        text = f"{name}: {fmt(value)} {unit}"
        if against:
            text += f"  | {against}"
        if ratio is not None:
            text += f"  | ratio {ratio:.2f}x"
        if goal:
            text += f"  (goal: {goal})"
        self.say(text)

    def row(self, key: str, measured: str, met: bool | None) -> None:
        """Record the figure for one row of the goals' table (printed at the end)."""
        self.results[key] = (measured, met)

    def skip(self, name: str, reason: str) -> None:
        self.say(f"{name}: skipped ({reason})")

    def path(self, stem: str) -> Path:
        """A fresh file name in the run's scratch directory."""
        return self.scratch / f"{stem}-{secrets.token_hex(4)}"


def fmt(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def median_of(repeats: int, measure: Callable[[], float]) -> float:
    """The median of ``repeats`` runs of ``measure``."""
    return statistics.median(measure() for _ in range(repeats))


def percentile(samples: Sequence[float], pct: float) -> float:
    """The ``pct`` percentile (nearest rank) of ``samples``."""
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    rank = max(0, min(len(ordered) - 1, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def ms(seconds: float) -> float:
    return seconds * 1000.0


@contextlib.contextmanager
def postgres_db() -> Iterator[str]:
    """A throwaway PostgreSQL database (dropped afterwards) on the test server."""
    with throwaway_postgres(POSTGRES_ADMIN_URL) as url:
        yield url


def stopwatch() -> Callable[[], float]:
    started = time.perf_counter()
    return lambda: time.perf_counter() - started


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ServerProcess:
    """A ``pawflow serve`` in a child process, on a loopback port."""

    url: str
    host: str
    port: int
    token: str
    process: subprocess.Popen[bytes]


START_WITHIN = 180.0
"""Seconds a server (all its workers) may take to answer ``/healthz`` on a busy machine."""


@contextlib.contextmanager
def pawflow_serve(
    run: Run, db_url: str | None = None, *, workers: int = 1
) -> Iterator[ServerProcess]:
    """Run ``pawflow serve`` (with ``--workers``) on loopback with the rate limit out of the
    way; stop it after."""
    db_url = db_url or f"sqlite:///{run.path('serve')}.db"
    env = dict(os.environ)
    # The benchmark is one user sending as fast as it can: the per-user limit would measure
    # only itself. The sweeper stays out of the way of the figures.
    env.update(
        PAWFLOW_RATE_LIMIT="100000000",
        PAWFLOW_RATE_BURST="10000000",
        PAWFLOW_SWEEP_INTERVAL="3600",
    )
    users = subprocess.run(
        [sys.executable, "-m", "pawflow", "users", "add", "bench", "--db", db_url],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    token = users.stdout.strip().splitlines()[-1].strip()
    port = free_port()
    log = (run.scratch / f"serve-{port}.log").open("wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pawflow",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--db",
            db_url,
            "--log-level",
            "warning",
            "--workers",
            str(workers),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_WITHIN
        while True:
            if process.poll() is not None:
                raise SystemExit(f"pawflow serve exited early; see {log.name}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise SystemExit(f"pawflow serve did not start within {START_WITHIN:.0f} s")
            time.sleep(0.1)
        yield ServerProcess(url, "127.0.0.1", port, token, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()

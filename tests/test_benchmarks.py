"""The benchmark harness keeps running: a quick pass over its cheap sections names each figure.

Only the names are checked, never a number: timings belong to ``make bench``, not to tests.
"""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require_postgres

ROOT = Path(__file__).parents[1]
RUN = ROOT / "benchmarks" / "run.py"


LIMIT = 300
"""A hang guard for a machine busy many times over (a quick pass takes seconds alone)."""


def bench(*args: str) -> str:
    # A session of its own: a run that overstays is stopped with the servers it started.
    with subprocess.Popen(
        [sys.executable, str(RUN), "--quick", "--no-peers", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        start_new_session=True,
    ) as process:
        try:
            out, err = process.communicate(timeout=LIMIT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise
    assert process.returncode == 0, out + err
    return out


@pytest.mark.timeout(LIMIT + 20)
def test_the_quick_run_names_every_figure_of_its_sections() -> None:
    out = bench("--only", "sqlite,footprint,costs")
    for figure in (
        "sqlite raw floor (2 commits/cycle, same pragmas):",
        "sqlite pawflow cycle:",
        "sqlite bytes per parked item:",
        "sqlite per cycle:",
        "sqlite rows written per cycle, by table:",
        "sqlite cycle time by where it is spent",
    ):
        assert figure in out
    assert "ratio" in out
    assert "SSE fan-out" not in out  # a section not asked for does not run
    # The run ends with every row of the goals: measured here, or the section to run.
    rows = goal_rows(out)
    assert len(rows) == 23  # one per goal in benchmarks/goals.py
    floor = rows["SQLite cycle vs the raw 2-commit floor"]
    assert "cycles/s" in floor and "| >= 0.33x |" in floor
    assert "KB vs the floor's" in rows["SQLite bytes written per cycle"]
    assert "not run (--only sse)" in rows["SSE, one event -> 1,000 open streams"]
    http = rows["HTTP actions, 64 clients"]
    assert "not run (--only http)" in http and "p99 < 100 ms" in http
    for what, section in (
        ("durable flow queues (SQLite) vs in-memory", "flows"),
        ("PostgreSQL sweep pass, 1M parked vs 1k", "sweeper"),
        ("SQLite /metrics scrape, 1M parked + 1M answered", "metrics"),
    ):
        assert f"not run (--only {section})" in rows[what]


def goal_rows(out: str) -> dict[str, str]:
    """The rows of the goals' table that ends a run, by their first column."""
    table = out.split("Each row of the goals, beside what this run measured", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("| ")][1:]
    return {row.split(" | ")[0].removeprefix("| "): row for row in rows}


@pytest.mark.slow
@pytest.mark.timeout(LIMIT + 20)
def test_the_flow_sweeper_and_metrics_rows_are_measured_on_both_backends() -> None:
    require_postgres()
    out = bench("--only", "flows,sweeper,metrics")
    for figure in (
        "three-task flow, durable queues (SQLite):",
        "three-task flow, durable queues (PostgreSQL):",
        "ratio durable (PostgreSQL) : in-memory",
        "sqlite sweep pass, 10,000 parked:",
        "postgres sweep pass, 10,000 parked:",
        "sqlite scrape, 10,000 parked and 10,000 answered:",
        "postgres scrape, 10,000 parked and 10,000 answered:",
    ):
        assert figure in out, figure
    rows = goal_rows(out)
    for backend in ("SQLite", "PostgreSQL"):
        flows = rows[f"durable flow queues ({backend}) vs in-memory"]
        assert "x (" in flows and "FlowFiles/s" in flows and "| >= 0.6x |" in flows
        # A quick run stops at 10k: it shows the figures, and leaves the verdict to 1M.
        sweep = rows[f"{backend} sweep pass, 1M parked vs 1k"]
        assert "at 10,000:" in sweep and sweep.endswith("| - |"), sweep
        scrape = rows[f"{backend} /metrics scrape, 1M parked + 1M answered"]
        assert "ms with 10,000 parked" in scrape and "| <= 50 ms |" in scrape, scrape


@pytest.mark.slow
@pytest.mark.timeout(LIMIT + 20)
def test_the_start_up_rows_are_printed_beside_their_goals() -> None:
    out = bench("--only", "startup")
    for row in (
        "pawflow --help:",
        "pawflow inbox (running server):",
        "pawflow answer (running server):",
        "pawflow serve -> /healthz 200:",
    ):
        line = next(line for line in out.splitlines() if line.startswith(row))
        assert "(goal: <= " in line and "CPU" in line, line
    assert "by import pawflow.cli" in out


def test_an_unknown_section_is_refused_with_the_known_ones() -> None:
    done = subprocess.run(
        [sys.executable, str(RUN), "--only", "nonsense"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 2
    assert "unknown section(s) nonsense" in done.stderr
    assert "sqlite, postgres, latency" in done.stderr


def test_an_ab_run_reads_each_cycle_figure_and_its_share_of_the_floor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    ab = importlib.import_module("ab")  # the harness's module, run as a script's neighbour

    printed = "\n".join(
        [
            "## SQLite: ask → park → answer → resume, one thread, public API",
            "sqlite raw floor (2 commits/cycle, same pragmas): 8,000 cycles/s  | N=100",
            "sqlite pawflow cycle: 400 cycles/s  | floor 8,000  | ratio 0.05x  (goal: …)",
            "postgres pawflow cycle, 8 threads: 120 cycles/s  | one thread 60",
            "sqlite bytes per parked item: 600 B",
        ]
    )
    assert ab.figures(printed) == {
        "sqlite raw floor (2 commits/cycle, same pragmas)": 8000.0,
        "sqlite pawflow cycle": 400.0,
        "sqlite pawflow cycle ÷ floor": 0.05,
        "postgres pawflow cycle, 8 threads": 120.0,
    }

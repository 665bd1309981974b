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
    table = out.split("Each row of the goals, beside what this run measured", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == 17  # one per goal in benchmarks/goals.py
    floor = next(row for row in rows if row.startswith("| SQLite cycle vs the raw"))
    assert "cycles/s" in floor and "| >= 0.33x |" in floor
    written = next(row for row in rows if row.startswith("| SQLite bytes written"))
    assert "KB vs the floor's" in written
    sse = next(row for row in rows if row.startswith("| SSE"))
    assert "not run (--only sse)" in sse


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

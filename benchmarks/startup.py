"""Start-up: what a person waits for before a command answers or the server serves.

Each row is the median of several runs of a fresh process, timed from its start to its end
(or, for ``pawflow serve``, to the first ``/healthz`` answered 200), beside its goal:

- ``pawflow --help``;
- ``pawflow inbox`` and ``pawflow answer`` against a running server (a real ``pawflow
  serve`` on loopback, its SQLite store holding pending requests for the token's user);
- ``pawflow serve`` → ``/healthz`` 200 on a store that already exists (as on every start but
  the first), polled every 5 ms.

Beside each wall-clock median is the CPU time the command's own process spent (user +
system, median): on a machine busy with other work the wall clock stretches, the CPU time
much less. Also printed: how many modules ``import pawflow.cli`` and ``import pawflow.serve``
load, and how long importing ``pawflow.serve`` takes alone (the part of the server's start
that is loading code rather than doing work).
"""

from __future__ import annotations

import contextlib
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx
from common import Run, free_port, pawflow_serve

from pawflow import Question, open_store

GOALS = {"help": 0.3, "inbox": 0.5, "answer": 0.5, "serve": 1.5}

Sample = tuple[float, float]
"""(wall-clock seconds, CPU seconds of the command's process)."""


def _command() -> list[str]:
    """The ``pawflow`` a person runs: the console script beside this interpreter."""
    script = Path(sys.executable).parent / "pawflow"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "pawflow"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _process_cpu(pid: int) -> float:
    """CPU seconds a running process has spent so far (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _timed(argv: Sequence[str], env: dict[str, str]) -> Sample:
    cpu = _children_cpu()
    started = time.perf_counter()
    subprocess.run(argv, env=env, check=True, capture_output=True, timeout=120)
    return time.perf_counter() - started, _children_cpu() - cpu


def _samples(repeats: int, measure: Callable[[], Sample], *, warm: bool = True) -> list[Sample]:
    if warm:
        measure()  # a first run warms the disk cache, as a person's second command finds it
    return [measure() for _ in range(repeats)]


def _row(run: Run, name: str, samples: list[Sample], key: str) -> None:
    goal = GOALS[key]
    walls = [wall for wall, _ in samples]
    median = statistics.median(walls)
    cpu = statistics.median(cpu for _, cpu in samples)
    run.figure(
        name,
        median,
        "s",
        against=f"median of {len(walls)}, min {min(walls):.2f} s, max {max(walls):.2f} s;"
        f" CPU {cpu:.2f} s",
        goal=f"<= {goal} s, {'met' if median <= goal else 'missed'}",
    )
    run.row(key, f"{median:.2f} s (CPU {cpu:.2f} s)", median <= goal)


def _modules(statement: str) -> tuple[int, float]:
    """(modules loaded, seconds) for ``statement`` in a fresh interpreter."""
    probe = (
        "import sys, time\n"
        "started = time.perf_counter()\n"
        f"{statement}\n"
        "print(len(sys.modules), time.perf_counter() - started)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    count, seconds = done.stdout.split()
    return int(count), float(seconds)


def _serve_to_healthz(db_url: str, env: dict[str, str]) -> Sample:
    port = free_port()
    argv = [*_command(), "serve", "--port", str(port), "--db", db_url, "--log-level", "warning"]
    started = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = started + 60
        while True:
            if process.poll() is not None:
                raise SystemExit("pawflow serve exited before answering /healthz")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    return time.perf_counter() - started, _process_cpu(process.pid)
            if time.perf_counter() > deadline:
                raise SystemExit("pawflow serve did not answer /healthz within 60 s")
            time.sleep(0.005)
    finally:
        process.terminate()
        process.wait(timeout=30)


def _ask(db_url: str, user: str, count: int) -> list[str]:
    """``count`` pending confirm requests for ``user``, asked straight into the store."""
    with open_store(db_url) as store:
        conversation = store.create_conversation(user, "start-up").id
        return [
            store.ask(Question(user, conversation, "confirm", f"Go ahead with {n}?")).interaction.id
            for n in range(count)
        ]


def section(run: Run) -> None:
    run.heading("Start-up: commands and the server")
    repeats = run.n(7, 1)
    warm = not run.quick  # a smoke run's one sample may find a cold disk cache
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    cli_modules, _ = _modules("import pawflow.cli")
    serve_modules, serve_import = _modules("import pawflow.serve")
    run.say(
        f"modules loaded: {cli_modules} by import pawflow.cli, {serve_modules} by import"
        f" pawflow.serve (load average {load})"
    )
    help_ = _samples(repeats, lambda: _timed([*_command(), "--help"], env), warm=warm)
    _row(run, "pawflow --help", help_, "help")

    db_url = f"sqlite:///{run.path('startup')}.db"
    with pawflow_serve(run, db_url) as server:
        pending = _ask(db_url, "bench", repeats + 1)
        client_env = {**env, "PAWFLOW_SERVER": server.url, "PAWFLOW_TOKEN": server.token}
        inbox = _samples(repeats, lambda: _timed([*_command(), "inbox"], client_env), warm=warm)
        _row(run, "pawflow inbox (running server)", inbox, "inbox")

        def answer() -> Sample:
            return _timed([*_command(), "answer", pending.pop(), "yes"], client_env)

        _row(run, "pawflow answer (running server)", _samples(repeats, answer, warm=warm), "answer")

    run.figure("import pawflow.serve alone", serve_import, "s", against="one fresh interpreter")
    serve = _samples(repeats, lambda: _serve_to_healthz(db_url, env), warm=warm)
    _row(run, "pawflow serve -> /healthz 200", serve, "serve")

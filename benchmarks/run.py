"""Benchmarks, each figure printed beside the floor or the peers measured in the same run.

Sections (``--only NAME`` runs some of them, in this order):

- sqlite: ask → park → answer → resume cycles/s on SQLite vs the raw 2-commit floor, peers;
- postgres: the same on PostgreSQL vs its raw floor, and with 8 threads vs one, peers;
- latency: answer → resume p50, in one process and across processes, on both backends;
- footprint: bytes of store per asked-and-parked item vs LangGraph's parked thread;
- sse: 1,000 event streams on a real ``pawflow serve``, one event → every stream;
- http: actions requests/s and p50/p99 at 1, 64 and 256 clients on a real server;
- sweeper: a sweeper pass with 1k, 100k and 1M parked continuations, on both backends;
- costs: statements, commits and bytes written per cycle, and a profile of the SQLite cycle;
- flows: FlowFiles/s through a three-task flow, durable queues (SQLite, PostgreSQL) vs
  in-memory ones;
- metrics: a ``/metrics`` scrape with 1,000 and with 1,000,000 continuations parked and as
  many answered requests stored, on both backends;
- startup: ``pawflow --help``, ``inbox`` and ``answer`` against a running server, and
  ``pawflow serve`` until ``/healthz`` answers, each a median of fresh processes;
- deliveries: a user's notification latency while another user's six slow receivers and
  one trickling receiver are busy (p99, goal at most 2 s); then ask -> first channel attempt
  with the dispatcher between passes, on both backends (p50, goal at most 100 ms);
- outage: a PostgreSQL cluster of the run's own stopped and restarted: how soon calls fail,
  how soon they work again, how soon a wake-up from another process arrives after a restart.

Run with ``make bench`` (``--quick`` for small counts). ``--ab REF`` measures the cycle
sections (sqlite, postgres; those of ``--only``) alternately on this tree and on the git ref
``REF``, checked out in a temporary worktree, ``--repeats`` rounds, and prints each cycle
figure of both with their ratio (``make bench BENCH_ARGS="--quick --ab main"``). Nothing
here is asserted: the numbers are for people to read. PostgreSQL sections use throwaway
databases on 127.0.0.1:5432.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import platform
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import ab
import goals
from common import Run

SECTIONS: dict[str, str] = {
    "sqlite": "cycles.sqlite_section",
    "postgres": "cycles.postgres_section",
    "latency": "latency.section",
    "footprint": "footprint.section",
    "sse": "sse.section",
    "http": "actions.section",
    "sweeper": "sweeper.section",
    "costs": "costs.section",
    "flows": "flow_queues.section",
    "metrics": "metrics.section",
    "startup": "startup.section",
    "deliveries": "deliveries.section",
    "outage": "outage.section",
}
"""Each section's function, as ``module.function``: a module is loaded when its section runs,
so a run of some sections (``--ab`` on an older tree) loads only what they use."""


def _section(name: str) -> Callable[[Run], None]:
    module, function = SECTIONS[name].split(".")
    found: Callable[[Run], None] = getattr(importlib.import_module(module), function)
    return found


def _names(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = sorted(set(names) - set(SECTIONS))
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown section(s) {', '.join(unknown) or '(none)'};"
            f" choose from {', '.join(SECTIONS)}"
        )
    return names


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--only", type=_names, default=list(SECTIONS), help="comma-separated section names"
    )
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run")
    parser.add_argument("--no-peers", action="store_true", help="leave LangGraph and DBOS out")
    parser.add_argument("--repeats", type=int, default=3, help="runs per cycle figure (median)")
    parser.add_argument(
        "--ab", metavar="REF", help="cycle rows alternating between this tree and a git ref"
    )
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    logging.disable(logging.INFO)  # peers log every launch and shutdown
    with tempfile.TemporaryDirectory(prefix="pawflow-bench-") as scratch:
        run = Run(
            Path(scratch),
            quick=args.quick,
            peers=not args.no_peers,
            repeats=1 if args.quick else args.repeats,
        )
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        run.say(
            f"# PawFlow benchmarks, {stamp}, Python {platform.python_version()},"
            f" {'quick' if args.quick else 'full'} run"
            f"{'' if run.postgres else ', no PostgreSQL reachable'}"
        )
        if args.ab:
            ab.compare(run, args.ab, args.only, args.repeats)
            return
        failed = []
        for name in SECTIONS:
            if name in args.only:
                started = time.perf_counter()
                try:
                    _section(name)(run)
                except (Exception, SystemExit) as exc:  # the other sections still run
                    failed.append(name)
                    run.say(f"{name} section FAILED: {type(exc).__name__}: {exc}")
                run.say(f"({name}: {time.perf_counter() - started:.0f} s)")
        run.heading("Each row of the goals, beside what this run measured")
        for line in goals.table(run.results):
            run.say(line)
        if failed:
            raise SystemExit(f"failed sections: {', '.join(failed)}")


if __name__ == "__main__":
    main()

"""The tallies of several worker processes, added up for ``/metrics``.

A counter or histogram of :mod:`pawflow.telemetry` counts in the process that saw the event.
Under ``pawflow serve --workers N`` a scrape reaches one worker (or the supervisor, on the
metrics port), so each process's own tallies would make every counter jump from scrape to
scrape. The supervisor names a directory in ``PAWFLOW_WORKER_TALLIES``; each worker writes
its tallies there every second (:class:`TallyWriter`, one JSON file per process, replaced
atomically), and :func:`merged` adds up every file with this process's live tallies. A
worker that died keeps its last file: its counts stay in the sum, which never goes back.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path

from pawflow import telemetry
from pawflow.loops import Loop
from pawflow.telemetry import Sample

log = logging.getLogger("pawflow.server.tallies")

SHARED_ENV = "PAWFLOW_WORKER_TALLIES"
INTERVAL = 1.0

Key = tuple[str, tuple[tuple[str, str], ...]]


def shared_dir() -> Path | None:
    """The directory the workers of one supervisor share their tallies in; None alone."""
    named = os.environ.get(SHARED_ENV, "").strip()
    return Path(named) if named else None


def _own() -> dict[str, list[Sample]]:
    return {i.family.name: i.samples() for i in list(telemetry.INSTRUMENTS)}


def write(directory: Path) -> None:
    """This process's tallies, as ``<pid>.json`` in ``directory``."""
    data = {
        family: [[s.name, dict(s.labels), s.value] for s in samples]
        for family, samples in _own().items()
    }
    target = directory / f"{os.getpid()}.json"
    scratch = directory / f".{os.getpid()}.json.tmp"
    scratch.write_text(json.dumps(data), "utf-8")
    scratch.replace(target)


def _read(path: Path) -> dict[str, list[Sample]]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):  # gone, or not ours
        return {}
    return {
        str(family): [
            Sample(str(n), {str(k): str(v) for k, v in labels.items()}, float(value))
            for n, labels, value in samples
        ]
        for family, samples in data.items()
    }


def merged(directory: Path | None = None) -> dict[str, list[Sample]]:
    """Every family's samples: this process's, plus those of the other processes' files in
    ``directory`` (by default :func:`shared_dir`; none: this process's alone)."""
    own = _own()
    directory = directory if directory is not None else shared_dir()
    if directory is None:
        return own
    others = [
        _read(path) for path in sorted(directory.glob("*.json")) if path.stem != str(os.getpid())
    ]
    return {
        family: _add([samples, *(o.get(family, []) for o in others)])
        for family, samples in own.items()
    }


def _add(lists: Iterable[list[Sample]]) -> list[Sample]:
    totals: dict[Key, Sample] = {}
    for samples in lists:
        for s in samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            found = totals.get(key)
            totals[key] = s if found is None else Sample(s.name, s.labels, found.value + s.value)
    return list(totals.values())


class TallyWriter:
    """A worker's service: writes its tallies to ``directory`` every second, and at stop."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.loop = Loop("tallies", self.step, interval=INTERVAL)

    def step(self) -> None:
        write(self.directory)

    def start(self) -> None:
        self.loop.start()

    def stop(self) -> None:
        self.loop.stop()
        try:
            write(self.directory)
        except OSError:
            log.warning("could not write this process's tallies", exc_info=True)

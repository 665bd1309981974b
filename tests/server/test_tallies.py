"""The tallies of the workers of one ``serve --workers``, added up: what each scrape shows."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pawflow import telemetry
from pawflow.server import tallies


def _value(samples: list[telemetry.Sample], name: str, **labels: str) -> float:
    return next(s.value for s in samples if s.name == name and dict(s.labels) == labels)


def test_the_other_workers_files_add_to_this_process_live_tallies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(tallies.SHARED_ENV, raising=False)
    counter = telemetry.REQUESTS_CREATED
    own = counter.value(kind="form")
    counter.inc(2, kind="form")
    other = {
        counter.family.name: [["pawflow_requests_created_total", {"kind": "form"}, 5.0]],
        telemetry.RESUME_LATENCY.family.name: [
            [
                "pawflow_resume_latency_seconds_count",
                {"requester": "flow", "outcome": "answered"},
                3.0,
            ]
        ],
    }
    (tmp_path / "999999999.json").write_text(json.dumps(other))
    (tmp_path / "bad.json").write_text("not json")  # a torn or foreign file counts nothing
    tallies.write(tmp_path)  # this process's own file is not added twice
    assert (tmp_path / f"{os.getpid()}.json").is_file()
    added = tallies.merged(tmp_path)
    created = added[counter.family.name]
    assert _value(created, "pawflow_requests_created_total", kind="form") == own + 2 + 5
    latency = added[telemetry.RESUME_LATENCY.family.name]
    count = _value(
        latency, "pawflow_resume_latency_seconds_count", requester="flow", outcome="answered"
    )
    assert count >= 3
    alone = tallies.merged()  # no shared folder: this process's own
    assert (
        _value(alone[counter.family.name], "pawflow_requests_created_total", kind="form") == own + 2
    )

"""What the bridges' cross-process tests share: a real ``pawflow serve`` on the store the
framework's processes use, a person who answers through it (``pawflow answer`` or the HTTP
API), and the framework's processes, started and killed as a crash would."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from pawflow import open_store
from pawflow.server.credentials import issue_token
from pawflow.testing import eventually
from tests.served import Served

ROOT = Path(__file__).parents[2]


class Person:
    """``ana`` at a real ``pawflow serve``: her conversation, her pending requests, her
    answers."""

    def __init__(self, served: Served, token: str) -> None:
        self.served = served
        self.token = token
        self.api = httpx.Client(
            base_url=served.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )
        made = self.api.post("/api/actions/create_conversation", json={}).json()
        self.conversation_id: str = made["conversation"]["id"]
        self.processes: list[subprocess.Popen[str]] = []

    def start(self, command: Sequence[str]) -> subprocess.Popen[str]:
        """A framework's process, killed at the end whatever happens."""
        process = subprocess.Popen(
            list(command), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.processes.append(process)
        return process

    def pending(self) -> list[dict[str, Any]]:
        listed = self.api.post("/api/actions/list_interactions", json={"status": "pending"})
        requests: list[dict[str, Any]] = listed.json()["interactions"]
        return requests

    def waiting(self, word: str, timeout: float = 180) -> dict[str, Any]:
        """The one pending request whose message holds ``word``, once it is asked (asked
        every 0.1 s: each look is a request the server answers while the framework's
        processes load)."""
        found = eventually(
            lambda: [r for r in self.pending() if word in r["message"]],
            timeout=timeout,
            interval=0.1,
        )
        [request] = found
        return request

    def answer_cli(self, request_id: str, *words: str) -> None:
        """Answer with ``pawflow answer`` (a yes, ``--edit JSON``, ``--reject REASON``…)."""
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pawflow",
                "answer",
                request_id,
                *words,
                "--server",
                self.served.url,
            ],
            env={**os.environ, "PAWFLOW_TOKEN": self.token},
            cwd=self.served.directory,
            check=True,
            capture_output=True,
            timeout=60,
        )

    def answer_http(self, request_id: str, answer: Any) -> None:
        done = self.api.post(
            "/api/actions/respond_interaction", json={"request_id": request_id, "answer": answer}
        )
        assert done.status_code == 200, done.text


@contextmanager
def person_at_server(db_url: str, directory: Path) -> Iterator[Person]:
    with open_store(db_url) as opened:
        token = issue_token(opened, "ana")
    served = Served(db_url, directory)
    served.start()
    person: Person | None = None
    try:
        person = Person(served, token)
        yield person
    finally:
        for process in person.processes if person is not None else []:
            if process.poll() is None:
                process.kill()
            if process.stdout is not None and not process.stdout.closed:
                process.communicate(timeout=30)
        if person is not None:
            person.api.close()
        served.kill()


def app(module: str, command: str, *args: str, python: str = sys.executable) -> list[str]:
    return [python, "-m", module, command, *args]


def crash(process: subprocess.Popen[str]) -> None:
    """Kill a framework's process as a crash would (nothing of it runs on)."""
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)


def finish(process: subprocess.Popen[str], timeout: float = 180) -> Any:
    """What a framework's process printed as JSON once it ended by itself."""
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])  # the last line: a framework may print

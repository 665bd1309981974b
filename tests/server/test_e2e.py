"""End to end with real ``pawflow serve`` processes: sign-in on a fresh database, a restart
between ask and answer, events across processes, and the terminal client."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from pawflow.cli import app as cli
from pawflow.server.testing import free_port
from pawflow.store import Store, open_store
from pawflow.testing import eventually, throwaway_postgres
from tests.server.sse import stream, take, until

pytestmark = pytest.mark.slow


class Served:
    def __init__(self, db: str, tmp: Path) -> None:
        self.db = db
        self.tmp = tmp
        self.process: subprocess.Popen[str] | None = None
        self.url = ""
        self.output: list[str] = []

    def start(self) -> None:
        for _ in range(3):  # a free port can be taken between finding and binding it
            if self._start_once():
                return
        raise AssertionError(f"pawflow serve did not start:\n{self.read_all()}")

    def _start_once(self) -> bool:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "PAWFLOW_SWEEP_INTERVAL": "3600", "PAWFLOW_LOG_LEVEL": "warning"}
        process = self.process = subprocess.Popen(
            [sys.executable, "-m", "pawflow", "serve", "--port", str(port), "--db", self.db],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=self.tmp,
            env=env,
        )

        def settled() -> bool:
            if process.poll() is not None:
                return True
            with contextlib.suppress(httpx.TransportError):
                return httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200
            return False

        eventually(settled, timeout=30, interval=0.05)
        if process.poll() is None:
            return True
        self.output.append(process.communicate()[0])
        self.process = None
        return False

    def read_all(self) -> str:
        return "".join(self.output)

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        out, _ = self.process.communicate(timeout=30)
        self.output.append(out)
        assert self.process.returncode in (0, -15), self.read_all()
        self.process = None


@pytest.fixture
def db_url(backend: str, tmp_path: Path) -> Iterator[str]:
    if backend == "postgres":
        with throwaway_postgres() as url:
            yield url
    else:
        yield f"sqlite:///{tmp_path / 'served.db'}"


@pytest.fixture
def served(db_url: str, tmp_path: Path) -> Iterator[Served]:
    server = Served(db_url, tmp_path)
    try:
        yield server
    finally:
        if server.process is not None:
            server.process.kill()
            server.process.communicate(timeout=30)


def add_user(db: str, name: str) -> str:
    result = CliRunner().invoke(cli, ["users", "add", name, "--db", db])
    assert result.exit_code == 0, result.output
    return result.output.strip().splitlines()[-1]


def test_a_restart_between_ask_and_answer_loses_nothing(served: Served) -> None:
    served.start()
    token = add_user(served.db, "ann")
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=served.url, headers=auth, timeout=30) as api:
        conversation = api.post("/api/actions/create_conversation", json={}).json()
        conversation_id = conversation["conversation"]["id"]
        with stream(served.url, token) as events:
            next(events)  # ready
            asked = api.post(
                "/api/actions/request_interaction",
                json={"conversation_id": conversation_id, "kind": "confirm", "message": "Ship?"},
            ).json()["interaction"]
            seen = until(events, "confirmation_request")
    last_seen = seen[-1].id
    store: Store = open_store(served.db)
    try:
        parked = store.park("e2e:ship", signal_id=asked["signal_id"], timeout="1d")
        served.stop()
        served.start()
        with httpx.Client(base_url=served.url, headers=auth, timeout=30) as api:
            answered = api.post(
                "/api/actions/respond_interaction",
                json={"request_id": asked["id"], "answer": "yes"},
            )
            assert answered.status_code == 200, answered.text
        with stream(served.url, token, last_event_id=last_seen) as events:
            replayed = take(events, 2)
        assert [(e.type, e.data["id"], e.data["status"]) for e in replayed] == [
            ("interaction_answered", asked["id"], "answered"),
            ("confirmation_answered", asked["id"], "answered"),
        ]
        resumed = store.get_continuation(parked.id)
        assert resumed.status == "resolved" and resumed.outcome == "signaled"
        assert resumed.value == {"status": "answered", "answer": True}

        # Another process writes; the server's stream delivers it.
        with stream(served.url, token, last_event_id=replayed[-1].id) as events:
            with store.unit() as u:
                u.messages.notify_user("ann", "from another process")
            assert next(events).data["message"] == "from another process"
    finally:
        store.close()
        served.stop()


@contextlib.contextmanager
def sqlite_served(tmp_path: Path) -> Iterator[Served]:
    served = Served(f"sqlite:///{tmp_path / 'own.db'}", tmp_path)
    try:
        yield served
    finally:
        if served.process is not None:
            served.process.kill()
            served.process.communicate(timeout=30)


def test_a_fresh_server_prints_a_working_sign_in_link(tmp_path: Path) -> None:
    with sqlite_served(tmp_path) as served:
        _fresh_sign_in(served)


def _fresh_sign_in(served: Served) -> None:
    served.start()
    served.stop()
    lines = served.read_all().splitlines()
    link = next(line.strip() for line in lines if "/signin?token=" in line)
    served.start()  # the link is good across a restart, once
    secret = link.split("token=", 1)[1]
    with httpx.Client(base_url=served.url, timeout=30) as browser:
        done = browser.post("/signin", data={"token": secret}, headers={"Origin": served.url})
        assert done.status_code == 303
        assert browser.get("/api/session").json()["user"] == "local"
    served.stop()
    assert "pawflow users signin-link" in served.read_all()  # not fresh any more: no new link


def test_inbox_and_answer_against_a_real_server(tmp_path: Path) -> None:
    with sqlite_served(tmp_path) as served:
        _inbox_and_answer(served, tmp_path)


def _inbox_and_answer(served: Served, tmp_path: Path) -> None:
    served.start()
    token = add_user(served.db, "bo")
    env = {"PAWFLOW_SERVER": served.url, "PAWFLOW_TOKEN": token}
    runner = CliRunner()
    with httpx.Client(
        base_url=served.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
    ) as api:

        def ask(kind: str, **extra: object) -> str:
            body = {"conversation_id": conversation, "kind": kind, "message": f"{kind}?", **extra}
            found = api.post("/api/actions/request_interaction", json=body)
            assert found.status_code == 200, found.text
            return str(found.json()["interaction"]["id"])

        conversation = api.post("/api/actions/create_conversation", json={"title": "Ops"}).json()[
            "conversation"
        ]["id"]
        empty = runner.invoke(cli, ["inbox"], env=env)
        assert empty.exit_code == 0 and "Nothing is waiting" in empty.output
        confirm = ask("confirm")
        choice = ask("choice", options=["red", {"value": "g", "label": "Green"}])
        multi = ask("multi", options=["a", "b", "c"])
        form = ask(
            "form",
            response_schema={
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "required": ["n"],
            },
        )
        upload = ask("file")

        listing = runner.invoke(cli, ["inbox"], env=env)
        assert listing.exit_code == 0, listing.output
        for request_id in (confirm, choice, multi, form, upload):
            assert request_id in listing.output
        assert "Ops" in listing.output

        refused = runner.invoke(cli, ["answer", confirm, "maybe"], env=env)
        assert refused.exit_code == 1
        assert "Refused" in refused.output and "expected yes or no" in refused.output
        bad_form = runner.invoke(cli, ["answer", form, '{"n": "x"}'], env=env)
        assert bad_form.exit_code == 1 and "n:" in bad_form.output

        report = tmp_path / "report.txt"
        report.write_text("all good")
        for request_id, value in (
            (confirm, "yes"),
            (choice, "green"),
            (multi, "c, a"),
            (form, '{"n": 3}'),
            (upload, str(report)),
        ):
            done = runner.invoke(cli, ["answer", request_id, value], env=env)
            assert done.exit_code == 0, done.output
            assert "Answered" in done.output
        late = runner.invoke(cli, ["answer", confirm, "no"], env=env)
        assert late.exit_code == 1 and "already answered" in late.output

        def answer_of(request_id: str) -> object:
            found = api.post("/api/actions/get_interaction", json={"request_id": request_id})
            return found.json()["interaction"]["answer"]

        assert answer_of(confirm) is True
        assert answer_of(choice) == "g"
        assert answer_of(multi) == ["a", "c"]
        assert answer_of(form) == {"n": 3}
        file_answer = answer_of(upload)
        assert isinstance(file_answer, dict) and file_answer["name"] == "report.txt"
    assert "Nothing is waiting" in runner.invoke(cli, ["inbox"], env=env).output
    unreachable = runner.invoke(cli, ["inbox"], env={**env, "PAWFLOW_SERVER": "http://127.0.0.1:9"})
    assert unreachable.exit_code == 1 and "cannot reach" in unreachable.output
    served.stop()

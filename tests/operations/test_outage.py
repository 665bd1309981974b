"""A real ``pawflow serve`` through database outages: a PostgreSQL cluster of the test's own
restarted or stopped under it, and SQLite on a disk that fills up."""

from __future__ import annotations

import concurrent.futures
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from pawflow import open_store
from pawflow.flow import FlowFile
from pawflow.flow import deployments as deps
from pawflow.testing import eventually
from tests.disks import SmallDisk
from tests.pgcluster import PrivateCluster
from tests.served import Served

pytestmark = pytest.mark.slow

FLOW = """
name: release
tasks:
  ask:
    type: requestConfirmation
    properties: {message: "Release ${version}?"}
    next: wait
  wait:
    type: durableWait
    next: tell
  tell:
    type: notifyUser
    properties:
      message: "release ${version} resumed"
"""


def health(served: Served) -> dict[str, object]:
    found: dict[str, object] = httpx.get(f"{served.url}/healthz", timeout=10).json()
    return found


@pytest.mark.postgres
@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_an_answer_from_another_process_resumes_a_flow_after_a_restart(
    private_postgres: PrivateCluster, tmp_path: Path, mode: str
) -> None:
    url = private_postgres.create_database()
    with open_store(url) as store:
        conversation = store.create_conversation("alice", "Releases").id
        deployment, _ = deps.deploy(store, FLOW, conversation_id=conversation)
        deps.inject(store, deployment.id, FlowFile.create(attributes={"version": "3.1"}))
    # The sweeper passes once an hour: only the server's listener can bring the answer.
    served = Served(url, tmp_path, env={"PAWFLOW_SWEEP_INTERVAL": "3600"})
    served.start()
    try:
        with open_store(url, migrate=False) as store:
            [question] = eventually(
                lambda: store.list_interactions(user="alice", status="pending"), timeout=60
            )
            eventually(lambda: store.pending_continuations(f"flow:{deployment.id}"), timeout=60)

        private_postgres.restart(mode)  # while the server is idle
        # Every loop of the server is back at work (its listeners reconnected).
        eventually(lambda: health(served)["status"] == "ok", timeout=60)

        with open_store(url, migrate=False) as store:  # another process answers
            store.respond_interaction(question.id, True, user="alice")

            def told() -> list[str]:
                with store.unit(write=False) as u:
                    history = u.messages.history(conversation, user="alice")
                return [m.content for m in history if m.role == "notification"]

            assert eventually(told, timeout=60) == ["release 3.1 resumed"]
    finally:
        served.kill()


class Api:
    """A signed-in caller of a served process."""

    def __init__(self, served: Served, user: str) -> None:
        self.token = served.token(user)
        self.http = httpx.Client(
            base_url=served.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=60
        )

    def act(self, name: str, **body: object) -> httpx.Response:
        return self.http.post(f"/api/actions/{name}", json=body)

    def close(self) -> None:
        self.http.close()


def read_stream(served: Served, token: str, opened: threading.Event) -> list[str]:
    """Every line of one event stream until it ends (an incomplete one raises)."""
    lines: list[str] = []
    headers = {"Authorization": f"Bearer {token}"}
    with (
        httpx.Client(base_url=served.url, timeout=httpx.Timeout(10.0, read=60.0)) as client,
        client.stream("GET", "/api/events", headers=headers) as response,
    ):
        assert response.status_code == 200
        for line in response.iter_lines():
            lines.append(line)
            opened.set()
    return lines


@pytest.mark.postgres
def test_a_stopped_database_fails_requests_at_once_and_recovers(
    private_postgres: PrivateCluster, tmp_path: Path
) -> None:
    url = private_postgres.create_database()
    # A request waits at most 2 s for a connection (PAWFLOW_DB_TIMEOUT).
    served = Served(url, tmp_path, env={"PAWFLOW_DB_TIMEOUT": "2s"})
    served.start()
    alice = Api(served, "alice")
    try:
        assert alice.act("create_conversation", title="before").status_code == 200
        opened = threading.Event()
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            streamed = pool.submit(read_stream, served, alice.token, opened)
            assert opened.wait(30)

            private_postgres.stop("fast")
            for _ in range(3):  # every call a 503 to retry, none a 500, none held
                refused = alice.act("create_conversation", title="during")
                assert refused.status_code == 503, refused.text
                assert refused.headers["Retry-After"] == "1"
            found = httpx.get(f"{served.url}/healthz", timeout=30)
            assert found.status_code == 503 and found.headers["Retry-After"] == "1"
            body = found.json()
            assert body["status"] == "unavailable"
            assert body["store"].startswith("cannot reach PostgreSQL")
            # The open stream ends as a stream ends, saying why: no cut-off chunk.
            lines = streamed.result(timeout=60)
            assert ": the store is unavailable; reconnect with Last-Event-ID" in lines
            # A new stream is refused before its headers go.
            again = alice.http.get("/api/events")
            assert again.status_code == 503 and again.headers["Retry-After"] == "1"

        private_postgres.start()
        eventually(
            lambda: alice.act("create_conversation", title="after").status_code == 200,
            timeout=60,
        )
        eventually(lambda: health(served)["status"] == "ok", timeout=60)
        titles = [c["title"] for c in alice.act("list_conversations").json()["conversations"]]
        assert "during" not in titles and {"before", "after"} <= set(titles)
        printed = "".join(served.output)
        print(printed)
        assert "Exception in ASGI application" not in printed
    finally:
        alice.close()
        served.kill()


def test_a_full_disk_gives_503s_and_the_server_carries_on_once_there_is_room(
    small_disk_mounted: SmallDisk, tmp_path: Path
) -> None:
    disk = small_disk_mounted
    served = Served(f"sqlite:///{disk.path / 'pawflow.db'}", tmp_path)
    served.start()
    alice = Api(served, "alice")
    try:
        assert alice.act("create_conversation", title="before").status_code == 200
        disk.fill()
        # A write may still fit in pages the database file or its WAL already holds: write
        # until one needs a page the disk cannot give. Room can come back for a while: a
        # checkpoint frees the WAL's pages for the next writes, the server's own (a lease,
        # a clock sample, twice a second) among them, and a write that goes through is
        # rightly reported (the health check says the store writes again). So: write on
        # until the disk stays full from a refused write to a refused stream.
        for attempt in range(500):
            refused = alice.act("create_conversation", title=f"during {attempt}")
            if refused.status_code == 200:
                continue
            assert refused.status_code == 503 and refused.headers["Retry-After"] == "1"
            found = httpx.get(f"{served.url}/healthz", timeout=30)
            if found.status_code == 200:
                continue
            assert found.status_code == 503
            assert found.json()["store"].startswith(f"disk full: {disk.path / 'pawflow.db'}")
            # A stream needs a write (the user's live mark) before its headers: a 503, not
            # a 200 cut short.
            with alice.http.stream("GET", "/api/events") as stream:
                if stream.status_code == 200:
                    continue
                assert stream.status_code == 503 and stream.headers["Retry-After"] == "1"
            break
        else:
            raise AssertionError("the disk never stayed full from one write to the next")
        # What needs no write still works.
        assert alice.act("list_conversations").status_code == 200

        disk.make_room()
        eventually(
            lambda: alice.act("create_conversation", title="after").status_code == 200,
            timeout=60,
        )
        eventually(lambda: health(served)["status"] == "ok", timeout=60)
        printed = "".join(served.output)
        assert "Exception in ASGI application" not in printed
    finally:
        alice.close()
        served.kill()


def test_on_a_full_disk_commands_say_so_in_one_line(
    small_disk_mounted: SmallDisk, tmp_path: Path
) -> None:
    disk = small_disk_mounted
    db = f"sqlite:///{disk.path / 'pawflow.db'}"
    with open_store(db) as store:
        store.ensure_user("alice")
    disk.fill()
    for command in (["users", "add", "bob"], ["serve", "--wait-for-db", "0", "--port", "0"]):
        done = subprocess.run(
            [sys.executable, "-m", "pawflow", *command, "--db", db],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert done.returncode == 1, done
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert f"disk full: {disk.path / 'pawflow.db'}" in lines[0]
        assert "I/O" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.postgres
def test_start_up_waits_for_the_database_then_says_in_one_line_what_is_wrong(
    private_postgres: PrivateCluster, tmp_path: Path
) -> None:
    url = private_postgres.create_database()
    private_postgres.stop()
    command = ["serve", "--port", "0", "--db", url, "--wait-for-db", "1s"]
    done = subprocess.run(
        [sys.executable, "-m", "pawflow", *command],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 1 and done.stdout == ""
    waiting, last = done.stderr.strip().splitlines()
    assert waiting.startswith("Waiting up to 1 s for the database (--wait-for-db")
    assert "cannot reach PostgreSQL" in waiting
    assert last.startswith("Cannot serve: cannot reach PostgreSQL")
    assert last.endswith("(waited 1 s; --wait-for-db or PAWFLOW_WAIT_FOR_DB waits longer)")


@pytest.mark.postgres
def test_start_up_serves_once_the_database_it_waited_for_is_there(
    private_postgres: PrivateCluster, tmp_path: Path
) -> None:
    url = private_postgres.create_database()
    private_postgres.stop()
    served = Served(url, tmp_path, args=["--wait-for-db", "10m"])
    starting = threading.Thread(target=served.start)
    starting.start()
    try:
        eventually(lambda: any("Waiting up to 600 s" in line for line in served.output), timeout=60)
        private_postgres.start()
        starting.join(timeout=180)
        assert health(served)["status"] == "ok"
    finally:
        starting.join(timeout=180)
        served.kill()

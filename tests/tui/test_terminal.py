"""The real ``pawflow chat`` command in a pseudo-terminal (tmux), against ``pawflow serve``:
a request created through the API appears, is answered with keystrokes and is answered in
the store; after a server restart the pending ones are still on the screen."""

from __future__ import annotations

import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator

import pytest
from tests.conftest import IN_CI
from tests.served import Served

from pawflow.client import Client
from pawflow.testing import eventually


class Tmux:
    """One detached session on a socket of its own, so nothing else on the machine is touched."""

    def __init__(self) -> None:
        self.socket = f"pawflow-test-{secrets.token_hex(4)}"
        self.session = "chat"

    def run(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True
        )
        return done.stdout

    def start(self, command: list[str], env: dict[str, str]) -> None:
        exports = [f"{key}={value}" for key, value in env.items()]
        self.run(
            "new-session", "-d", "-s", self.session, "-x", "140", "-y", "45",
            "env", *exports, *command,
        )  # fmt: skip

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.session)

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.session, *keys)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    if shutil.which("tmux") is None:
        if IN_CI:
            pytest.fail("tmux is required in CI for the terminal test")
        pytest.skip("tmux is not installed")
    session = Tmux()
    yield session
    session.close()


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_pawflow_chat_in_a_terminal(served: Served, tmux: Tmux) -> None:
    token = served.token("ada")
    client = Client(served.url, token)
    try:
        conversation = client.create_conversation("Deployments").id
        tmux.start(
            [sys.executable, "-m", "pawflow", "chat", conversation],
            {"PAWFLOW_SERVER": served.url, "PAWFLOW_TOKEN": token, "TERM": "xterm-256color"},
        )
        eventually(lambda: "● live" in tmux.screen(), timeout=30)

        asked = client.request_interaction(conversation, "confirm", "Ship release 2.4?")
        eventually(lambda: "Ship release 2.4?" in tmux.screen(), timeout=20)
        tmux.keys("C-n")
        # The footer lists y and n only once the request has the focus.
        eventually(lambda: "n No" in tmux.screen().rstrip().splitlines()[-1])
        tmux.keys("y")
        eventually(lambda: client.get_interaction(asked.id).status == "answered", timeout=20)
        assert client.get_interaction(asked.id).answer is True
        eventually(lambda: "Answered by ada in its block: Yes" in tmux.screen(), timeout=20)

        waiting = client.request_interaction(conversation, "text", "Name the release?")
        eventually(lambda: "Name the release?" in tmux.screen(), timeout=20)
        served.kill()
        eventually(lambda: "reconnecting" in tmux.screen(), timeout=20)
        served.start()
        eventually(lambda: "● live" in tmux.screen(), timeout=30)
        screen = tmux.screen()
        assert "Name the release?" in screen
        assert "Pending  1 " in screen
        assert client.get_interaction(waiting.id).status == "pending"
        tmux.keys("C-q")
    finally:
        client.close()

"""The real ``pawflow chat`` command in a pseudo-terminal (tmux), against ``pawflow serve``:
a request created through the API appears, is answered with keystrokes and is answered in
the store; after a server restart the pending ones are still on the screen.

Every step waits for what the screen shows, with a deadline, never for a time: on a loaded
machine the app may take seconds to start or to redraw, and a key sent before the request
has the focus is sent again until it does.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest
from tests.conftest import IN_CI
from tests.served import Served
from tests.tui.conftest import token_for

from pawflow.client import Client
from pawflow.testing import eventually

# Deadlines, not waits: generous, since a loaded machine is slow to start and redraw.
START = 60.0
STEP = 30.0


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

    def until(self, check: Callable[[str], bool], timeout: float = STEP) -> str:
        """The screen once ``check`` holds for it (polled gently: each look is a process)."""

        def shown() -> str | None:
            screen = self.screen()
            return screen if check(screen) else None

        return eventually(shown, timeout=timeout, interval=0.1)

    def press_until(self, key: str, check: Callable[[str], bool], timeout: float = STEP) -> None:
        """Press ``key`` until ``check`` holds: a key the app was not ready for is lost."""
        deadline = time.monotonic() + timeout
        while True:
            self.keys(key)
            try:
                self.until(check, timeout=3)
                return
            except AssertionError:
                if time.monotonic() > deadline:
                    raise

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
@pytest.mark.timeout(180)
def test_pawflow_chat_in_a_terminal(served: Served, tmux: Tmux) -> None:
    token = token_for(served, "ada")
    client = Client(served.url, token)
    try:
        conversation = client.create_conversation("Deployments").id
        tmux.start(
            [sys.executable, "-m", "pawflow", "chat", conversation],
            {"PAWFLOW_SERVER": served.url, "PAWFLOW_TOKEN": token, "TERM": "xterm-256color"},
        )
        tmux.until(lambda screen: "● live" in screen, timeout=START)

        asked = client.request_interaction(conversation, "confirm", "Ship release 2.4?")
        tmux.until(lambda screen: "Ship release 2.4?" in screen)
        # The footer lists y and n only once the request has the focus.
        tmux.press_until("C-n", lambda screen: "n No" in screen.rstrip().splitlines()[-1])
        tmux.keys("y")
        eventually(
            lambda: client.get_interaction(asked.id).status == "answered",
            timeout=STEP,
            interval=0.1,
        )
        assert client.get_interaction(asked.id).answer is True
        tmux.until(lambda screen: "Answered by you in its block: Yes" in screen)

        waiting = client.request_interaction(conversation, "text", "Name the release?")
        tmux.until(lambda screen: "Name the release?" in screen)
        served.kill()
        tmux.until(lambda screen: "reconnecting" in screen)
        served.start()
        # Live again, and re-read from the server: the request still waits on the screen
        # (once the history is drawn again, which may come a moment after "live").
        tmux.until(
            lambda screen: (
                "● live" in screen and "Pending  1 " in screen and "Name the release?" in screen
            ),
            timeout=START,
        )
        assert client.get_interaction(waiting.id).status == "pending"
        tmux.keys("C-q")
    finally:
        client.close()

"""A token the server does not accept gets one message everywhere: every command that takes a
token, the MCP server and the terminal app name the server, where the token was read from,
and the fix (``pawflow users add NAME``; ``pawflow users signin-link NAME`` for a browser)."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from pawflow.cli import app
from pawflow.client import ApiError, Client
from pawflow.errors import TokenRefused
from pawflow.server.testing import LiveServer

WRONG = "pf_not-a-token-of-this-server"

# The arguments each command that takes a token needs besides it. A new command with a
# --token fails the first test until it is listed here (and so checked).
ARGUMENTS: dict[tuple[str, ...], list[str]] = {
    ("inbox",): [],
    ("answer",): ["req_1", "yes"],
    ("claim",): ["req_1"],
    ("release",): ["req_1"],
    ("reassign",): ["req_1", "--to", "bob"],
    ("approvals", "list"): [],
    ("approvals", "revoke"): ["rule_1"],
    ("approvals", "show"): ["req_1"],
}
# Checked below on their own: the terminal app (a full-screen program) and the MCP server
# (which takes its token from the environment or a file only).
ON_THEIR_OWN = {("chat",), ("mcp",)}


def _token_commands(
    group: typer.core.TyperGroup, path: tuple[str, ...] = ()
) -> set[tuple[str, ...]]:
    found: set[tuple[str, ...]] = set()
    for name, command in group.commands.items():
        if isinstance(command, typer.core.TyperGroup):
            found |= _token_commands(command, (*path, name))
        elif any(param.name == "token" for param in command.params):
            found.add((*path, name))
    return found


def _fix(server: str, where: str) -> str:
    return (
        f"Refused: {server} does not accept the token {where} (invalid token). Make a token"
        " with `pawflow users add NAME` where the server's store is, and"
    )


def test_every_command_that_takes_a_token_says_where_it_was_read_and_the_fix(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server()
    commands = _token_commands(typer.main.get_command(app))  # type: ignore[arg-type]
    assert commands == set(ARGUMENTS) | ON_THEIR_OWN
    runner = CliRunner()
    env = {"PAWFLOW_SERVER": server.url, "PAWFLOW_TOKEN": WRONG}
    for command, arguments in ARGUMENTS.items():
        from_env = runner.invoke(app, [*command, *arguments], env=env)
        assert from_env.exit_code == 1, (command, from_env.output)
        said = " ".join(from_env.output.split())
        assert said.startswith(_fix(server.url, "in PAWFLOW_TOKEN")), (command, said)
        assert "put it in PAWFLOW_TOKEN;" in said, (command, said)
        assert said.endswith(
            "a browser signs in with a link from `pawflow users signin-link NAME`."
        )

        given = runner.invoke(
            app, [*command, *arguments, "--token", WRONG], env={"PAWFLOW_SERVER": server.url}
        )
        assert given.exit_code == 1, (command, given.output)
        said = " ".join(given.output.split())
        assert said.startswith(_fix(server.url, "given with --token")), (command, said)
        assert "pass it with --token;" in said, (command, said)


def test_the_client_raises_token_refused_naming_its_source(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server()
    with (
        Client(server.url, WRONG, token_source="PAWFLOW_TOKEN") as client,
        pytest.raises(TokenRefused) as refused,
    ):
        client.list_conversations()
    assert refused.value.status == 401 and refused.value.source == "PAWFLOW_TOKEN"
    assert refused.value.reason == "invalid token" and refused.value.server == server.url
    # Without a token there is nothing to refuse: the server's own words.
    with Client(server.url, None) as anonymous, pytest.raises(ApiError) as missing:
        anonymous.whoami()
    assert not isinstance(missing.value, TokenRefused)


def test_the_mcp_server_says_the_same_of_its_environment_or_its_file(
    make_server: Callable[..., LiveServer], tmp_path: Path
) -> None:
    server = make_server()
    runner = CliRunner()
    from_env = runner.invoke(
        app, ["mcp"], env={"PAWFLOW_SERVER": server.url, "PAWFLOW_TOKEN": WRONG}
    )
    assert from_env.exit_code == 1
    assert " ".join(from_env.output.split()).startswith(_fix(server.url, "in PAWFLOW_TOKEN"))
    secret = tmp_path / "token"
    secret.write_text(WRONG + "\n")
    secret.chmod(0o600)
    from_file = runner.invoke(
        app,
        ["mcp", "--token-file", str(secret)],
        env={"PAWFLOW_SERVER": server.url, "PAWFLOW_TOKEN": ""},
    )
    assert from_file.exit_code == 1
    said = " ".join(from_file.output.split())
    assert said.startswith(_fix(server.url, f"in the file {secret}"))
    assert f"put it in the file {secret};" in said


_ESCAPES = re.compile(rb"\x1b(\[[0-9;?<>=$]*[a-zA-Z~]|\][^\x07\x1b]*(\x07|\x1b\\)|[=>])")


def _plain(output: bytes) -> str:
    return _ESCAPES.sub(b"", output).decode("utf-8", "replace")


@pytest.mark.slow
def test_the_terminal_app_says_so_offers_to_quit_and_prints_the_fix(
    make_server: Callable[..., LiveServer],
) -> None:
    """``pawflow chat`` on a terminal (a pseudo-terminal here) with a token the server
    refuses: the app shows the message and Quit; ``q`` quits and the command prints the
    message again, where it stays to be copied, and exits 1."""
    server = make_server()
    terminal, app_side = os.openpty()
    fcntl.ioctl(app_side, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "PAWFLOW_SERVER": server.url}
    env["PAWFLOW_TOKEN"] = WRONG
    chat = subprocess.Popen(
        [sys.executable, "-m", "pawflow", "chat"],
        stdin=app_side,
        stdout=app_side,
        stderr=app_side,
        env=env,
    )
    os.close(app_side)
    shown = b""
    pressed = False
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([terminal], [], [], 0.1)
            if ready:
                try:
                    data = os.read(terminal, 65536)
                except OSError:  # the program ended and closed its side
                    break
                if not data:
                    break
                shown += data
            elif chat.poll() is not None:
                break
            if not pressed and "does not accept your token" in _plain(shown):
                os.write(terminal, b"q")
                pressed = True
        assert pressed, _plain(shown)[-2000:]
        assert chat.wait(timeout=30) == 1
    finally:
        if chat.poll() is None:
            chat.kill()
            chat.wait()
        os.close(terminal)
    in_app, _, after = shown.rpartition(b"\x1b[?1049l")  # the app's screen, then the shell's
    assert "Quit" in _plain(in_app)
    said = " ".join(_plain(after).split())
    assert said.startswith(_fix(server.url, "in PAWFLOW_TOKEN")), said
    assert said.endswith("`pawflow users signin-link NAME`."), said

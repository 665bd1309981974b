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
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import typer
import typer.testing
from typer.testing import CliRunner

from pawflow.cli import app
from pawflow.cli.tokens import config_file, keep_token
from pawflow.client import ApiError, Client
from pawflow.errors import TokenRefused
from pawflow.server.testing import LiveServer

WRONG = "pf_not-a-token-of-this-server"

# The arguments each command that talks to a server needs besides its token. A new such
# command (one with --token-file) fails the first test until it is listed here (and so
# checked).
ARGUMENTS: dict[tuple[str, ...], list[str]] = {
    ("inbox",): [],
    ("answer",): ["req_1", "yes"],
    ("claim",): ["req_1"],
    ("release",): ["req_1"],
    ("reassign",): ["req_1", "--to", "bob"],
    ("approvals", "list"): [],
    ("approvals", "revoke"): ["rule_1"],
    ("approvals", "show"): ["req_1"],
    ("tokens", "list"): [],
    ("tokens", "create"): [],
    ("tokens", "rotate"): ["tok_1"],
    ("tokens", "revoke"): ["tok_1"],
}
# Checked below on their own: the terminal app (a full-screen program), the MCP server, and
# pawflow login (which keeps a token it has checked).
ON_THEIR_OWN = {("chat",), ("mcp",), ("login",)}
REFUSED_ON_THE_COMMAND_LINE = (
    "--token is refused: every local user can read a command line. Put the token in"
    " PAWFLOW_TOKEN or in a file (--token-file PATH), or keep it with `pawflow login`."
)


def _commands(
    group: typer.core.TyperGroup, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], typer.core.TyperCommand | typer.core.TyperGroup]]:
    for name, command in group.commands.items():
        yield (*path, name), command  # type: ignore[misc]
        if isinstance(command, typer.core.TyperGroup):
            yield from _commands(command, (*path, name))


def _token_commands(group: typer.core.TyperGroup) -> set[tuple[str, ...]]:
    return {
        path
        for path, command in _commands(group)
        if any(param.name == "token_file" for param in command.params)
    }


def _fix(server: str, where: str, reason: str = "invalid token") -> str:
    return (
        f"Refused: {server} does not accept the token {where} ({reason}). Make a token"
        " with `pawflow users add NAME` where the server's store is, and"
    )


def test_every_command_refuses_a_token_on_its_command_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Walked, not listed: a command added later refuses --token as well, with the message
    that says where a token goes instead, before it reads anything or calls anyone."""
    root = typer.main.get_command(app)
    # The command tree is built once (as `pawflow` does at each start), not at each call.
    monkeypatch.setattr(typer.testing, "_get_command", lambda _: root)
    runner = CliRunner()
    walked = list(_commands(root))  # type: ignore[arg-type]
    assert len(walked) > 30 and (("users", "token", "rotate") in dict(walked))
    for path, _ in walked:
        for given in (["--token", "pf_secret"], ["--token=pf_secret"]):
            result = runner.invoke(
                app, [*path, *given], env={"PAWFLOW_SERVER": "http://127.0.0.1:9"}
            )
            assert result.exit_code == 2, (path, result.output)
            assert " ".join(result.output.split()) == REFUSED_ON_THE_COMMAND_LINE, path
            assert "pf_secret" not in result.output


def test_every_command_that_takes_a_token_says_where_it_was_read_and_the_fix(
    make_server: Callable[..., LiveServer], tmp_path: Path
) -> None:
    """From PAWFLOW_TOKEN, from --token-file, and from what `pawflow login` kept."""
    server = make_server()
    commands = _token_commands(typer.main.get_command(app))  # type: ignore[arg-type]
    assert commands == set(ARGUMENTS) | ON_THEIR_OWN
    runner = CliRunner()
    secret = tmp_path / "token"
    secret.write_text(WRONG + "\n")
    secret.chmod(0o600)
    config = tmp_path / "config"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(config))
        kept = keep_token(server.url, WRONG)
    assert kept.stat().st_mode & 0o777 == 0o600
    sources = {
        "in PAWFLOW_TOKEN": ({"PAWFLOW_TOKEN": WRONG}, []),
        f"in the file {secret}": ({}, ["--token-file", str(secret)]),
        f"in the file {kept} (pawflow login)": ({"XDG_CONFIG_HOME": str(config)}, []),
    }
    for command, arguments in ARGUMENTS.items():
        for where, (env, options) in sources.items():
            result = runner.invoke(
                app,
                [*command, *arguments, *options],
                env={"PAWFLOW_SERVER": server.url, **env},
            )
            assert result.exit_code == 1, (command, where, result.output)
            said = " ".join(result.output.split())
            assert said.startswith(_fix(server.url, where)), (command, said)
            assert f"put it {where};" in said, (command, said)
            assert said.endswith(
                "a browser signs in with a link from `pawflow users signin-link NAME`."
            )


def test_without_a_token_a_command_says_where_one_goes(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["inbox"], env={"PAWFLOW_SERVER": "http://127.0.0.1:9"})
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert said.startswith(
        "No token: set PAWFLOW_TOKEN, pass --token-file PATH, or run `pawflow login`"
    )


def test_login_keeps_a_checked_token_for_its_server_and_logout_forgets_it(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server()
    token = server.token("ana")
    runner = CliRunner()
    env = {"PAWFLOW_SERVER": server.url}
    wrong = runner.invoke(app, ["login"], input=WRONG + "\n", env=env)
    assert wrong.exit_code == 1
    said = " ".join(wrong.output.split())
    assert said.startswith(_fix(server.url, "in standard input")), said
    assert not config_file().exists()
    signed_in = runner.invoke(app, ["login"], input=token + "\n", env=env)
    assert signed_in.exit_code == 0, signed_in.output
    assert f"Signed in to {server.url} as ana" in signed_in.output
    assert token not in signed_in.output
    kept = config_file()
    assert kept.stat().st_mode & 0o777 == 0o600
    listed = runner.invoke(app, ["inbox", "--json"], env=env)
    assert listed.exit_code == 0, listed.output
    # Another server is not sent this one's token.
    elsewhere = runner.invoke(app, ["inbox"], env={"PAWFLOW_SERVER": "http://127.0.0.1:9"})
    assert elsewhere.exit_code == 2 and "No token" in elsewhere.output
    assert runner.invoke(app, ["logout"], env=env).exit_code == 0
    assert runner.invoke(app, ["inbox"], env=env).exit_code == 2
    assert token not in kept.read_text()


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

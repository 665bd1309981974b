"""The first run, as a newcomer makes it: real ``pawflow`` processes, the commands they print
pasted into a shell, a port that is taken, a token made from another folder."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from pawflow.cli import app
from pawflow.client import Client
from pawflow.server.testing import free_port
from tests.served import Served

# A PATH a new terminal has: the system's, not the project's virtual environment.
PLAIN_PATH = "/usr/local/bin:/usr/bin:/bin"


def _commands(group: typer.core.TyperGroup, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for name, command in group.commands.items():
        if isinstance(command, typer.core.TyperGroup):
            found += _commands(command, (*path, name))
        else:
            found.append((*path, name))
    return found


def test_help_names_no_type_after_a_flag() -> None:
    runner = CliRunner()
    for path in _commands(typer.main.get_command(app)):  # type: ignore[arg-type]
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "120"})
        assert result.exit_code == 0, (path, result.output)
        assert "--help" in result.output and "<bool>" not in result.output, (path, result.output)
    printed = subprocess.run(
        [sys.executable, "-m", "pawflow", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "Show this message and exit." in printed and "<bool>" not in printed


@pytest.mark.slow
def test_a_taken_port_is_named_before_anything_is_printed(tmp_path: Path) -> None:
    port = free_port()
    database = tmp_path / "pawflow.db"
    command = [sys.executable, "-m", "pawflow", "serve", "--demo", "--port", str(port)]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        done = subprocess.run(
            [*command, "--db", f"sqlite:///{database}"],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
    assert done.returncode == 1
    assert done.stdout == ""  # no sign-in link for a server that never runs
    assert f"port {port} on 127.0.0.1 is already in use" in done.stderr
    assert f"--port {port + 1}" in done.stderr and f"PAWFLOW_PORT={port + 1}" in done.stderr
    assert "Errno" not in done.stderr and "Traceback" not in done.stderr
    assert not database.exists()  # nothing was done


@pytest.mark.slow
def test_a_token_made_in_another_folder_is_one_the_server_accepts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data-home"))
    here, elsewhere = tmp_path / "checkout", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    served = Served(None, here)  # no --db: the default store
    served.start()
    try:
        made = subprocess.run(
            [sys.executable, "-m", "pawflow", "users", "add", "ada"],
            capture_output=True,
            text=True,
            check=True,
            cwd=elsewhere,
        )
        token = made.stdout.strip().splitlines()[-1]
        with Client(served.url, token) as ada:
            assert ada.whoami() == "ada"
    finally:
        served.kill()
    assert (tmp_path / "data-home" / "pawflow" / "pawflow.db").is_file()
    assert [p.name for p in here.iterdir()] == [] and [p.name for p in elsewhere.iterdir()] == []


def _pasted(output: list[str], heading: str) -> list[str]:
    """The indented lines printed under ``heading``: what a person pastes into a shell."""
    lines = [line.rstrip("\n") for line in output]
    start = next(i for i, line in enumerate(lines) if line.startswith(heading)) + 1
    pasted = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        pasted.append(line.strip())
    return pasted


@pytest.mark.slow
def test_the_terminal_commands_make_run_prints_work_in_a_new_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", PLAIN_PATH)  # as `make run` is started from a plain shell
    served = Served(f"sqlite:///{tmp_path / 'pawflow.db'}", tmp_path, args=("--demo",))
    served.start()
    try:
        pasted = _pasted(served.output, "The terminal chat:")
        assert pasted[0].startswith("source ") and pasted[0].endswith("/bin/activate")
        assert pasted[-1].startswith("pawflow chat")
        script = "\n".join(["set -e", *pasted[:-1], "pawflow inbox --json"])
        shell = subprocess.run(
            ["bash", "-c", script],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
            env={"PATH": PLAIN_PATH, "HOME": os.environ.get("HOME", str(tmp_path))},
        )
        assert shell.returncode == 0, shell.stderr
        pending = json.loads(shell.stdout)["interactions"]
        assert "Is the PawFlow server running for you?" in [i["message"] for i in pending]
        assert f"Database: {tmp_path / 'pawflow.db'} (--db or PAWFLOW_DB)\n" in served.output
    finally:
        served.kill()

"""``pip install pawflow`` is the core, and every other part is an extra that says its name.

- The core (the contract, the store on SQLite, the HTTP client, the durable cycle) runs the
  README's example with the modules of every extra blocked (a meta-path finder in a fresh
  interpreter), and each part asked for then names the extra to install.
- The server serves without the extras beside it (Slack, traces, MCP, the terminal app,
  PostgreSQL), and each of those, asked for, names its extra.
- A fresh virtual environment with ``pip install`` of this tree and no extra installs a
  handful of packages and runs the README's example (one venv for the session).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pawflow.extras import EXTRAS

ROOT = Path(__file__).parent.parent
EXAMPLE = re.search(r"```python\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)
assert EXAMPLE is not None, "the README has a Python example"
README_EXAMPLE = EXAMPLE.group(1)
RESUMED = "resumed with {'status': 'answered', 'answer': 'staging'}"

# No module of BLOCKED (nor under one) can be imported in the interpreter this starts.
BLOCKING = """
import importlib.abc, sys

class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == blocked or name.startswith(blocked + ".") for blocked in BLOCKED):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Blocked())
"""


def tops(*extras: str) -> set[str]:
    return {module.partition(".")[0] for extra in extras for module in EXTRAS[extra]}


A2A_MISSING = (
    "A2A (/a2a/{agent}) needs the 'a2a' extra (a2a not installed): pip install 'pawflow[a2a]'"
)

# FastAPI needs the OpenTelemetry API: a server without traces lacks the SDK and the rest.
WITHOUT_TRACES = {"opentelemetry.sdk", "opentelemetry.instrumentation"}


def run_blocked(blocked: set[str], script: str, cwd: Path, *args: str) -> dict[str, object]:
    code = f"BLOCKED = {sorted(blocked)!r}\n{BLOCKING}\n{script}"
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=100,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


# The core, then each part, with every extra missing.
CORE_PROBE = """
import contextlib, io, json, sys
import pawflow
import pawflow.client

exported = [getattr(pawflow, name) for name in pawflow.__all__]
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    exec(sys.argv[1], {})
seen = {"example": printed.getvalue().strip()}

def said(call):
    try:
        call()
    except pawflow.MissingExtra as missing:
        return str(missing)
    return "no error"

def command(*args):
    import pawflow.__main__
    sys.argv = ["pawflow", *args]
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        try:
            pawflow.__main__.main()
        except SystemExit as exit:
            return f"{exit.code}: {stderr.getvalue().strip()}"
    return "0"

seen["server"] = said(lambda: __import__("pawflow.server.app"))
seen["tui"] = said(lambda: __import__("pawflow.tui"))
seen["postgres"] = said(lambda: pawflow.open_store("postgresql://postgres@127.0.0.1:5432/x"))
seen["command"] = command("--help")
print(json.dumps(seen))
"""


def test_the_core_runs_the_readme_example_with_every_extra_missing(tmp_path: Path) -> None:
    blocked = tops(*EXTRAS) | {"starlette"}
    seen = run_blocked(blocked, CORE_PROBE, tmp_path, README_EXAMPLE)
    assert seen.pop("example") == RESUMED
    assert seen == {
        "server": "the PawFlow server needs the 'server' extra (fastapi, uvicorn, multipart, …"
        " not installed): pip install 'pawflow[server]'",
        "tui": "the terminal app (pawflow chat) needs the 'tui' extra (textual, typer, rich not"
        " installed): pip install 'pawflow[tui]'",
        "postgres": "a PostgreSQL store needs the 'postgres' extra (psycopg, psycopg_pool not"
        " installed): pip install 'pawflow[postgres]'",
        "command": "1: the pawflow command needs the 'server' extra (typer not installed):"
        " pip install 'pawflow[server]'",
    }


# `pawflow serve`'s app without Slack, traces, MCP, the terminal app or PostgreSQL.
SERVER_PROBE = """
import contextlib, io, json, sys
from pathlib import Path
import httpx
import pawflow
from pawflow import observability, serve
from pawflow.agent.config import load_agents
from pawflow.a2a.mounting import mount as mount_a2a
from pawflow.agui.mounting import mount as mount_agui
from pawflow.mcp.mounting import mount
from pawflow.server.settings import ServerSettings
from pawflow.server.testing import live_server

def said(call):
    try:
        call()
    except pawflow.MissingExtra as missing:
        return str(missing)
    return "no error"

seen = {}
with pawflow.open_store(sys.argv[1]) as store:
    settings = ServerSettings(db=sys.argv[1])
    prepared = serve.prepare(settings, store=store, greet=False)
    seen["app"] = type(prepared.app).__name__
    with live_server(store, endpoints=[mount, mount_agui, mount_a2a]) as server:
        seen["healthz"] = httpx.get(server.url + "/healthz").status_code
        signed = {"Authorization": "Bearer " + server.token("ada")}
        for face, path in (("mcp", "/mcp"), ("agui", "/agui/helper"), ("a2a", "/a2a/helper")):
            answered = httpx.post(server.url + path, json={}, headers=signed)
            seen[face] = [answered.status_code, answered.json()["error"]]
        card = httpx.get(server.url + "/a2a/helper/.well-known/agent-card.json")
        seen["a2a card"] = [card.status_code, card.json()["error"]]
    slack = settings.replace(slack_bot_token="xoxb-1", slack_signing_secret="s")
    seen["slack"] = said(lambda: serve.dispatcher(store, slack))
    traced = {"OTEL_TRACES_EXPORTER": "console"}
    seen["otel"] = said(lambda: observability.configure_tracing(traced))
    seen["untraced"] = observability.configure_tracing({})
model = "{url: 'http://127.0.0.1:9/v1', name: any}"
agent = "  - name: helper\\n    model: " + model + "\\n    system_prompt: Hi"
Path("agents.yaml").write_text("agents:\\n" + agent + "\\n")
seen["agents"] = [spec.name for spec in load_agents("agents.yaml", {})]
remote = "    mcp_servers: [{name: files, command: cat, tools: [count]}]"
Path("remote.yaml").write_text("agents:\\n" + agent + "\\n" + remote + "\\n")
try:
    with contextlib.ExitStack() as connections:
        load_agents("remote.yaml", {}, connections=connections)
except pawflow.InvalidInput as refused:
    seen["mcp_servers"] = str(refused).partition("cannot connect: ")[2]
sys.argv = ["pawflow", "chat", "--server", "http://127.0.0.1:9"]
stderr = io.StringIO()
with contextlib.redirect_stderr(stderr):
    try:
        from pawflow.__main__ import main
        main()
    except SystemExit as exit:
        seen["chat"] = f"{exit.code}: {stderr.getvalue().strip()}"
print(json.dumps(seen))
"""


@pytest.mark.slow
def test_the_server_serves_without_the_extras_beside_it(tmp_path: Path) -> None:
    """Slow (~5 s: one interpreter loads the server, builds `pawflow serve`'s app and serves
    it): every part beside the server, asked for in the one process."""
    blocked = tops("slack", "mcp", "tui", "postgres", "agui", "a2a") - tops("server")
    blocked |= WITHOUT_TRACES
    seen = run_blocked(blocked, SERVER_PROBE, tmp_path, f"sqlite:///{tmp_path / 's.db'}")
    assert seen == {
        "app": "FastAPI",
        "healthz": 200,
        "mcp": [
            501,
            "MCP (/mcp) needs the 'mcp' extra (mcp, mcp_types not installed):"
            " pip install 'pawflow[mcp]'",
        ],
        "agui": [
            501,
            "AG-UI (/agui/{agent}) needs the 'agui' extra (ag_ui not installed):"
            " pip install 'pawflow[agui]'",
        ],
        "a2a": [501, A2A_MISSING],
        "a2a card": [501, A2A_MISSING],
        "slack": "the Slack channel needs the 'slack' extra (slack_sdk not installed):"
        " pip install 'pawflow[slack]'",
        "otel": "tracing (OTEL_TRACES_EXPORTER=console) needs the 'otel' extra"
        " (opentelemetry.sdk, opentelemetry.instrumentation.fastapi not installed):"
        " pip install 'pawflow[otel]'",
        "untraced": False,
        "agents": ["helper"],
        "mcp_servers": "the MCP tools of agents (mcp_servers) needs the 'mcp' extra (mcp not"
        " installed): pip install 'pawflow[mcp]'",
        "chat": "1: the terminal app (pawflow chat) needs the 'tui' extra (textual not"
        " installed): pip install 'pawflow[tui]'",
    }


def pip(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="session")
def core_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtual environment with ``pip install`` of this tree, no extra: the wheel is
    built here from a copy (nothing written in the tree), with this venv's setuptools, and
    installed with this venv's pip (the new one has none) from pip's cache."""
    base = tmp_path_factory.mktemp("core")
    source = base / "source"
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    pip("wheel", "-q", "--no-deps", "--no-build-isolation", "-w", "wheels", "./source", cwd=base)
    (wheel,) = (base / "wheels").glob("pawflow-*.whl")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "venv"], cwd=base, check=True)
    python = base / "venv" / "bin" / "python"
    pip("--python", str(python), "install", "-q", str(wheel), cwd=base)
    yield python


@pytest.mark.slow
def test_the_core_alone_installs_a_handful_of_packages_and_runs_the_readme_example(
    core_venv: Path, tmp_path: Path
) -> None:
    """Slow (a venv and an install from pip's cache, 10-20 s): the issue's own check, that
    `pip install pawflow` brings the core only and that the core runs the example."""
    listed = pip("--python", str(core_venv), "list", "--format=json", cwd=tmp_path)
    installed = {package["name"].lower() for package in json.loads(listed)}
    assert "pawflow" in installed
    assert not installed & {"fastapi", "uvicorn", "typer", "textual", "psycopg", "mcp"}
    assert not {name for name in installed if name.startswith("opentelemetry")}
    assert len(installed) <= 25, sorted(installed)
    ran = subprocess.run(
        [str(core_venv), "-c", README_EXAMPLE],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert (ran.returncode, ran.stdout.strip()) == (0, RESUMED), ran.stderr
    command = subprocess.run(
        [str(core_venv.parent / "pawflow"), "--help"], capture_output=True, text=True, timeout=60
    )
    assert (command.returncode, command.stdout) == (1, "")
    assert command.stderr.strip().endswith("pip install 'pawflow[server]'"), command.stderr

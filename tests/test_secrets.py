"""No secret escapes a full run: a real ``pawflow serve`` whose model endpoint echoes its API
key in an error and whose agent's tool gives away its service token, reached through the
API, a browser sign-in and ``pawflow mcp``. Afterwards every message, event, log line,
database row and process argument is searched for every configured secret and sign-in
token."""

from __future__ import annotations

import json
import os
import secrets
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx
import psycopg
import pytest
from mcp import Client, StdioServerParameters
from typer.testing import CliRunner

from pawflow.cli import app
from pawflow.server.testing import free_port
from pawflow.testing import eventually, throwaway_postgres
from tests.agent.fake_openai import delta, reply_json, reply_sse
from tests.conftest import require_postgres

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

TOOL_SERVER = Path(__file__).parent / "fixtures" / "token_echo_server.py"
FAILED = "could not get a reply from the model"


class EchoingModel:
    """An OpenAI-compatible endpoint: it asks for the tool, then refuses the next request
    with an error that quotes the ``Authorization`` header it was sent."""

    def __init__(self) -> None:
        self.url = ""
        self.tool_results: list[str] = []

    def handle(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        last = body["messages"][-1]
        if last["role"] != "tool":
            call = {
                "index": 0,
                "id": "call-1",
                "type": "function",
                "function": {"name": "svc__reveal", "arguments": "{}"},
            }
            reply_sse([delta(tool_calls=[call]), delta("tool_calls")])(handler)
            return
        self.tool_results.append(str(last["content"]))
        sent = handler.headers.get("Authorization", "")
        error = {"error": {"message": f"Incorrect API key provided: {sent}", "type": "auth"}}
        reply_json(error, status=401)(handler)


@contextmanager
def echoing_model() -> Iterator[EchoingModel]:
    model = EchoingModel()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            model.handle(self, json.loads(self.rfile.read(length) or b"{}"))

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    model.url = f"http://127.0.0.1:{server.server_port}/v1"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield model
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _agents_file(directory: Path, model: EchoingModel, service_token: str) -> Path:
    agents = {
        "agents": [
            {
                "name": "helper",
                "model": {"url": model.url, "name": "fake", "api_key_env": "LEAK_MODEL_KEY"},
                "system_prompt": "You help.",
                "mcp_servers": [
                    {
                        "name": "svc",
                        "command": sys.executable,
                        "args": [str(TOOL_SERVER)],
                        "env": {"SERVICE_TOKEN": service_token},
                        "tools": ["reveal"],
                        "approval": "none",
                    }
                ],
            }
        ]
    }
    path = directory / "agents.yaml"
    path.write_text(json.dumps(agents))  # JSON is YAML
    return path


def _cli(env: dict[str, str], *args: str) -> str:
    result = CliRunner().invoke(app, list(args), env=env)
    assert result.exit_code == 0, result.output
    return result.output.strip().splitlines()[-1].strip()


def _command_lines() -> str:
    """Every process's arguments on this machine, as anyone may read them."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
            except OSError:
                continue  # the process ended meanwhile
    return "\n".join(found)


def _rows(db: str) -> str:
    """Every row of every table, as text."""
    if db.startswith("sqlite:///"):
        with sqlite3.connect(db.removeprefix("sqlite:///")) as conn:
            return "\n".join(conn.iterdump())
    lines = []
    with psycopg.connect(db) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchall()
        for (table,) in tables:
            for (row,) in conn.execute(f'SELECT t::text FROM "{table}" t').fetchall():
                lines.append(f"{table}: {row}")
    return "\n".join(lines)


def _events(url: str, token: str) -> str:
    """The user's whole event stream, read until the agent's failed reply is in it."""
    text = []
    deadline = time.monotonic() + 30
    headers = {"Authorization": f"Bearer {token}"}
    timeout = httpx.Timeout(10.0, read=15.0)
    with (
        httpx.Client(base_url=url, timeout=timeout) as client,
        client.stream("GET", "/api/events", params={"after": "0"}, headers=headers) as response,
    ):
        assert response.status_code == 200
        for line in response.iter_lines():
            text.append(line)
            if FAILED in line:
                break
            assert time.monotonic() < deadline, "the failed reply never reached the stream"
    return "\n".join(text)


async def _ask_over_stdio(url: str, token: str) -> str:
    """Ask through ``pawflow mcp`` (the token in its environment), and meanwhile read every
    process's arguments."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "pawflow", "mcp", "--server", url],
        env={**os.environ, "PAWFLOW_TOKEN": token},
    )
    async with Client(params) as client:
        asked = await client.call_tool(
            "request_user_input", {"kind": "text", "message": "Which host?"}
        )
        assert not asked.is_error, asked.content
        return await anyio.to_thread.run_sync(_command_lines)


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_no_secret_or_sign_in_token_escapes_a_full_run(tmp_path: Path, backend: str) -> None:
    model_key = "sk-model-" + secrets.token_hex(12)
    service_token = "svc-" + secrets.token_hex(12)
    db_password = "dbpw-" + secrets.token_hex(8)
    with (
        echoing_model() as model,
        throwaway_postgres() if backend == "postgres" else _sqlite(tmp_path) as plain_db,
    ):
        if backend == "postgres":
            require_postgres()
            db = plain_db.replace("postgres@", f"postgres:{db_password}@", 1)
        else:
            db = plain_db
        env = {"PAWFLOW_DB": db}
        token = _cli(env, "users", "add", "alice")
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        agents = _agents_file(tmp_path, model, service_token)
        log = tmp_path / "serve.log"
        serve_env = {
            **os.environ,
            **env,
            "LEAK_MODEL_KEY": model_key,
            "PAWFLOW_SWEEP_INTERVAL": "3600",
        }
        with log.open("wb") as out:
            served = subprocess.Popen(
                [
                    *(sys.executable, "-m", "pawflow", "serve", "--port", str(port)),
                    *("--agents", str(agents), "--log-level", "info"),
                ],
                env=serve_env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            eventually(lambda: _up(served, url), timeout=60, interval=0.1)
            api = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"})
            with api:
                conversation = _ok(api, "create_conversation", title="help")["conversation"]["id"]
                _ok(api, "assign_agent", conversation_id=conversation, agent="helper")
                _ok(api, "send_message", conversation_id=conversation, content="use the tool")

                def failed_reply() -> list[dict[str, Any]]:
                    found = _ok(api, "get_history", conversation_id=conversation)["messages"]
                    return [m for m in found if FAILED in m["content"]]

                eventually(failed_reply, timeout=60, interval=0.1)
                history = json.dumps(_ok(api, "get_history", conversation_id=conversation))
                # Secrets sent where a log might keep them: a query string, a sign-in link.
                leaky = {"access_token": token, "api_key": model_key, "password": db_password}
                assert api.get("/api/session", params=leaky).status_code == 200
                link = _cli(env, "users", "signin-link", "alice", "--url", url)
                sign_in = link.split("token=", 1)[1]
                with httpx.Client(base_url=url) as browser:
                    same_origin = {"Origin": url}
                    assert browser.get(link).status_code == 200
                    posted = browser.post("/signin", data={"token": sign_in}, headers=same_origin)
                    assert posted.status_code == 303
                    assert browser.get("/api/session").status_code == 200
                events = _events(url, token)
                command_lines = anyio.run(_ask_over_stdio, url, token)
        finally:
            served.send_signal(signal.SIGTERM)
            served.wait(timeout=30)
        rows = _rows(db)
        logged = log.read_text(errors="replace")

    assert FAILED in history
    assert "Incorrect API key provided: Bearer ***" in history  # masked, not lost
    assert model.tool_results == ["connected with SERVICE_TOKEN=***"]
    assert "/signin?token=***" in logged  # the log was written, and masked
    places = {
        "messages": history,
        "events": events,
        "log": logged,
        "rows": rows,
        "arguments": command_lines,
        "model input": "\n".join(model.tool_results),
    }
    leaked = {
        (name, place)
        for name, value in {
            "model key": model_key,
            "service token": service_token,
            "database password": db_password,
            "api token": token,
            "sign-in token": sign_in,
        }.items()
        for place, text in places.items()
        if value in text
    }
    assert leaked == set()


@contextmanager
def _sqlite(directory: Path) -> Iterator[str]:
    yield f"sqlite:///{directory / 'pawflow.db'}"


def _up(process: subprocess.Popen[bytes], url: str) -> bool:
    assert process.poll() is None, "pawflow serve exited"
    try:
        return httpx.get(f"{url}/healthz", timeout=1).is_success
    except httpx.HTTPError:
        return False


def _ok(client: httpx.Client, action: str, **body: Any) -> Any:
    response = client.post(f"/api/actions/{action}", json=body)
    assert response.status_code == 200, response.text
    return response.json()

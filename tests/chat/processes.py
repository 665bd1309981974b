"""Real ``pawflow serve`` processes with agents from a YAML file, and the model they call.

:class:`GatedModel` is an OpenAI-compatible server on 127.0.0.1 that answers slowly: while
its gate is closed every request waits (so a test can kill a server mid-call). It answers
"ask …" with a ``request_confirmation`` call, anything else with ``echo: <what it read>``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from pawflow.server.testing import free_port
from pawflow.testing import eventually
from tests.agent.fake_openai import delta, reply_sse


@dataclass
class GatedModel:
    url: str = ""
    gate: threading.Event = field(default_factory=threading.Event)
    requests: list[list[dict[str, Any]]] = field(default_factory=list)
    waiting: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def hits(self) -> int:
        with self.lock:
            return len(self.requests)

    def read(self, messages: list[dict[str, Any]]) -> tuple[str, str]:
        """The last message the model answers (not its own): role and content."""
        for message in reversed(messages):
            if message["role"] != "assistant":
                return message["role"], message.get("content") or ""
        return "none", ""

    def answer(self, handler: BaseHTTPRequestHandler, messages: list[dict[str, Any]]) -> None:
        role, content = self.read(messages)
        if role == "user" and content.startswith("ask"):
            call = {
                "index": 0,
                "id": f"call_{len(messages)}",
                "type": "function",
                "function": {
                    "name": "request_confirmation",
                    "arguments": json.dumps({"message": "Proceed?", "mode": "confirm"}),
                },
            }
            chunks = [delta(tool_calls=[call]), delta("tool_calls")]
        else:
            chunks = [delta(content=f"echo: {role}: {content[:200]}"), delta("stop")]
        reply_sse(chunks)(handler)


@contextmanager
def gated_model() -> Iterator[GatedModel]:
    model = GatedModel()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            with model.lock:
                model.requests.append(body["messages"])
                model.waiting += 1
            try:
                model.gate.wait(60)
            finally:
                with model.lock:
                    model.waiting -= 1
            with contextlib.suppress(OSError):  # the caller was killed while it waited
                model.answer(self, body["messages"])

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
        model.gate.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def agents_file(directory: Path, model: GatedModel, names: list[str]) -> Path:
    """An agents.yaml of agents on the gated model, each allowed request_confirmation."""
    lines = ["agents:"]
    for name in names:
        lines += [
            f"  - name: {name}",
            f"    model: {{url: '{model.url}', name: fake, api_key_env: GATED_KEY, timeout: 90}}",
            f"    system_prompt: You are {name}.",
            "    tools: [request_confirmation]",
        ]
    path = directory / "agents.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    url: str

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)


def start(db: str, agents: Path, log: Path) -> Served:
    """A ``pawflow serve`` process (not waited for: see :func:`healthy`)."""
    port = free_port()
    env = {
        **os.environ,
        "PAWFLOW_SWEEP_INTERVAL": "1",
        # Leases of five seconds: the takeovers these tests wait for come within 15 s.
        "PAWFLOW_LEASE_TTL": "5",
        "PAWFLOW_MAX_CLOCK_SKEW": "1",
        "GATED_KEY": "sk-test",
    }
    with log.open("ab") as out:
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "pawflow", "serve", "--db", db, "--port", str(port)),
                *("--agents", str(agents), "--log-level", "warning"),
            ],
            env=env,
            stdout=out,
            stderr=out,
        )
    return Served(process, f"http://127.0.0.1:{port}")


def healthy(served: Served) -> Served:
    def up() -> bool:
        assert served.process.poll() is None, "pawflow serve exited"
        try:
            return httpx.get(f"{served.url}/healthz", timeout=1).is_success
        except httpx.HTTPError:
            return False

    eventually(up, timeout=60, interval=0.1)
    return served


@contextmanager
def serving(db: str, agents: Path, log: Path, count: int = 1) -> Iterator[list[Served]]:
    """``count`` servers on one database, healthy; killed at the end."""
    started = [start(db, agents, log) for _ in range(count)]
    try:
        yield [healthy(served) for served in started]
    finally:
        for served in started:
            if served.process.poll() is None:
                served.process.kill()
            served.process.wait(timeout=30)


def post(served: Served, token: str, action: str, **body: Any) -> dict[str, Any]:
    response = httpx.post(
        f"{served.url}/api/actions/{action}",
        json=body,
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found

"""A local HTTP server that plays Slack's Web API for the official client (``slack_sdk``).

It answers ``POST /api/<method>`` the way Slack does (``{"ok": true, …}``, or
``{"ok": false, "error": …}`` for a method told to fail) and records every call it was
sent, with its arguments (JSON or form-encoded, as the client chose).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs


@dataclass
class Call:
    method: str
    args: dict[str, Any]
    token: str


@dataclass
class SlackApi:
    url: str = ""
    calls: list[Call] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)
    """A method's name → the error Slack answers it with."""
    lose: set[str] = field(default_factory=set)
    """Methods that do their work but answer a 500, as if the answer were lost."""
    posted: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """The messages in each conversation, newest first (``conversations.history``)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def called(self, method: str) -> list[dict[str, Any]]:
        with self.lock:
            return [c.args for c in self.calls if c.method == method]

    def record(self, method: str, args: dict[str, Any], token: str) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self.calls.append(Call(method, args, token))
            count = len(self.calls)
        if method in self.failures:
            return 200, {"ok": False, "error": self.failures[method]}
        answer = self._answer(method, args, count)
        return (
            (500, {"ok": False, "error": "internal_error"})
            if method in self.lose
            else (
                200,
                answer,
            )
        )

    def _answer(self, method: str, args: dict[str, Any], count: int) -> dict[str, Any]:
        if method == "chat.postMessage":
            channel = "D" + str(args.get("channel", ""))[1:]
            ts = f"1700000000.{count:06d}"
            message = {"ts": ts, "text": args.get("text"), "metadata": args.get("metadata")}
            with self.lock:
                self.posted.setdefault(channel, []).insert(0, message)
            return {"ok": True, "channel": channel, "ts": ts}
        if method == "conversations.open":
            return {"ok": True, "channel": {"id": "D" + str(args.get("users", ""))[1:]}}
        if method == "conversations.history":
            with self.lock:
                messages = list(self.posted.get(str(args.get("channel")), []))
            return {"ok": True, "messages": messages, "has_more": False}
        if method == "chat.update":
            return {"ok": True, "channel": args.get("channel"), "ts": args.get("ts")}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": f"1700000001.{count:06d}"}
        if method == "views.open":
            return {"ok": True, "view": {"id": f"V{count:08d}", **(args.get("view") or {})}}
        return {"ok": True}


def _args(content_type: str, raw: bytes) -> dict[str, Any]:
    if "json" in content_type:
        loaded = json.loads(raw or b"{}")
        return loaded if isinstance(loaded, dict) else {}
    args: dict[str, Any] = {k: v[-1] for k, v in parse_qs(raw.decode()).items()}
    for key in ("blocks", "view", "metadata"):  # form-encoded objects arrive as JSON text
        if isinstance(args.get(key), str):
            args[key] = json.loads(args[key])
    return args


@contextmanager
def slack_api() -> Iterator[SlackApi]:
    api = SlackApi()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path, _, query = self.path.partition("?")
            self._answer(path, _args("", query.encode()))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            self._answer(self.path, _args(self.headers.get("Content-Type") or "", raw))

        def _answer(self, path: str, args: dict[str, Any]) -> None:
            method = path.rstrip("/").rsplit("/", 1)[-1]
            token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            status, answer = api.record(method, args, token)
            body = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    api.url = f"http://127.0.0.1:{server.server_address[1]}/api/"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def sign(secret: str, timestamp: int, body: str) -> dict[str, str]:
    """The headers Slack sends with ``body``: ``v0=`` HMAC-SHA256 of ``v0:<ts>:<body>``."""
    digest = hmac.new(secret.encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256)
    return {
        "X-Slack-Request-Timestamp": str(timestamp),
        "X-Slack-Signature": f"v0={digest.hexdigest()}",
        "Content-Type": "application/x-www-form-urlencoded",
    }

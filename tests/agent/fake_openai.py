"""A tiny OpenAI-compatible server on 127.0.0.1, speaking the real wire format.

Each request takes the next queued behaviour (or repeats the last one): a JSON reply, an
SSE stream of chunks, an error status, a stream cut short, or a hang until released. With a
``responder``, each request's behaviour is made from the request itself instead.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Behaviour = Callable[[BaseHTTPRequestHandler], None]


def reply_json(body: Any, status: int = 200) -> Behaviour:
    def behave(handler: BaseHTTPRequestHandler) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    return behave


def reply_sse(chunks: list[Any], *, done: bool = True, cut: bool = False) -> Behaviour:
    """Chunks are objects (sent as JSON) or raw strings (sent as they are, to break things)."""

    def behave(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.end_headers()
        handler.wfile.write(b": keep-alive\n\n")
        for chunk in chunks:
            payload = chunk if isinstance(chunk, str) else json.dumps(chunk)
            handler.wfile.write(f"data: {payload}\n\n".encode())
            handler.wfile.flush()
        if done and not cut:
            handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()

    return behave


def completion(content: str | None = None, tool_calls: list[Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
    }


def delta(finish: str | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": fields, "finish_reason": finish}],
    }


class FakeOpenAI:
    def __init__(self) -> None:
        self.queue: list[Behaviour] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.release = threading.Event()
        self._lock = threading.Lock()
        self.url = ""
        self.responder: Callable[[dict[str, Any]], Behaviour] | None = None

    def hang(self) -> Behaviour:
        def behave(handler: BaseHTTPRequestHandler) -> None:
            self.release.wait(10)

        return behave

    def then(self, *behaviours: Behaviour) -> FakeOpenAI:
        self.queue.extend(behaviours)
        return self

    def _next(self) -> Behaviour:
        with self._lock:
            if not self.queue:
                return reply_json({"error": {"message": "nothing queued"}}, 500)
            return self.queue.pop(0) if len(self.queue) > 1 else self.queue[0]

    @property
    def hits(self) -> int:
        return len(self.requests)


@contextmanager
def fake_openai() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            with fake._lock:
                fake.requests.append({"path": self.path, **body})
                fake.headers.append(dict(self.headers))
            behaviour = fake._next() if fake.responder is None else fake.responder(body)
            behaviour(self)

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    fake.url = f"http://127.0.0.1:{server.server_port}/v1"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

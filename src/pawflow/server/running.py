"""Serving an app with uvicorn until told to stop.

Requests are parsed by h11 with a bound on a request's line and headers: past it the
client gets a 431 and the connection closes, before any of the request reaches the app.
No log line carries a secret: every handler masks what :mod:`pawflow.redaction` knows or
recognizes (a ``token=``, ``access_token=``, ``api_key=``, ``password=`` in a query
string, a configured key, a URL's password).
The listening socket is bound first (:func:`listen`), so a port that is taken is reported
before anything else happens.

Several worker processes (:func:`serve_workers`) are uvicorn's own supervisor: it passes
the bound socket to each worker, pings them, replaces one that dies, and on SIGINT or
SIGTERM stops them all and waits for them. Each worker builds its app itself, from a
factory that travels to it pickled (workers are spawned, not forked: no thread, lock or
connection of the parent is inherited).
"""

from __future__ import annotations

import errno
import gc
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import h11
import uvicorn
from fastapi import FastAPI
from uvicorn.config import STARTUP_FAILURE
from uvicorn.protocols.http.h11_impl import H11Protocol

from pawflow.errors import ConfigError
from pawflow.redaction import redact_logs
from pawflow.server.settings import ServerSettings

_TOO_LARGE = b"Request Header Fields Too Large"

log = logging.getLogger("pawflow.server")

ORPHAN_CHECK = 1.0
"""Seconds between a worker's checks that its supervisor still lives."""
WORKER_HEALTHCHECK = 60
"""Seconds a worker may take to answer the supervisor's ping before it counts as hung."""


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, answering 431 (not 400) to oversized request headers."""

    _status_hint = 400

    def handle_events(self) -> None:
        # h11 says why it refused a request in the error's status hint; uvicorn drops it.
        next_event = self.conn.next_event

        def hinted() -> Any:
            try:
                return next_event()
            except h11.RemoteProtocolError as exc:
                self._status_hint = exc.error_status_hint
                raise

        self.conn.next_event = hinted  # type: ignore[method-assign]
        try:
            super().handle_events()
        finally:
            del self.conn.next_event

    def send_400_response(self, msg: str) -> None:
        if self._status_hint != 431:
            super().send_400_response(msg)
            return
        body = b"Request header fields too large."
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        for event in (
            h11.Response(
                status_code=431, headers=headers, reason=b"Request Header Fields Too Large"
            ),
            h11.Data(data=body),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()


KEEP_ALIVE_SECONDS = 5
"""How long an idle connection is kept open; PawFlow's own client lets go of one sooner."""


def server_config(
    app: FastAPI | Callable[[], FastAPI], settings: ServerSettings, **options: Any
) -> uvicorn.Config:
    """uvicorn's configuration for ``app``: bounded headers, a masked access log (in JSON
    logs, uvicorn's lines go through the root logger's JSON handler like every other)."""
    if settings.log_format == "json":
        options.setdefault("log_config", None)
    options.setdefault("timeout_keep_alive", KEEP_ALIVE_SECONDS)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        http=BoundedH11Protocol,
        h11_max_incomplete_event_size=settings.max_header_bytes,
        **options,
    )
    redact_logs()  # after the Config, which (re)configures uvicorn's loggers
    return config


class Server(uvicorn.Server):
    """uvicorn's server, which also ends the event streams as soon as it is told to stop:
    they never end on their own, and would hold the shutdown until its timeout."""

    def __init__(self, config: uvicorn.Config, app: FastAPI) -> None:
        super().__init__(config)
        self.app = app

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.app.state.pawflow.hub.close_streams()
        super().handle_exit(sig, frame)

    def end_streams_and_exit(self) -> None:
        """Stop from code (tests): the same as a signal."""
        self.app.state.pawflow.hub.close_streams()
        self.should_exit = True


def listen(settings: ServerSettings) -> socket.socket:
    """A socket bound to the settings' host and port, for :func:`serve_app`.

    A port that is taken is a :class:`ConfigError` that says how to pick another one.
    """
    host, port = settings.host, settings.port
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise ConfigError(f"cannot listen on {host!r}: {exc.strerror}") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            other = port + 1 if port < 65535 else 8765
            raise ConfigError(
                f"port {port} on {host} is already in use (another pawflow serve?). "
                f"Pick another one with --port {other} or PAWFLOW_PORT={other} "
                f"(PAWFLOW_PORT={other} make run)."
            ) from None
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock


def serve_app(
    app: FastAPI,
    settings: ServerSettings,
    *,
    log_level: str = "info",
    sock: socket.socket | None = None,
) -> None:
    """Serve ``app`` until interrupted, on ``sock`` (from :func:`listen`), else on the
    settings' host and port."""
    freeze_after_startup(app)
    config = server_config(app, settings, log_level=log_level.lower(), timeout_graceful_shutdown=5)
    Server(config, app).run(sockets=None if sock is None else [sock])


def freeze_after_startup(app: FastAPI) -> None:
    """Once ``app`` has started (every module loaded, its services running), keep what it
    made so far out of the garbage collector's full passes (``gc.freeze``). Such a pass
    walks every object the collector tracks, on the thread whose allocation set it off,
    holding the interpreter meanwhile: with the server's 140,000 objects after start-up, it
    stopped every request in flight for about 75 ms on a 2-core machine; frozen, a pass
    walks only what came later (about 5 ms). What is frozen lives as long as the server."""
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(started: Any) -> AsyncIterator[Any]:
        async with inner(started) as state:
            gc.collect()  # what start-up left behind goes first, not frozen with the rest
            gc.freeze()
            yield state

    app.router.lifespan_context = lifespan


@dataclass(frozen=True)
class Worker:
    """The app factory a worker process calls (``build`` must pickle: a module-level class
    or function and plain data). A build that fails stops every worker rather than being
    retried for ever, and the worker ends its event streams as soon as it is told to stop."""

    build: Callable[[], FastAPI]
    supervisor: int = field(default_factory=os.getpid)
    """The supervisor's process id, taken where the factory is made (in the supervisor)."""

    def __call__(self) -> FastAPI:
        try:
            app = self.build()
        except Exception:
            log.exception("this server process could not start")
            sys.exit(STARTUP_FAILURE)  # the supervisor stops instead of starting another
        _end_streams_on_exit(app)
        _stop_when_orphaned(self.supervisor)
        freeze_after_startup(app)
        return app


def _stop_when_orphaned(parent: int) -> None:
    """A worker whose supervisor died (SIGKILL, a crash) stops as if told to, rather than
    serving on without anyone to stop it: its parent is another process once orphaned
    (even if that happened while it was still loading)."""
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(ORPHAN_CHECK):
            if os.getppid() != parent:
                log.warning("the supervisor of this server process is gone: stopping")
                os.kill(os.getpid(), signal.SIGTERM)
                return

    threading.Thread(target=watch, name="pawflow-orphan-watch", daemon=True).start()


def _end_streams_on_exit(app: FastAPI) -> None:
    """Chain the stop signals' handlers (uvicorn's, installed before the app is built) with
    the ending of the event streams, which never end on their own and would hold the
    shutdown until its timeout (what :class:`Server` does in one process)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(sig)
        if not callable(previous):
            continue

        def handler(
            number: int, frame: FrameType | None, previous: Callable[..., Any] = previous
        ) -> None:
            app.state.pawflow.hub.close_streams()
            previous(number, frame)

        signal.signal(sig, handler)


def serve_workers(
    build: Callable[[], FastAPI],
    settings: ServerSettings,
    *,
    workers: int,
    log_level: str = "info",
    sock: socket.socket,
) -> bool:
    """Serve on ``sock`` with ``workers`` processes, each with the app ``build()`` makes,
    until SIGINT or SIGTERM; False when a worker could not start (the others are stopped)."""
    config = server_config(
        Worker(build),
        settings,
        log_level=log_level.lower(),
        timeout_graceful_shutdown=5,
        workers=workers,
        factory=True,
        # A worker answers the supervisor's pings once it has loaded the server's modules:
        # on a busy machine that takes longer than uvicorn's 5 s, and a worker still
        # loading would be killed and replaced again and again.
        timeout_worker_healthcheck=WORKER_HEALTHCHECK,
    )
    from uvicorn.supervisors import Multiprocess  # noqa: PLC0415 - only with workers

    supervisor = Multiprocess(config, sockets=[sock])
    supervisor.run()
    return all(process.exitcode != STARTUP_FAILURE for process in supervisor.processes)

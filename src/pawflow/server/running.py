"""Serving an app with uvicorn until told to stop."""

from __future__ import annotations

from types import FrameType

import uvicorn
from fastapi import FastAPI

from pawflow.server.settings import ServerSettings


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


def serve_app(app: FastAPI, settings: ServerSettings, *, log_level: str = "info") -> None:
    """Serve ``app`` on the settings' host and port until interrupted."""
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=log_level.lower(),
        timeout_graceful_shutdown=5,
    )
    Server(config, app).run()

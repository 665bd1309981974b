"""The PawFlow server over HTTP: the action API, server-sent events, uploads, sign-in and
the web chat's files. It serves a store and the services it is given; ``pawflow.serve``
assembles them."""

from __future__ import annotations

from pawflow.server.app import create_app
from pawflow.server.context import MessageHandler
from pawflow.server.settings import ServerSettings

__all__ = ["MessageHandler", "ServerSettings", "create_app"]

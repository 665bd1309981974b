"""The PawFlow server: the action API, server-sent events, uploads, sign-in."""

from __future__ import annotations

from pawflow.server.app import create_app
from pawflow.server.extensions import EXTENSIONS, ServeExtension, Service, register
from pawflow.server.settings import ServerSettings

__all__ = ["EXTENSIONS", "ServeExtension", "ServerSettings", "Service", "create_app", "register"]

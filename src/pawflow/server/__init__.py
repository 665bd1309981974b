"""The PawFlow server: the action API, server-sent events, uploads, sign-in.

Names are loaded on first use, so that importing ``pawflow.server.settings`` or
``pawflow.server.extensions`` (as the command line and other parts do) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pawflow.server.app import create_app
    from pawflow.server.extensions import EXTENSIONS, ServeExtension, Service, register
    from pawflow.server.settings import ServerSettings

_HOMES = {
    "EXTENSIONS": "pawflow.server.extensions",
    "ServeExtension": "pawflow.server.extensions",
    "ServerSettings": "pawflow.server.settings",
    "Service": "pawflow.server.extensions",
    "create_app": "pawflow.server.app",
    "register": "pawflow.server.extensions",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'pawflow.server' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


__all__ = ["EXTENSIONS", "ServeExtension", "ServerSettings", "Service", "create_app", "register"]

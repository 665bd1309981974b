"""The PawFlow server over HTTP: the action API, server-sent events, uploads, sign-in and
the web chat's files. It serves a store and the services it is given; ``pawflow.serve``
assembles them.

The names below are loaded on first use (PEP 562), so that the modules of this package that
need no HTTP framework (:mod:`~pawflow.server.credentials`, :mod:`~pawflow.server.settings`)
load without it: ``pawflow users add`` never imports FastAPI.

It is the ``server`` extra (``pip install 'pawflow[server]'``): without it, importing any of
its modules says so (:class:`~pawflow.errors.MissingExtra`).
"""

from __future__ import annotations

import typing

from pawflow import extras, lazy

extras.require("server", part="the PawFlow server")

if typing.TYPE_CHECKING:
    from pawflow.server.app import create_app
    from pawflow.server.context import MessageHandler
    from pawflow.server.settings import ServerSettings

__getattr__, __dir__ = lazy.exports(
    __name__,
    {
        "MessageHandler": "pawflow.server.context",
        "ServerSettings": "pawflow.server.settings",
        "create_app": "pawflow.server.app",
    },
)

__all__ = ["MessageHandler", "ServerSettings", "create_app"]

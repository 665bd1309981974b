"""``pawflow chat``: a full-screen terminal client of the PawFlow server (Textual).

It is the ``tui`` extra (``pip install 'pawflow[tui]'``): without it, importing any of its
modules says so (:class:`~pawflow.errors.MissingExtra`).
"""

from __future__ import annotations

import typing

from pawflow import extras, lazy

extras.require("tui", part="the terminal app (pawflow chat)")

if typing.TYPE_CHECKING:
    from pawflow.tui.app import ChatApp

__getattr__, __dir__ = lazy.exports(__name__, {"ChatApp": "pawflow.tui.app"})

__all__ = ["ChatApp"]

"""``pawflow chat``: a full-screen terminal client of the PawFlow server (Textual)."""

from __future__ import annotations

from pawflow.tui.app import ChatApp

__all__ = ["ChatApp"]

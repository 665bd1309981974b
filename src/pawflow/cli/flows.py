"""Commands of the flows part (filled by the issue that builds it)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this part's commands to the ``pawflow`` app."""

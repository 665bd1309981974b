"""Every demo of PawFlow: the deploy agent, the chat plugins (planner, organizer, inbox),
the example flows and the tour of every kind. ``pawflow serve --demo`` sets them up.

Nothing is exported at the package level: each demo is its own module (``agents``, ``chat``,
``flows``, ``tour``, ``plugins.*``), imported by ``pawflow.serve``, which installs them
only with ``--demo`` (none is an entry point).
"""

from __future__ import annotations

__all__: list[str] = []

"""Bridges that make PawFlow the durable inbox of other agent frameworks.

Each bridge lives in its own module and imports its framework there only, so ``import pawflow``
never needs the optional extras: ``pawflow.bridges.langgraph`` (extra ``langgraph``) and
``pawflow.bridges.openai_agents`` (extra ``openai-agents``). See ``docs/bridges.md``.
"""

from __future__ import annotations

__all__: list[str] = []

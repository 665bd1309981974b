"""Bridges that make PawFlow the durable inbox of other agent frameworks.

Each bridge lives in its own module and imports its framework there only, so ``import pawflow``
never needs the optional extras: ``pawflow.bridges.langgraph`` (extra ``langgraph``),
``openai_agents`` (``openai-agents``), ``pydantic_ai`` (``pydantic-ai``), ``google_adk``
(``google-adk``), ``agent_framework`` (``agent-framework``) and ``crewai`` (``crewai``). What
they share — the parked payloads (``parking``), the questions they ask (``questions``), the
event loop of resumed runs (``loop``) — imports no framework. See ``docs/bridges.md``.
"""

from __future__ import annotations

__all__: list[str] = []

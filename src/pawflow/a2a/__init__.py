"""A2A: PawFlow's agents served as A2A agents, their questions as input-required tasks.

:func:`mount` adds ``/a2a/{agent}`` (JSON-RPC) and its agent card to the server; the
``a2a-sdk`` package is loaded on the first request to them (the ``a2a`` extra).
"""

from __future__ import annotations

from pawflow.a2a.mounting import PATH, mount

__all__ = ["PATH", "mount"]

"""Registers the flows part with ``pawflow serve`` (imported by the server when present)."""

from __future__ import annotations

from pawflow.flow.service import flow_extension
from pawflow.server.extensions import register

register(flow_extension)

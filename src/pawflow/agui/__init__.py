"""AG-UI: PawFlow's agents behind an AG-UI endpoint, their questions as interrupts.

:func:`mount` adds ``POST /agui/{agent}`` to the server; the ``ag-ui-protocol`` package is
loaded on the first request to it (the ``agui`` extra).
"""

from __future__ import annotations

from pawflow.agui.mounting import PATH, mount

__all__ = ["PATH", "mount"]

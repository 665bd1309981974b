"""The dashboard and the manual speak of the metrics a server serves, every one of them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pawflow import telemetry
from pawflow.store.engine.metrics import families as gauge_families

ROOT = Path(__file__).parents[2]
DASHBOARD = ROOT / "docs" / "dashboards" / "pawflow.json"
OPERATIONS = ROOT / "docs" / "operations.md"
SUFFIXES = ("_total", "_bucket", "_count", "_sum", "_gcount", "_gsum")


def served_names() -> set[str]:
    """Every series name of the exposition (a family's, with its suffixes)."""
    families = [i.family for i in telemetry.INSTRUMENTS if i.family.name.startswith("pawflow_")]
    families += gauge_families()
    names = {f.name for f in families}
    return names | {f"{f.name}{suffix}" for f in families for suffix in SUFFIXES}


def test_every_query_of_the_dashboard_names_served_metrics() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    served = served_names()
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    assert len(exprs) > 10
    used = {name for expr in exprs for name in re.findall(r"\bpawflow_\w+", expr)}
    assert used <= served, used - served
    for panel in dashboard["panels"]:
        assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24, panel["title"]


def test_the_manual_explains_every_metric() -> None:
    text = OPERATIONS.read_text()
    families = [
        i.family.name for i in telemetry.INSTRUMENTS if i.family.name.startswith("pawflow_")
    ]
    families += [f.name for f in gauge_families()]
    for name in families:
        shown = (
            f"{name}_total"
            if any(
                i.family.name == name and i.family.type == "counter" for i in telemetry.INSTRUMENTS
            )
            else name
        )
        assert f"`{shown}`" in text, name

"""Take the dashboard's screenshot for the manual (docs/operations.md) from real data.

Runs ``pawflow serve --demo`` with its metrics on and Debian's Prometheus scraping it, makes a
few minutes of scripted work (requests asked, answered through several channels, let expire,
a flow resumed on its answers), then runs every query of ``docs/dashboards/pawflow.json``
against that Prometheus and draws the panels where the dashboard places them, in a plain
HTML page that Debian's chromium turns into a PNG. Grafana itself is not involved: the page
shows what the dashboard's queries return, laid out as the dashboard lays them out::

    .venv/bin/python scripts/dashboard_screenshot.py [--minutes 4] [--out docs/img/dashboard.png]
"""

from __future__ import annotations

import argparse
import html
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.operations.prom import METRICS_TOKEN, prometheus  # noqa: E402
from tests.operations.test_prometheus import FLOW  # noqa: E402
from tests.served import Served  # noqa: E402

from pawflow import open_store  # noqa: E402
from pawflow.client import Client  # noqa: E402
from pawflow.flow import FlowFile  # noqa: E402
from pawflow.flow import deployments as deps  # noqa: E402
from pawflow.server.testing import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

DASHBOARD = ROOT / "docs" / "dashboards" / "pawflow.json"
COLORS = ["#2f7ed8", "#e4572e", "#29a36a", "#f3a712", "#8e44ad", "#16a2b8", "#c0392b", "#7f8c8d"]
ROW = 34  # pixels per unit of a panel's height


def work(url: str, token: str, db: str, minutes: float) -> None:
    """Scripted activity: ask, answer through several channels, let some expire, resume a flow."""
    rng = random.Random(27)
    with Client(url, token) as client, open_store(db) as store:
        conversation = client.create_conversation("Operations").id
        demo = client.create_conversation("Planning").id
        store.turns.assign(demo, "deployer")
        deployment, _ = deps.deploy(store, FLOW, conversation_id=conversation)
        end = time.monotonic() + minutes * 60
        n = 0
        while time.monotonic() < end:
            n += 1
            kind = rng.choice(["confirm", "confirm", "text", "choice"])
            options = {"options": ["yes", "no", "later"]} if kind == "choice" else {}
            expires = {"expires_in": "40s"} if rng.random() < 0.2 else {}
            client.request_interaction(conversation, kind, f"Question {n}?", **options, **expires)
            if n % 3 == 0:
                deps.inject(store, deployment.id, FlowFile.create(attributes={"n": str(n)}))
            if n % 4 == 0:  # a message to the demo agent: a turn of the turn queue
                client.send_message(demo, f"Plan step {n}")
            pending = [
                i for i in client.iter_interactions(status="pending") if i.expires_at is None
            ]
            for item in pending[: rng.randint(0, 2)]:
                answer: Any = {"confirm": True, "text": "done", "choice": "yes"}.get(item.kind)
                if answer is None:
                    continue
                via = rng.choice(["api", "button", "button", "cli"])
                client.respond_interaction(item.id, answer, via=via)  # type: ignore[arg-type]
            time.sleep(rng.uniform(1.0, 3.0))


def series(prom: str, expr: str, start: float, end: float, step: float) -> list[dict[str, Any]]:
    response = httpx.get(
        f"{prom}/api/v1/query_range",
        params={"query": expr, "start": start, "end": end, "step": step},
        timeout=30,
    )
    response.raise_for_status()
    result: list[dict[str, Any]] = response.json()["data"]["result"]
    return result


def instant(prom: str, expr: str, at: float) -> list[dict[str, Any]]:
    response = httpx.get(f"{prom}/api/v1/query", params={"query": expr, "time": at}, timeout=30)
    response.raise_for_status()
    result: list[dict[str, Any]] = response.json()["data"]["result"]
    return result


def legend(template: str, labels: dict[str, str]) -> str:
    text = template
    for key, value in labels.items():
        text = text.replace("{{" + key + "}}", value)
    return text.replace("{{", "").replace("}}", "") or ", ".join(labels.values()) or "value"


def number(value: float, unit: str | None) -> str:
    if math.isnan(value):
        return "-"
    if unit == "s":
        if value >= 90:
            return f"{value / 60:.1f} min"
        return f"{value:.3g} s"
    return f"{value:.3g}"


def chart(lines: list[tuple[str, list[tuple[float, float]]]], start: float, end: float) -> str:
    width, height, left, pad = 560, 190, 56, 10
    values = [v for _, points in lines for _, v in points if not math.isnan(v)]
    top = max(values, default=1.0) * 1.1 or 1.0
    out = [f'<svg viewBox="0 -{pad} {width} {height + 20 + pad}" class="chart">']
    for step in range(5):
        y = height - height * step / 4
        out.append(f'<line x1="{left}" x2="{width}" y1="{y}" y2="{y}" class="grid"/>')
        label = f"{top * step / 4:.3g}"
        out.append(
            f'<text x="{left - 4}" y="{y + 4}" class="axis" text-anchor="end">{label}</text>'
        )
    for index, (_, points) in enumerate(lines):
        path = " ".join(
            f"{left + (width - left) * (t - start) / (end - start):.1f},"
            f"{height - height * v / top:.1f}"
            for t, v in points
            if not math.isnan(v)
        )
        color = COLORS[index % len(COLORS)]
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
    minutes = (end - start) / 60
    out.append(f'<text x="{left}" y="{height + 16}" class="axis">-{minutes:.0f} min</text>')
    out.append(f'<text x="{width}" y="{height + 16}" class="axis" text-anchor="end">now</text>')
    out.append("</svg>")
    keys = "".join(
        f'<span><i style="background:{COLORS[i % len(COLORS)]}"></i>{html.escape(name)}</span>'
        for i, (name, _) in enumerate(lines)
    )
    return "".join(out) + f'<div class="legend">{keys}</div>'


def render(prom: str, start: float, end: float) -> str:
    dashboard = json.loads(DASHBOARD.read_text())
    step = max(2.0, (end - start) / 200)
    cells = []
    for panel in dashboard["panels"]:
        grid = panel["gridPos"]
        place = (
            f"grid-column:{grid['x'] + 1}/span {grid['w']};"
            f"grid-row:{grid['y'] + 1}/span {grid['h']}"
        )
        title = html.escape(panel["title"])
        unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit")
        if panel["type"] == "row":
            cells.append(f'<h2 style="{place}">{title}</h2>')
            continue
        body = ""
        if panel["type"] == "stat":
            found = instant(prom, panel["targets"][0]["expr"], end)
            value = float(found[0]["value"][1]) if found else float("nan")
            body = f'<div class="stat">{number(value, unit)}</div>'
        elif panel["type"] == "table":
            found = instant(prom, panel["targets"][0]["expr"], end)
            rows = sorted(
                (r["metric"].get("lease", ""), r["metric"].get("holder", "")) for r in found
            )
            body = (
                "<table><tr><th>lease</th><th>holder</th></tr>"
                + "".join(
                    f"<tr><td>{html.escape(a)}</td><td>{html.escape(b)}</td></tr>" for a, b in rows
                )
                + "</table>"
            )
        else:
            lines = []
            for target in panel["targets"]:
                for result in series(prom, target["expr"], start, end, step):
                    points = [(float(t), float(v)) for t, v in result["values"]]
                    lines.append((legend(target["legendFormat"], result["metric"]), points))
            body = chart(lines, start, end)
        cells.append(f'<section style="{place}"><h3>{title}</h3>{body}</section>')
    return PAGE.format(
        title=html.escape(dashboard["title"]),
        minutes=(end - start) / 60,
        cells="".join(cells),
        row=ROW,
    )


PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>
body {{ font: 13px system-ui, sans-serif; background: #111217; color: #ccccdc; margin: 16px; }}
h1 {{ font-size: 18px; margin: 0 0 4px; }} .note {{ color: #8e8e9e; margin: 0 0 12px; }}
main {{ display: grid; grid-template-columns: repeat(24, 1fr); grid-auto-rows: {row}px;
        gap: 6px; }}
section {{ background: #181b1f; border: 1px solid #2c3235; border-radius: 3px; padding: 6px 8px;
           overflow: hidden; }}
h2 {{ font-size: 14px; margin: 8px 0 0; align-self: end; }}
h3 {{ font-size: 12px; font-weight: 600; margin: 0 0 4px; }}
.stat {{ font-size: 34px; font-weight: 600; color: #73bf69; margin-top: 10px; }}
.chart {{ width: 100%; height: calc(100% - 52px); }}
.grid {{ stroke: #2c3235; }} .axis {{ fill: #8e8e9e; font-size: 10px; }}
.legend span {{ margin-right: 10px; font-size: 11px; white-space: nowrap; }}
.legend i {{ display: inline-block; width: 10px; height: 3px; margin: 0 4px 3px 0; }}
table {{ border-collapse: collapse; width: 100%; font-size: 11px; }}
td, th {{ text-align: left; padding: 2px 6px; border-bottom: 1px solid #2c3235; }}
</style></head><body><h1>{title}</h1>
<p class="note">The dashboard's own queries, over {minutes:.0f} minutes of scripted work on a real
<code>pawflow serve --demo</code> scraped by Prometheus, drawn where the dashboard places them
(rendered by scripts/dashboard_screenshot.py, not by Grafana).</p>
<main>{cells}</main></body></html>"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--minutes", type=float, default=4.0)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "dashboard.png")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pawflow-dashboard-") as scratch:
        folder = Path(scratch)
        db = f"sqlite:///{folder / 'pawflow.db'}"
        served = Served(
            db,
            folder,
            args=["--demo"],
            env={
                "PAWFLOW_METRICS": "on",
                "PAWFLOW_METRICS_TOKEN": METRICS_TOKEN,
                "PAWFLOW_SWEEP_INTERVAL": "1",
            },
        )
        served.start()
        try:
            with prometheus(folder, f"127.0.0.1:{served.port}", interval="1s") as prom:
                start = time.time()
                work(served.url, served.token("ops"), db, args.minutes)
                end = time.time()
                page = folder / "dashboard.html"
                page.write_text(render(prom, start, end))
        finally:
            served.kill()
        args.out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                CHROMIUM,
                *CHROMIUM_ARGS,
                "--hide-scrollbars",
                f"--screenshot={args.out.resolve()}",
                "--window-size=1400,1900",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
        )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

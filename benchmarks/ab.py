"""``--ab REF``: the cycle rows measured alternately on this tree and on a git ref.

The ref is checked out in a temporary worktree; each round runs the chosen sections once in
a fresh process for each tree (this tree's harness, each tree's ``src`` first on the path),
the order swapped every round, so both trees share the machine's minutes alike. What is
compared: every figure in cycles/s, as the median of the rounds, with the ratio of this
tree's to the ref's. The ref must have the public API the harness uses
(``Store.ask`` with ``Park``).
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT, Run

CYCLE_SECTIONS = ("sqlite", "postgres")
FIGURE = re.compile(r"^(?P<name>[^:|]+): (?P<value>[\d,.]+) cycles/s")


def figures(output: str) -> dict[str, float]:
    """The figures in cycles/s a run printed, by name, and each one-thread cycle's share of
    the raw floor measured in the same run (``… ÷ floor``: steadier than either alone)."""
    found: dict[str, float] = {}
    for line in output.splitlines():
        match = FIGURE.match(line)
        if match:
            found[match["name"]] = float(match["value"].replace(",", ""))
    floors = {name.split()[0]: value for name, value in found.items() if "raw floor (" in name}
    for name, value in list(found.items()):
        floor = floors.get(name.split()[0])
        if name.endswith("pawflow cycle") and floor:
            found[f"{name} ÷ floor"] = value / floor
    return found


def _measure(tree: Path, sections: list[str], quick: bool) -> dict[str, float]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tree / "src"), str(ROOT / "benchmarks")]),
    }
    command = [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--no-peers", "--repeats", "1"]
    command += ["--only", ",".join(sections)] + (["--quick"] if quick else [])
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the run on {tree} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return figures(done.stdout)


def compare(run: Run, ref: str, sections: list[str], rounds: int) -> None:
    """Measure ``sections`` (the cycle ones) ``rounds`` times on each tree, alternating."""
    chosen = [name for name in sections if name in CYCLE_SECTIONS] or list(CYCLE_SECTIONS)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", ref], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="pawflow-ab-") as scratch:
        other = Path(scratch) / "ref"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "--quiet", str(other), ref], cwd=ROOT, check=True
        )
        try:
            run.heading(f"A/B: this tree against {ref} ({commit}), {rounds} rounds, alternating")
            ours: dict[str, list[float]] = {}
            theirs: dict[str, list[float]] = {}
            for number in range(rounds):
                order = [(ROOT, ours), (other, theirs)]
                for tree, kept in order if number % 2 == 0 else order[::-1]:
                    for name, value in _measure(tree, chosen, run.quick).items():
                        kept.setdefault(name, []).append(value)
                run.say(f"round {number + 1}: done")
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(other)], cwd=ROOT, check=False
            )
    for name in sorted(ours):
        if name not in theirs:
            continue
        mine, base = statistics.median(ours[name]), statistics.median(theirs[name])
        shown = "{:.4f}" if name.endswith("floor") else "{:,.0f}"
        unit = "" if name.endswith("floor") else " cycles/s"
        trials = " / ".join(
            f"{shown.format(a)}:{shown.format(b)}"
            for a, b in zip(ours[name], theirs[name], strict=False)
        )
        run.say(
            f"{name}: {shown.format(mine)} vs {shown.format(base)}{unit}"
            f"  | ratio {mine / base:.2f}x  (rounds, this:ref: {trials})"
        )

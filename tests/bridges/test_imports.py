"""The bridges' frameworks are optional extras: PawFlow runs without importing them."""

from __future__ import annotations

import subprocess
import sys


def test_pawflow_never_imports_a_bridged_framework_on_its_own() -> None:
    check = (
        "import sys\n"
        "import pawflow, pawflow.bridges, pawflow.bridges.parking, pawflow.cli, pawflow.serve\n"
        "loaded = {'langgraph', 'langchain_core', 'agents', 'openai'} & set(sys.modules)\n"
        "assert not loaded, f'imported {loaded}'\n"
    )
    subprocess.run([sys.executable, "-c", check], check=True, timeout=60)

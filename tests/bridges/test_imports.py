"""The bridges' frameworks are optional extras: PawFlow runs without importing them."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_pawflow_never_imports_a_bridged_framework_on_its_own() -> None:
    check = (
        "import sys\n"
        "import pawflow, pawflow.bridges, pawflow.bridges.parking, pawflow.cli, pawflow.serve\n"
        "frameworks = {'langgraph', 'langchain_core', 'agents', 'openai', 'pydantic_ai',\n"
        "    'google.adk', 'google.genai', 'litellm', 'agent_framework', 'crewai'}\n"
        "loaded = frameworks & set(sys.modules)\n"
        "assert not loaded, f'imported {loaded}'\n"
    )
    subprocess.run([sys.executable, "-c", check], check=True, timeout=60)


@pytest.mark.parametrize(
    "bridge", ["pydantic_ai", "google_adk", "agent_framework", "langgraph", "openai_agents"]
)
def test_a_bridge_loads_its_framework_and_the_store_never_the_server(bridge: str) -> None:
    """What a framework's process needs: the bridge, the store and the contract."""
    check = (
        "import sys\n"
        f"import pawflow.bridges.{bridge}\n"
        "ours = {'pawflow.server', 'pawflow.serve', 'pawflow.cli', 'pawflow.mcp', 'pawflow.tui',\n"
        "    'pawflow.agent', 'pawflow.flow', 'pawflow.chat'}\n"
        "loaded = ours & set(sys.modules)\n"
        "assert not loaded, f'imported {loaded}'\n"
    )
    subprocess.run([sys.executable, "-c", check], check=True, timeout=120)

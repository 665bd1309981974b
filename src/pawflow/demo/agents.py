"""The demo agent, "deployer": asks where to deploy, waits durably, then deploys.

Offline it plays :file:`demo_script.yaml` on the scripted model; with ``PAWFLOW_MODEL_*``
set it runs on that model with the same tools.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Literal

from pawflow.agent.models.base import Model
from pawflow.agent.models.openai import OpenAIChatModel
from pawflow.agent.models.scripted import ScriptedModel
from pawflow.agent.spec import AgentSpec
from pawflow.agent.tools import Tool

DEMO_AGENT = "deployer"
DEMO_SCRIPT = "demo_script.yaml"

INSTRUCTIONS = """\
You are "deployer", a release assistant for a small web app with two environments,
staging and production. When asked to deploy, ask the user which environment with
request_confirmation (mode "choice", options staging and production, expires_in "1d"), then
end your turn; when the answer arrives, call deploy with it and report the result in one
sentence. Rolling back is done with the rollback tool. Be brief."""

_builds = itertools.count(42)


def deploy(environment: Literal["staging", "production"]) -> str:
    """Deploy the current build of the app.

    Args:
        environment: Where to deploy: staging or production.
    """
    return f"Deployed build {next(_builds)} to {environment}."


def rollback(environment: Literal["staging", "production"]) -> str:
    """Roll an environment back to its previous build.

    Args:
        environment: The environment to roll back.
    """
    return f"Rolled back {environment} to its previous build."


def demo_model(env: Mapping[str, str] | None = None) -> Model:
    """The model named by ``PAWFLOW_MODEL_*``, else the offline script."""
    real = OpenAIChatModel.from_env(env)
    if real is not None:
        return real
    return ScriptedModel.from_package("pawflow.demo", DEMO_SCRIPT)


def demo_agent(model: Model | None = None) -> AgentSpec:
    return AgentSpec(
        name=DEMO_AGENT,
        instructions=INSTRUCTIONS,
        model=model if model is not None else demo_model(),
        tools=[Tool.from_function(deploy), Tool.from_function(rollback, consequential=True)],
    )

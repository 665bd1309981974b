"""The ``planner`` agent: a general assistant whose answers end on questions.

It proposes plans ("Would you like to proceed with this plan?"), offers numbered lists
("Want me to open any of these?") and asks quick questions with ``ask_user`` — so it is what
session continuations are for. Offline it plays :file:`planner_script.yaml` on the scripted
model; with ``PAWFLOW_MODEL_*`` set it runs on that model.

Config: ``model`` (a :class:`~pawflow.agent.models.base.Model`, for tests), ``name``
(default ``planner``).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import TYPE_CHECKING, Any

from pawflow.agent.models.base import Model
from pawflow.agent.models.openai import OpenAIChatModel
from pawflow.agent.models.scripted import ScriptedModel
from pawflow.agent.spec import AgentSpec
from pawflow.errors import InvalidInput

if TYPE_CHECKING:
    from pawflow.chat.plugins import PluginAPI

PLANNER = "planner"
SCRIPT = "planner_script.yaml"

INSTRUCTIONS = """\
You are "planner", a general assistant that plans work with the user.
- When you propose a plan, list its steps as a numbered list and end your answer with
  "Would you like to proceed with this plan?".
- When you offer things to choose from, number them and end with a question asking which one.
- When one missing detail blocks you, call ask_user with a short question and stop there.
- A user message that begins with [answer] carries the user's reply to your last question,
  already read for you (yes or no, or the item picked): act on it.
Be brief."""


def planner_script() -> ScriptedModel:
    text = resources.files("pawflow.demo.plugins").joinpath(SCRIPT).read_text("utf-8")
    return ScriptedModel.from_text(text)


def planner_model(env: Mapping[str, str] | None = None) -> Model:
    """The model named by ``PAWFLOW_MODEL_*``, else the offline script."""
    real = OpenAIChatModel.from_env(env)
    return real if real is not None else planner_script()


def planner_agent(model: Model | None = None, *, name: str = PLANNER) -> AgentSpec:
    return AgentSpec(
        name=name,
        instructions=INSTRUCTIONS,
        model=model if model is not None else planner_model(),
    )


def register(services: PluginAPI, config: Mapping[str, Any]) -> None:
    unknown = set(config) - {"model", "name"}
    if unknown:
        raise InvalidInput(f"planner: unknown settings {sorted(unknown)}")
    model = config.get("model")
    services.register_agent(planner_agent(model, name=str(config.get("name") or PLANNER)))

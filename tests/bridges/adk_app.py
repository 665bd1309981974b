"""A Google ADK agent whose refunds need confirmation, whose leave bookings confirm a payload
and whose tickets run long, its model a local fake OpenAI server (through LiteLLM) and its
sessions in ADK's SQLite session service; and a command line to run it in a process of its
own: ``python -m tests.bridges.adk_app start|listen --db URL --model URL --sessions PATH …``.

``start`` runs the agent on a new session until it pauses, asks through PawFlow, then listens
until it is killed; ``listen`` resumes runs on the answers until one ends, then prints its
last text and the tools' effects, as JSON.
"""

from __future__ import annotations

import os

# LiteLLM reads its price list from the network unless told to use the one it ships.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse
import asyncio
import json
import sys
import threading
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.events import Event
from google.adk.models.lite_llm import LiteLlm
from google.adk.runners import Runner
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.long_running_tool import LongRunningFunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from pawflow import Store, open_store
from pawflow.bridges.google_adk import AdkBridge
from pawflow.testing import eventually

APP = "shop"
effects: list[Any] = []


def refund(order: str, amount: int) -> str:
    """Refund an amount on an order."""
    effects.append(["refund", order, amount])
    return f"refunded {amount} on {order}"


def leave(days: int, tool_context: ToolContext) -> dict[str, Any]:
    """Book days off: a manager confirms how many."""
    confirmation = tool_context.tool_confirmation
    if confirmation is None:
        tool_context.request_confirmation(
            hint=f"Approve {days} days off?", payload={"approved_days": days, "note": ""}
        )
        return {"status": "waiting for a manager"}
    if not confirmation.confirmed:
        return {"status": "refused"}
    effects.append(["leave", confirmation.payload])
    return {"booked": confirmation.payload}


def ticket(topic: str) -> dict[str, Any]:
    """Open a ticket that a person answers later."""
    return {"status": "pending", "kind": "text", "message": f"What should we do about {topic}?"}


def runner_for(model_url: str, sessions: Path) -> Runner:
    model = LiteLlm(model="openai/fake-model", api_base=model_url, api_key="offline")
    agent = LlmAgent(
        name="support",
        model=model,
        instruction="Help the customer.",
        tools=[
            FunctionTool(refund, require_confirmation=True),
            leave,
            LongRunningFunctionTool(ticket),
        ],
    )
    return Runner(agent=agent, app_name=APP, session_service=SqliteSessionService(str(sessions)))


def run_agent(runner: Runner, text: str, session_id: str) -> list[Event]:
    """A run as an application starts it, on a new session."""

    async def run() -> list[Event]:
        await runner.session_service.create_session(
            app_name=APP, user_id="customer", session_id=session_id
        )
        message = types.Content(role="user", parts=[types.Part(text=text)])
        return [
            event
            async for event in runner.run_async(
                user_id="customer", session_id=session_id, new_message=message
            )
        ]

    return asyncio.run(run())


def last_text(events: list[Event]) -> str:
    texts = [p.text for e in events if e.content for p in e.content.parts or [] if p.text]
    return texts[-1] if texts else ""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["start", "listen"])
    parser.add_argument("--db", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--sessions", required=True, type=Path)
    parser.add_argument("--owner", default="")
    parser.add_argument("--conversation", default="")
    args = parser.parse_args(argv)
    store: Store = open_store(args.db)
    runner = runner_for(args.model, args.sessions)
    finished: list[list[Event]] = []
    done = threading.Event()

    def keep(events: list[Event]) -> None:
        finished.append(events)
        done.set()

    bridge = AdkBridge(store, runner, name="support", on_result=keep).listen()
    if args.command == "start":
        run_agent(runner, "Refund A-1 and book three days off.", "s-1")
        asked = bridge.ask(
            user_id="customer",
            session_id="s-1",
            owner=args.owner,
            conversation_id=args.conversation,
        )
        assert asked is not None
    eventually(done.is_set, timeout=300)  # `start` is killed before it ends
    print(json.dumps({"output": last_text(finished[0]), "effects": effects}), flush=True)
    bridge.close()
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

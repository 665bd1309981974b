"""An OpenAI Agents SDK agent whose refunds need approval, its model a local fake OpenAI
server, and a command line to run it in a process of its own:
``python -m tests.bridges.agents_app start|listen --db URL --model URL …``.

``start`` runs the agent until it stops on approvals, asks through PawFlow and exits;
``listen`` resumes runs on the answers until one finishes, then prints its final output and
the refunds made, as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
from typing import Any

from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    Runner,
    RunResult,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

from pawflow import Store, open_store
from pawflow.bridges.openai_agents import OpenAIAgentsBridge
from pawflow.testing import eventually

# The SDK sends traces to its vendor unless told not to: these runs stay on this machine.
set_tracing_disabled(True)

refunds: list[tuple[str, int]] = []


@function_tool(needs_approval=True)
def refund(order: str, amount: int) -> str:
    """Refund an amount on an order."""
    refunds.append((order, amount))
    return f"refunded {amount} on {order}"


def support_agent(model_url: str) -> Agent[Any]:
    client = AsyncOpenAI(base_url=model_url, api_key="offline", max_retries=0)
    return Agent(
        name="support",
        instructions="Refund what the customer asks for.",
        tools=[refund],
        model=OpenAIChatCompletionsModel(model="fake-model", openai_client=client),
    )


def run_agent(agent: Agent[Any], text: str) -> RunResult:
    """A run as an application starts it (each on an event loop of its own)."""
    return asyncio.run(Runner.run(agent, text))


def tool_call(call_id: str, order: str, amount: int) -> dict[str, Any]:
    arguments = json.dumps({"order": order, "amount": amount})
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "refund", "arguments": arguments},
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["start", "listen"])
    parser.add_argument("--db", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--owner", default="")
    parser.add_argument("--conversation", default="")
    args = parser.parse_args(argv)
    store: Store = open_store(args.db)
    agent = support_agent(args.model)
    finished: list[RunResult] = []
    done = threading.Event()

    def keep(result: RunResult) -> None:
        finished.append(result)
        done.set()

    bridge = OpenAIAgentsBridge(store, agent, name="support", ask_reason=True, on_result=keep)
    if args.command == "start":
        result = run_agent(agent, "Refund order A-1 (5 EUR) and order B-2 (900 EUR).")
        bridge.ask(result, owner=args.owner, conversation_id=args.conversation)
    else:
        bridge.listen()
        eventually(done.is_set, timeout=300)
        print(json.dumps({"output": finished[0].final_output, "refunds": refunds}), flush=True)
    bridge.close()
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

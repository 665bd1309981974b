"""A Pydantic AI agent whose refunds need approval and whose ledger look-ups run elsewhere,
its model a local fake OpenAI server, and a command line to run it in a process of its own:
``python -m tests.bridges.pydantic_app start|listen --db URL --model URL …``.

``start`` runs the agent until it ends on deferred calls, asks through PawFlow, then listens
until it is killed; ``listen`` resumes runs on the answers until one finishes, then prints its
output and the refunds made, as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import Any

from pydantic_ai import Agent, CallDeferred, DeferredToolRequests
from pydantic_ai.agent import AgentRunResult
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from pawflow import Store, open_store
from pawflow.bridges.pydantic_ai import PydanticAIBridge
from pawflow.testing import eventually

refunds: list[tuple[str, int]] = []


def support_agent(model_url: str) -> Agent[None, str | DeferredToolRequests]:
    model = OpenAIChatModel(
        "fake-model", provider=OpenAIProvider(base_url=model_url, api_key="offline")
    )
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        model,
        name="support",
        instructions="Refund what the customer asks for.",
        output_type=[str, DeferredToolRequests],
        retries=0,
    )

    @agent.tool_plain(requires_approval=True)
    def refund(order: str, amount: int) -> str:
        """Refund an amount on an order."""
        refunds.append((order, amount))
        return f"refunded {amount} on {order}"

    @agent.tool_plain
    def ledger(order: str) -> str:
        """What the ledger says of an order (a person reads it)."""
        raise CallDeferred(
            metadata={
                "kind": "integer",
                "message": f"How much was paid on {order}?",
                "response_schema": {"type": "integer", "minimum": 0},
            }
        )

    return agent


def tool_call(call_id: str, tool: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": tool, "arguments": json.dumps(arguments)},
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
    finished: list[AgentRunResult[Any]] = []
    done = threading.Event()

    def keep(result: AgentRunResult[Any]) -> None:
        finished.append(result)
        done.set()

    bridge = PydanticAIBridge(store, agent, name="support", on_result=keep).listen()
    if args.command == "start":
        result = agent.run_sync("Refund order A-1 (5 EUR) and order B-2 (900 EUR).")
        asked = bridge.ask(result, owner=args.owner, conversation_id=args.conversation)
        assert asked is not None
    eventually(done.is_set, timeout=300)  # `start` is killed before it ends
    print(json.dumps({"output": finished[0].output, "refunds": refunds}), flush=True)
    bridge.close()
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

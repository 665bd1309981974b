"""A Microsoft Agent Framework agent whose refunds need approval, its model a local fake
OpenAI server, and a command line to run it in a process of its own:
``python -m tests.bridges.framework_app start|listen --db URL --model URL …``.

``start`` runs the agent until it stops on approvals, asks through PawFlow, then listens until
it is killed; ``listen`` resumes runs on the answers until one finishes, then prints its text
and the refunds made, as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
from typing import Any

from agent_framework import Agent, AgentResponse, AgentSession, tool
from agent_framework.openai import OpenAIChatCompletionClient

from pawflow import Store, open_store
from pawflow.bridges.agent_framework import AgentFrameworkBridge
from pawflow.testing import eventually

refunds: list[tuple[str, int]] = []


@tool(approval_mode="always_require")
def refund(order: str, amount: int) -> str:
    """Refund an amount on an order."""
    refunds.append((order, amount))
    return f"refunded {amount} on {order}"


def support_agent(model_url: str) -> Agent[Any]:
    client = OpenAIChatCompletionClient(model="fake-model", base_url=model_url, api_key="offline")
    return Agent(
        client=client, name="support", instructions="Refund what is asked.", tools=[refund]
    )


def run_agent(agent: Agent[Any], text: str) -> tuple[AgentResponse[Any], AgentSession]:
    """A run as an application starts it, on a session of its own."""
    session = agent.create_session()

    async def run() -> AgentResponse[Any]:
        response: AgentResponse[Any] = await agent.run(text, session=session)
        return response

    return asyncio.run(run()), session


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
    finished: list[AgentResponse[Any]] = []
    done = threading.Event()

    def keep(response: AgentResponse[Any], session: AgentSession) -> None:
        finished.append(response)
        done.set()

    bridge = AgentFrameworkBridge(store, agent, name="support", on_result=keep).listen()
    if args.command == "start":
        response, session = run_agent(agent, "Refund order A-1 (5 EUR) and order B-2 (900 EUR).")
        asked = bridge.ask(response, session, owner=args.owner, conversation_id=args.conversation)
        assert asked is not None
    eventually(done.is_set, timeout=300)  # `start` is killed before it ends
    print(json.dumps({"output": finished[0].text, "refunds": refunds}), flush=True)
    bridge.close()
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

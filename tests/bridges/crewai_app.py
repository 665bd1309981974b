"""A CrewAI flow that drafts a reply with a model (a local fake OpenAI server) and pauses for
a person's feedback before it sends it, its state in CrewAI's SQLite flow persistence; and a
command line to run it in a process of its own (from the CrewAI venv, .venv-crewai):
``python -m tests.bridges.crewai_app start|listen --db URL --model URL --flows PATH …``.

``start`` kicks the flow off until it pauses, asks through PawFlow, then listens until it is
killed; ``listen`` resumes flows on the answers until one finishes, then prints its result
and what was sent, as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import Any

from crewai import LLM
from crewai.flow.flow import Flow, listen, start
from crewai.flow.human_feedback import HumanFeedbackResult, human_feedback
from crewai.flow.persistence import SQLiteFlowPersistence, persist
from pydantic import BaseModel

from pawflow import Store, open_store
from pawflow.bridges.crewai import PAUSE, CrewAIBridge
from pawflow.testing import eventually

sent: list[str] = []


class Reply(BaseModel):
    id: str = ""
    customer: str = ""
    draft: str = ""


def reply_flow(model_url: str, flows: Path) -> type[Flow[Reply]]:
    """The flow class, over the persistence in ``flows`` and the model at ``model_url``."""
    persistence = SQLiteFlowPersistence(str(flows))
    model = LLM(model="openai/fake-model", base_url=model_url, api_key="offline")

    @persist(persistence)
    class ReplyFlow(Flow[Reply]):
        @start()
        @human_feedback(message="Send this reply?", provider=PAUSE)
        def draft(self) -> str:
            self.state.draft = str(model.call(f"Write to {self.state.customer}."))
            return str(self.state.draft)

        @listen(draft)
        def send(self, review: HumanFeedbackResult) -> str:
            text = f"{self.state.draft} ({review.feedback})"
            sent.append(text)
            return text

    return ReplyFlow


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["start", "listen"])
    parser.add_argument("--db", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--flows", required=True, type=Path)
    parser.add_argument("--owner", default="")
    parser.add_argument("--conversation", default="")
    args = parser.parse_args(argv)
    store: Store = open_store(args.db)
    flow_class = reply_flow(args.model, args.flows)
    finished: list[Any] = []
    done = threading.Event()

    def keep(flow: Any, result: Any) -> None:
        finished.append(result)
        done.set()

    bridge = CrewAIBridge(
        store,
        flow_class,
        name="replies",
        persistence=SQLiteFlowPersistence(str(args.flows)),
        on_result=keep,
    ).listen()
    if args.command == "start":
        paused = flow_class().kickoff(inputs={"customer": "Ana"})
        asked = bridge.ask(paused, owner=args.owner, conversation_id=args.conversation)
        assert asked is not None, paused
    eventually(done.is_set, timeout=300)  # `start` is killed before it ends
    print(json.dumps({"result": finished[0], "sent": sent}), flush=True)
    bridge.close()
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

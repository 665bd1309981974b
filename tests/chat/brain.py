"""The deployer as a model on the OpenAI-compatible wire: what the local fake model server
answers, decided from the messages it is sent, the way a real model would read them.

- "deploy" asks which environment (``request_confirmation``, choice: staging, production);
- "run checks" asks which checks (multi: unit, lint, e2e);
- "confirm X" asks "Ship X?" (confirm);
- "roll back" calls the consequential ``rollback`` tool (its approval is asked);
- an answer that comes back as the result of ``request_confirmation`` is acted on: an
  environment is deployed to, anything else is acknowledged ("Got …");
- a tool's result is reported ("Done: …"); anything else is echoed.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from typing import Any

from tests.agent.fake_openai import Behaviour, FakeOpenAI, delta, reply_sse

QUESTION = "Which environment should I deploy to?"
CHECKS = "Which checks should I run?"

_calls = itertools.count(1)


def _text(text: str) -> Behaviour:
    return reply_sse([delta(content=text), delta("stop")])


def _call(name: str, arguments: dict[str, Any], call_id: str, text: str = "") -> Behaviour:
    call = {
        "index": 0,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    chunks = [delta(content=text)] if text else []
    return reply_sse([*chunks, delta(tool_calls=[call]), delta("tool_calls")])


def called(messages: list[dict[str, Any]], call_id: str | None) -> str | None:
    """The name of the tool a result answers."""
    for message in messages:
        for call in message.get("tool_calls") or []:
            if call["id"] == call_id:
                return str(call["function"]["name"])
    return None


def handed_back(body: dict[str, Any]) -> tuple[str, str] | None:
    """The tool and the call whose result this request ends on, if it ends on one."""
    messages = body["messages"]
    last = messages[-1]
    if last["role"] != "tool":
        return None
    name = called(messages, last.get("tool_call_id"))
    return None if name is None else (name, str(last["tool_call_id"]))


def decide(body: dict[str, Any]) -> Behaviour:
    messages: list[dict[str, Any]] = body["messages"]
    last = messages[-1]
    call_id = f"call_{next(_calls)}"
    if last["role"] == "tool":
        content = str(last.get("content") or "")
        if called(messages, last.get("tool_call_id")) == "request_confirmation":
            result = json.loads(content)
            answer = result.get("answer")
            if answer in ("staging", "production"):
                return _call("deploy", {"environment": answer}, call_id, f"Deploying to {answer}.")
            return _text(f"Got {json.dumps(answer)}.")
        return _text(f"Done: {content}")
    text = str(last.get("content") or "")
    if re.search(r"(?i)\bdeploy\b", text):
        arguments: dict[str, Any] = {
            "message": QUESTION,
            "mode": "choice",
            "options": ["staging", "production"],
            "expires_in": "1d",
        }
        return _call("request_confirmation", arguments, call_id)
    if re.search(r"(?i)\brun checks\b", text):
        arguments = {"message": CHECKS, "mode": "multi", "options": ["unit", "lint", "e2e"]}
        return _call("request_confirmation", arguments, call_id)
    asked = re.match(r"(?i)confirm (\w+)", text)
    if asked:
        arguments = {"message": f"Ship {asked.group(1)}?", "mode": "confirm"}
        return _call("request_confirmation", arguments, call_id)
    if re.search(r"(?i)\broll ?back\b", text):
        return _call("rollback", {"environment": "production"}, call_id)
    return _text(f"echo: {text}")


def deployer_brain(fake: FakeOpenAI) -> FakeOpenAI:
    fake.responder = decide
    return fake


def resumes(fake: FakeOpenAI, tool: str = "request_confirmation") -> Counter[str]:
    """How many times the model was handed the result of each call of ``tool``, by call id:
    each answer resumes the agent once."""
    found = (handed_back(body) for body in list(fake.requests))
    return Counter(
        call for named in found if named is not None and named[0] == tool for call in [named[1]]
    )


def system_prompts(fake: FakeOpenAI) -> list[str]:
    return [str(body["messages"][0]["content"]) for body in list(fake.requests)]

"""``AgentWait``: what an agent parks on its question, read back typed when it is woken."""

from __future__ import annotations

import json

import pytest

from pawflow.agent.waits import AgentWait
from pawflow.errors import InvalidInput

KEPT = {
    "v": 1,
    "purpose": "approval",
    "agent": "deployer",
    "conversation_id": "c1",
    "user": "alice",
    "request_id": "r1",
    "signal_id": "s1",
    "question": "Deploy?",
    "kind": "confirm",
    "run_id": "run-1",
    "tool_call": {"id": "call_1", "name": "deploy", "arguments": {"env": "prod"}},
}


def test_a_wait_is_parked_as_the_json_agents_always_parked() -> None:
    """The payload's shape is unchanged: waits parked before read as waits parked now."""
    wait = AgentWait.decode(json.dumps(KEPT).encode())
    assert (wait.agent, wait.request_id, wait.tool_call) == ("deployer", "r1", KEPT["tool_call"])
    assert wait.encode() == json.dumps(KEPT).encode()
    plain = wait.model_copy(update={"tool_call": None, "purpose": "confirmation"})
    assert "tool_call" not in json.loads(plain.encode())  # a question's wait names no call
    assert plain.source == "s1"
    assert plain.model_copy(update={"signal_id": None}).source == "confirmation:r1"


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        (b"not json", ""),
        (json.dumps({**KEPT, "agent": None}).encode(), "agent"),
        (json.dumps({k: v for k, v in KEPT.items() if k != "user"}).encode(), "user"),
        (json.dumps({**KEPT, "purpose": "gossip"}).encode(), "purpose"),
    ],
)
def test_a_payload_that_is_not_a_wait_names_what_is_wrong(payload: bytes, path: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        AgentWait.decode(payload)
    assert caught.value.errors[0].path == path
    assert caught.value.message.startswith("not an agent's wait: ")

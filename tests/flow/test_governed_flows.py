"""A flow's request with a policy: it waits for its assignees, and a default nobody gave
comes back to the flow marked as the policy's answer."""

from __future__ import annotations

import json

import pytest

from pawflow import FakeClock, Forbidden, Store
from pawflow.flow import FlowFile, FlowService
from pawflow.testing import eventually
from tests.flow.conftest import deploy, parked

GOVERNED = """
name: governed
tasks:
  ask:
    type: requestUserInput
    properties:
      kind: confirm
      message: "Ship ${version}?"
      expires_in: 3d
      policy:
        assignees: [bob]
        requester_may_answer: false
        on_expire: {answer: false}
    next: wait
  wait:
    type: durableWait
    properties: {signal_id_attribute: interaction.signal_id}
"""


def test_a_flow_sees_a_default_as_the_policys_answer(
    store: Store, service: FlowService, conversation: str, clock: FakeClock
) -> None:
    flow = deploy(service, GOVERNED, conversation)
    flow.instance.inject(FlowFile.create(attributes={"version": "42"}))
    [question] = eventually(lambda: store.list_interactions(user="alice", status="pending"))
    parked(store, flow.instance.target)
    with pytest.raises(Forbidden):
        store.respond_interaction(question.id, True, user="alice")
    clock.advance("3d")
    store.sweep()
    [ending] = flow.wait_endings(1, "wait")
    value = json.loads(ending.flowfile.attributes["durable.wait.value"])
    assert value == {
        "status": "answered",
        "answer": False,
        "answered_via": "policy:on_expire",
        "waited": "3 days",
    }

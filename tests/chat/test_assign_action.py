"""``list_agents`` and ``assign_agent`` over HTTP: a conversation gets its agent."""

from __future__ import annotations

from pawflow.demo.agents import DEMO_AGENT
from pawflow.store import Store
from pawflow.testing import eventually
from tests.agent.test_http import act, messages, serve


def test_an_assigned_agent_answers_the_conversation(sqlite_store: Store) -> None:
    _, server = serve(sqlite_store)
    with server as live, live.client("alice") as alice, live.client("mallory") as mallory:
        assert DEMO_AGENT in act(alice, "list_agents")["agents"]
        conversation = act(alice, "create_conversation", title="c")["conversation"]["id"]

        unknown = alice.post(
            "/api/actions/assign_agent", json={"conversation_id": conversation, "agent": "nobody"}
        )
        assert unknown.status_code == 404 and unknown.json()["error"] == "agent not found"
        foreign = mallory.post(
            "/api/actions/assign_agent", json={"conversation_id": conversation, "agent": DEMO_AGENT}
        )
        assert foreign.status_code == 404

        assert act(alice, "list_agents", conversation_id=conversation)["assigned"] is None
        hidden = mallory.post("/api/actions/list_agents", json={"conversation_id": conversation})
        assert hidden.status_code == 404
        assigned = act(alice, "assign_agent", conversation_id=conversation, agent=DEMO_AGENT)
        assert assigned == {"conversation_id": conversation, "agent": DEMO_AGENT}
        assert act(alice, "list_agents", conversation_id=conversation)["assigned"] == DEMO_AGENT
        act(alice, "send_message", conversation_id=conversation, content="hello")

        def answered() -> list[str]:
            found = messages(alice, conversation)
            return [m["author"] for m in found if m["role"] == "assistant"]

        assert eventually(answered) == [DEMO_AGENT]

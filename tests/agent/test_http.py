"""Over HTTP: a chat message is answered by the agent, which asks, waits, and carries on."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pawflow.chat.service import ChatService
from pawflow.demo import chat as demo_chat
from pawflow.demo.agents import DEMO_AGENT
from pawflow.serve import chat_service, prepare
from pawflow.server.settings import ServerSettings
from pawflow.server.testing import LiveServer, live_server
from pawflow.store import Store, open_store
from pawflow.testing import eventually
from tests.server.sse import stream, until

QUIET = ServerSettings(sweep_interval=3600, rate_limit=100_000, rate_burst=100_000)


@pytest.fixture(autouse=True)
def offline_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PAWFLOW_MODEL_URL", "PAWFLOW_MODEL", "PAWFLOW_MODEL_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def serve(store: Store) -> Any:
    service = chat_service(store, QUIET, demo=True)
    return service, live_server(
        store,
        settings=QUIET,
        services=[service],
        on_message=service.handle_message,
        agents=service,
    )


def demo_setup(service: ChatService, store: Store, user: str, conversation_id: str) -> None:
    service.assign(conversation_id, DEMO_AGENT)
    demo_chat.demo_setup(service.chat, store, user, QUIET)


def act(client: httpx.Client, name: str, **body: Any) -> dict[str, Any]:
    response = client.post(f"/api/actions/{name}", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def messages(client: httpx.Client, conversation_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = act(client, "get_history", conversation_id=conversation_id)[
        "messages"
    ]
    return found


def pending(client: httpx.Client) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = act(client, "list_interactions", status="pending")["interactions"]
    return found


def history_of(client: httpx.Client, conversation_id: str, length: int) -> list[dict[str, Any]]:
    """The conversation's messages, once there are ``length`` of them."""

    def ready() -> list[dict[str, Any]] | None:
        found = messages(client, conversation_id)
        return found if len(found) == length else None

    return eventually(ready)


@pytest.fixture
def live(sqlite_store: Store) -> Iterator[tuple[LiveServer, Any]]:
    extension, server = serve(sqlite_store)
    with server as running:
        yield running, extension


def test_a_chat_message_is_answered_and_the_answer_resumes_the_agent(
    live: tuple[LiveServer, Any],
) -> None:
    server, extension = live
    with server.client("alice") as client:
        conversation = act(client, "create_conversation", title="Releases")["conversation"]
        demo_setup(extension, server.store, "alice", conversation["id"])
        act(client, "send_message", conversation_id=conversation["id"], content="deploy please")

        [request] = eventually(lambda: pending(client))
        assert request["kind"] == "choice" and request["requester"] == {
            "type": "agent",
            "name": DEMO_AGENT,
        }
        assert request["signal_id"] == f"confirmation:{request['id']}"
        history_of(client, conversation["id"], 2)

        act(client, "respond_interaction", request_id=request["id"], answer="production")
        history = history_of(client, conversation["id"], 4)
        assert [(m["role"], m["author"]) for m in history] == [
            ("user", "alice"),
            ("assistant", DEMO_AGENT),
            ("system", f"agent:{DEMO_AGENT}"),
            ("assistant", DEMO_AGENT),
        ]
        assert history[2]["content"] == (
            f"[agent:{DEMO_AGENT}] [confirmation:{request['id']}] The user answered"
            ' "Which environment should I deploy to?": "production"'
        )
        assert re.search(r"Done: deployed build \d+ to production\.", history[3]["content"])

        service = extension
        eventually(lambda: [w.status for w in service.wakeups_of(conversation["id"])] == ["done"])
        server.store.sweep()
        assert service.run_due() == 0
        assert len(messages(client, conversation["id"])) == 4  # exactly one wakeup


def test_progress_and_replies_reach_the_event_stream(live: tuple[LiveServer, Any]) -> None:
    server, service = live
    token = server.token("bob")
    with server.client("bob") as client:
        conversation = act(client, "create_conversation", title="chat")["conversation"]
        # Not demo_setup: its Planner conversation would add its greeting to the stream.
        service.assign(conversation["id"], DEMO_AGENT)
        with stream(server.url, token, last_event_id=0) as events:
            act(client, "send_message", conversation_id=conversation["id"], content="hello")
            seen = until(events, "message")  # the user's own message
            seen += until(events, "message")  # the agent's reply, after its progress
    assert seen[-2].type == "agent_progress"
    progress = [e.data["phase"] for e in seen if e.type == "agent_progress"]
    assert progress == ["thinking", "text", "finished"]
    reply = seen[-1].data
    assert reply["role"] == "assistant" and reply["author"] == DEMO_AGENT
    assert "I am the demo deployer" in reply["content"]


def test_the_agent_carries_on_after_a_server_restart(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'pawflow.db'}"
    with open_store(url) as store:
        extension, server = serve(store)
        with server as first, first.client("carol") as client:
            conversation = act(client, "create_conversation", title="Releases")["conversation"]
            demo_setup(extension, store, "carol", conversation["id"])
            act(client, "send_message", conversation_id=conversation["id"], content="deploy")
            [request] = eventually(lambda: pending(client))
            history_of(client, conversation["id"], 2)

    with open_store(url) as store:
        _, server = serve(store)
        with server as second, second.client("carol") as client:
            act(client, "respond_interaction", request_id=request["id"], answer="staging")
            history = history_of(client, conversation["id"], 4)
            assert history[2]["role"] == "system" and '"staging"' in history[2]["content"]
            assert re.search(r"Done: deployed build \d+ to staging\.", history[3]["content"])


def test_serve_demo_gives_the_demo_conversation_its_agent(tmp_path: Path) -> None:
    prepared = prepare(ServerSettings(db=f"sqlite:///{tmp_path / 'demo.db'}"), demo=True)
    try:
        [demo] = [c for c in prepared.store.list_conversations(user="local") if c.title == "Demo"]
        assert prepared.chat is not None
        assert prepared.chat.assigned_agent(demo.id) == DEMO_AGENT
    finally:
        prepared.store.close()

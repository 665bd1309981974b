"""The failure session continuations make impossible, end to end over HTTP.

An assistant ends its answer with "Would you like to proceed with this plan?"; the user says
"yes go ahead with the plan". A file organizer proposed a plan of its own in another
conversation 69 days earlier. The yes must reach the assistant that asked, in this
conversation — and the organizer's plan must never run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pawflow.chat.service import ChatService
from pawflow.clock import FakeClock
from pawflow.demo.chat import SAMPLE_FILES
from pawflow.serve import chat_service
from pawflow.server.settings import ServerSettings
from pawflow.server.testing import live_server
from pawflow.store import Store
from pawflow.testing import eventually
from tests.chat.conftest import sandbox_state

QUIET = ServerSettings(sweep_interval=3600, rate_limit=100_000, rate_burst=100_000)
PLAN_QUESTION = "Would you like to proceed with this plan?"


@pytest.fixture(autouse=True)
def offline_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PAWFLOW_MODEL_URL", "PAWFLOW_MODEL", "PAWFLOW_MODEL_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def act(client: httpx.Client, name: str, **body: Any) -> dict[str, Any]:
    response = client.post(f"/api/actions/{name}", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def history(client: httpx.Client, conversation_id: str, length: int) -> list[dict[str, Any]]:
    """The conversation's messages, once there are ``length`` of them."""

    def ready() -> list[dict[str, Any]] | None:
        found: list[dict[str, Any]] = act(client, "get_history", conversation_id=conversation_id)[
            "messages"
        ]
        return found if len(found) == length else None

    return eventually(ready)


class Chat:
    """One user's conversations, each answered by the planner."""

    def __init__(self, service: ChatService, client: httpx.Client) -> None:
        self.client = client
        self.service = service
        self.length: dict[str, int] = {}

    def open(self, title: str) -> str:
        conversation = act(self.client, "create_conversation", title=title)["conversation"]
        self.service.assign(conversation["id"], "planner")
        self.length[conversation["id"]] = 0
        return str(conversation["id"])

    def send(self, conversation_id: str, text: str) -> dict[str, Any]:
        """Send a message; the reply, once it is there."""
        act(self.client, "send_message", conversation_id=conversation_id, content=text)
        self.length[conversation_id] += 2
        return history(self.client, conversation_id, self.length[conversation_id])[-1]


@pytest.fixture(params=["1d", "1y"], ids=["plan-expired", "plan-still-live"])
def chat(request: pytest.FixtureRequest, sqlite_store: Store, sandbox: Path) -> Iterator[Chat]:
    settings = QUIET.replace(
        extra={
            "chat": {
                "plugins": {
                    "planner": {},  # the demo's own script
                    "organizer": {"sandbox": str(sandbox), "plan_ttl": request.param},
                    "inbox": {},
                }
            }
        }
    )
    service = chat_service(sqlite_store, settings, demo=True)
    with (
        live_server(
            sqlite_store,
            settings=settings,
            services=[service],
            on_message=service.handle_message,
            agents=service,
        ) as server,
        server.client("alice") as client,
    ):
        yield Chat(service, client)


def test_the_yes_reaches_the_assistant_that_asked_and_the_stale_plan_never_runs(
    chat: Chat, clock: FakeClock, sandbox: Path
) -> None:
    files = chat.open("Files")
    proposal = chat.send(files, "organize my downloads")
    assert proposal["author"] == "organizer" and "moving 6 files" in proposal["content"]
    [plan] = chat.service.sessions.history(files)

    clock.advance("69d")
    planner = chat.open("Planner")
    asked = chat.send(planner, "plan the launch")
    assert asked["author"] == "planner" and asked["content"].endswith(PLAN_QUESTION)

    answered = chat.send(planner, "yes go ahead with the plan")
    assert answered["author"] == "planner"
    assert answered["content"].startswith(
        f'Earlier I asked "{PLAN_QUESTION}" — taking that as yes.\n\nStep 1 is under way'
    )
    assert answered["data"]["answered"]["kind"] == "approval"

    # The organizer's plan never ran: no file moved, its plan was never answered.
    assert set(sandbox_state(sandbox)) == set(SAMPLE_FILES)
    still = chat.service.sessions.get(plan.id)
    assert still is not None and still.status in ("pending", "expired") and still.reply is None
    assert [c.status for c in chat.service.sessions.history(planner)] == ["answered"]
    assert len(history(chat.client, files, 2)) == 2  # nothing more was said there


def test_a_yes_with_nothing_pending_never_runs_another_sessions_plan(
    chat: Chat, sandbox: Path
) -> None:
    files = chat.open("Files")
    chat.send(files, "organize my downloads")
    elsewhere = chat.open("Elsewhere")
    reply = chat.send(elsewhere, "yes")
    assert reply["author"] == "planner" and "taking that as" not in reply["content"]
    assert set(sandbox_state(sandbox)) == set(SAMPLE_FILES)
    # In its own conversation the plan is still the organizer's to carry out.
    done = chat.send(files, "yes")
    assert done["author"] == "organizer" and "Moved 6 files" in done["content"]
    assert "documents/launch-plan.pdf" in sandbox_state(sandbox)

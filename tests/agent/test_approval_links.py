"""A tool approval decided on the answer-link page (``/a/<token>``) of a real server: the
call shown, one form per offered decision, and each decision run by the agent as decided."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import httpx
import pytest

from pawflow.chat.service import ChatService
from pawflow.interactions.tool_approval import make_surface
from pawflow.server.settings import ServerSettings
from pawflow.server.testing import LiveServer, live_server
from pawflow.store import Question, Store
from pawflow.store.reach import answer_links
from tests.agent.conftest import USER, Deleter, history, say, scheduled

QUIET = ServerSettings(sweep_interval=3600, rate_limit=100_000, rate_burst=100_000)


@pytest.fixture
def server(store: Store) -> Iterator[LiveServer]:
    with live_server(store, settings=QUIET) as served:
        yield served


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as client:
        yield client


def ask(store: Store, service: ChatService, server: LiveServer) -> tuple[str, str]:
    """The helper asks to run ``delete_files``: the request, and a link that answers it."""
    conversation = store.create_conversation(USER, "Cleanup")
    service.assign(conversation.id, "helper")
    say(store, service, conversation.id, "clean up the temp files")
    [request] = store.list_interactions(user=USER, status="pending")
    with store.transaction() as tx:
        token = answer_links.create(tx, request.id, USER, now=store.now(), expires_at=None)
    return request.id, f"{server.url}/a/{token}"


def fields(page: str) -> dict[str, str]:
    """The hidden fields of the first decision form on ``page``."""
    return dict(re.findall(r'type="hidden" name="(\w+)" value="([^"]*)"', page)[1:2])


def run(store: Store, service: ChatService, request_id: str) -> str:
    """Run the turn the decision woke up; the conversation's id."""
    conversation = store.get_interaction(request_id, user=USER).conversation_id
    assert conversation is not None
    scheduled(service, conversation)
    assert service.run_due() == 1
    return conversation


def test_the_page_shows_the_call_and_only_opening_it_answers_nothing(
    store: Store, service: ChatService, server: LiveServer, http: httpx.Client
) -> None:
    request_id, link = ask(store, service, server)
    shown = http.get(link)
    assert shown.status_code == 200
    page = shown.text
    assert "<code>delete_files</code>" in page
    assert "Delete the files matching a pattern." in page
    assert "&quot;pattern&quot;: &quot;*.tmp&quot;" in page  # the proposed arguments
    for label in ("Approve", "Approve with my edits", "Reject", "Respond instead"):
        assert f">{label}</button>" in page
    assert 'name="reason"' in page and 'name="text"' in page
    assert re.search(r'<textarea id="f-arguments" name="arguments"[^>]*>\{\n  &quot;pattern', page)
    assert store.get_interaction(request_id, user=USER).status == "pending"


def test_approve_runs_the_call_as_proposed(
    store: Store, service: ChatService, server: LiveServer, http: httpx.Client, deleter: Deleter
) -> None:
    request_id, link = ask(store, service, server)
    digest = fields(http.get(link).text)["digest"]
    answered = http.post(link, data={"decision": "approve", "digest": digest})
    assert answered.status_code == 200, answered.text
    assert "Answered by alice via link" in answered.text and "Approved." in answered.text
    record = store.get_interaction(request_id, user=USER)
    assert (record.answer["decision"], record.answer["by"]) == ("approve", USER)
    assert record.answer["digest"] == digest and record.answered_via == "link"
    conversation = run(store, service, request_id)
    assert deleter.calls == ["*.tmp"]
    assert history(store, conversation)[-1][2] == "Deleted 3 files."
    # Spent: the page says what was decided, and another decision is refused.
    assert "Approved." in http.get(link).text
    again = http.post(link, data={"decision": "reject"})
    assert again.status_code == 409


def test_an_invalid_edit_keeps_the_request_open_and_a_valid_one_runs(
    store: Store, service: ChatService, server: LiveServer, http: httpx.Client, deleter: Deleter
) -> None:
    request_id, link = ask(store, service, server)
    refused = http.post(link, data={"decision": "edit", "arguments": '{"pattern": 3}'})
    assert refused.status_code == 422
    assert "arguments.pattern: expected a string" in refused.text
    assert "{&quot;pattern&quot;: 3}</textarea>" in refused.text  # what was typed stays
    assert store.get_interaction(request_id, user=USER).status == "pending"
    not_json = http.post(link, data={"decision": "edit", "arguments": "{pattern:"})
    assert not_json.status_code == 422 and "arguments: not valid JSON" in not_json.text
    unknown = http.post(link, data={"decision": "edit", "arguments": '{"glob": "*.log"}'})
    assert unknown.status_code == 422
    assert store.get_interaction(request_id, user=USER).status == "pending"

    edited = json.dumps({"pattern": "*.log"})
    answered = http.post(link, data={"decision": "edit", "arguments": edited})
    assert answered.status_code == 200, answered.text
    assert "Approved with edits: {&quot;pattern&quot;: &quot;*.log&quot;}" in answered.text
    record = store.get_interaction(request_id, user=USER)
    assert record.answer["decision"] == "edit"
    assert record.answer["arguments"] == {"pattern": "*.log"}
    run(store, service, request_id)
    assert deleter.calls == ["*.log"]


@pytest.mark.parametrize("reason", ["keep them for the audit", ""], ids=["reason", "none"])
def test_reject_records_the_reason_and_runs_nothing(
    store: Store,
    service: ChatService,
    server: LiveServer,
    http: httpx.Client,
    deleter: Deleter,
    reason: str,
) -> None:
    request_id, link = ask(store, service, server)
    answered = http.post(link, data={"decision": "reject", "reason": reason})
    assert answered.status_code == 200, answered.text
    record = store.get_interaction(request_id, user=USER)
    assert record.answer["decision"] == "reject"
    if reason:
        assert record.answer["reason"] == reason
        assert f"Rejected: {reason}." in answered.text
    else:
        assert "reason" not in record.answer and "Rejected." in answered.text
    conversation = run(store, service, request_id)
    assert deleter.calls == []
    if not reason:
        assert history(store, conversation)[-1][2] == "Nothing was deleted."


def test_respond_gives_the_result_without_running_the_tool(
    store: Store, service: ChatService, server: LiveServer, http: httpx.Client, deleter: Deleter
) -> None:
    request_id, link = ask(store, service, server)
    empty = http.post(link, data={"decision": "respond", "text": " "})
    assert empty.status_code == 422 and "text: required" in empty.text
    answered = http.post(link, data={"decision": "respond", "text": "deleted 7 files by hand"})
    assert answered.status_code == 200, answered.text
    record = store.get_interaction(request_id, user=USER)
    assert record.answer["decision"] == "respond"
    assert record.answer["text"] == "deleted 7 files by hand"
    conversation = run(store, service, request_id)
    assert deleter.calls == []
    assert history(store, conversation)[-1][2] == "Deleted 7 files."


def test_only_the_decisions_the_tool_offers_are_shown_and_taken(
    store: Store, server: LiveServer, http: httpx.Client
) -> None:
    store.ensure_user(USER)
    chat = store.create_conversation(USER, "Deploys")
    surface = make_surface(
        tool="deploy",
        agent="ops",
        description="Deploy.",
        arguments={"environment": "production"},
        schema={"type": "object", "properties": {"environment": {"type": "string"}}},
        decisions=["approve", "reject"],
    )
    asked = store.ask(Question(USER, chat.id, "confirm", "Deploy?", ui_surface=surface)).interaction
    with store.transaction() as tx:
        token = answer_links.create(tx, asked.id, USER, now=store.now(), expires_at=None)
    link = f"{server.url}/a/{token}"
    page = http.get(link).text
    assert ">Approve</button>" in page and ">Reject</button>" in page
    assert "Approve with my edits" not in page and "Respond instead" not in page
    refused = http.post(link, data={"decision": "respond", "text": "done"})
    assert refused.status_code == 422 and "must be one of: approve, reject" in refused.text
    assert store.get_interaction(asked.id, user=USER).status == "pending"

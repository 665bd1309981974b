"""Tool approvals in Slack: the call and a button per decision in the message, a modal for
each decision that needs words, all decided through a real server's interactivity endpoint
(both backends) and the message rewritten once decided."""

from __future__ import annotations

import json
from typing import Any

from pawflow.interactions.tool_approval import make_surface
from tests.channels.conftest import ADA, Slack, click

SCHEMA = {
    "type": "object",
    "properties": {
        "environment": {"enum": ["staging", "production"]},
        "version": {"type": "string"},
    },
    "required": ["environment", "version"],
}
PROPOSED = {"environment": "production", "version": "1.2"}


def ask(slack: Slack, decisions: tuple[str, ...] = ("approve", "edit", "reject", "respond")) -> str:
    surface = make_surface(
        tool="deploy",
        agent="releaser",
        description="Deploy a version of the service.",
        arguments=PROPOSED,
        schema=SCHEMA,
        decisions=decisions,
    )
    asked = slack.ask("confirm", "Allow releaser to run deploy?", ui_surface=surface)
    assert slack.dispatcher.step() == 1
    return asked


def buttons(slack: Slack, request_id: str) -> dict[str, dict[str, Any]]:
    message = slack.message(request_id)
    (actions,) = [b for b in message["blocks"] if b["type"] == "actions"]
    assert actions["block_id"] == f"pawflow:{request_id}"
    return {e["text"]["text"]: e for e in actions["elements"]}


def press(slack: Slack, request_id: str, button: dict[str, Any]) -> None:
    clicked = click(request_id, button["action_id"], button["value"])
    assert slack.post(clicked).status_code == 200


def opened(slack: Slack, request_id: str, label: str) -> dict[str, Any]:
    """The modal a button opened."""
    press(slack, request_id, buttons(slack, request_id)[label])
    view: dict[str, Any] = slack.api.called("views.open")[-1]["view"]
    return view


def submit(slack: Slack, view: dict[str, Any], typed: str | None) -> dict[str, Any] | None:
    """Submit ``view`` with ``typed`` in its one input; Slack's reply (None: it closes)."""
    (block,) = [b for b in view["blocks"] if b["type"] == "input"]
    state = {block["block_id"]: {"value": {"type": "plain_text_input", "value": typed}}}
    payload = {
        "type": "view_submission",
        "user": {"id": ADA},
        "view": {**view, "id": "V1", "state": {"values": state}},
    }
    reply = slack.post(payload)
    assert reply.status_code == 200
    return reply.json() if reply.content else None


def answer(slack: Slack, request_id: str) -> dict[str, Any]:
    record = slack.store.get_interaction(request_id, user="ada")
    assert (record.status, record.answered_via) == ("answered", "slack")
    assert isinstance(record.answer, dict) and record.answer["by"] == "ada"
    return record.answer


def updated(slack: Slack) -> str:
    """The settled message's text, once the dispatcher rewrote it."""
    slack.dispatcher.step()
    (update,) = slack.api.called("chat.update")
    assert "actions" not in {b["type"] for b in update["blocks"]}
    return "\n".join(b["text"]["text"] for b in update["blocks"] if b["type"] == "section")


def test_the_message_shows_the_call_and_the_offered_decisions(slack: Slack) -> None:
    full = ask(slack)
    message = slack.message(full)
    sections = [b["text"]["text"] for b in message["blocks"] if b["type"] == "section"]
    assert "Tool: `deploy`\nDeploy a version of the service." in sections
    assert f"```{json.dumps(PROPOSED, indent=2)}```" in sections
    shown = buttons(slack, full)
    assert list(shown) == ["Approve", "Edit…", "Reject…", "Respond…", "More"]
    assert shown["Approve"]["style"] == "primary" and shown["Reject…"]["style"] == "danger"
    assert shown["More"]["url"].startswith(slack.server.url + "/a/")

    two = ask(slack, ("approve", "reject"))
    assert list(buttons(slack, two)) == ["Approve", "Reject…", "More"]
    # A decision the tool does not offer opens nothing.
    press(slack, two, {"action_id": "tool_decide", "value": "respond"})
    assert slack.api.called("views.open") == []
    assert slack.status(two) == "pending"


def test_approve_answers_at_once_and_the_message_is_updated(slack: Slack) -> None:
    asked = ask(slack)
    press(slack, asked, buttons(slack, asked)["Approve"])
    decided = answer(slack, asked)
    assert decided["decision"] == "approve" and decided["arguments"] == PROPOSED
    assert decided["digest"] == buttons(slack, asked)["Approve"]["value"]
    text = updated(slack)
    assert "Answered by ada in Slack" in text and "Approved" in text


def test_an_edit_is_checked_against_the_schema_and_a_refusal_keeps_the_modal(
    slack: Slack,
) -> None:
    asked = ask(slack)
    view = opened(slack, asked, "Edit…")
    (block,) = [b for b in view["blocks"] if b["type"] == "input"]
    assert block["block_id"] == "arguments" and block["element"]["multiline"] is True
    assert json.loads(block["element"]["initial_value"]) == PROPOSED
    assert view["callback_id"] == "pawflow_tool_approval"

    refused = submit(slack, view, json.dumps({"environment": "moon", "version": "1.2"}))
    assert refused is not None and refused["response_action"] == "errors"
    assert refused["errors"] == {
        "arguments": "arguments.environment: must be one of: staging, production"
    }
    not_json = submit(slack, view, "{environment:")
    assert not_json is not None and not_json["errors"]["arguments"].startswith(
        "arguments: not valid JSON"
    )
    assert slack.status(asked) == "pending"
    assert slack.api.called("chat.postEphemeral") == []

    assert submit(slack, view, json.dumps({"environment": "staging", "version": "1.3"})) is None
    decided = answer(slack, asked)
    assert decided["decision"] == "edit"
    assert decided["arguments"] == {"environment": "staging", "version": "1.3"}
    assert "Approved with edits" in updated(slack)
    # The same modal sent again answers nothing and says how it ended.
    again = submit(slack, view, json.dumps(PROPOSED))
    assert again is not None and again["errors"]["arguments"].startswith("Answered by ada in Slack")


def test_reject_takes_an_optional_reason(slack: Slack) -> None:
    asked = ask(slack)
    view = opened(slack, asked, "Reject…")
    (block,) = [b for b in view["blocks"] if b["type"] == "input"]
    assert (block["block_id"], block["optional"]) == ("reason", True)
    assert submit(slack, view, "use staging first") is None
    decided = answer(slack, asked)
    assert (decided["decision"], decided["reason"]) == ("reject", "use staging first")
    assert "Rejected: use staging first" in updated(slack)

    silent = ask(slack)
    assert submit(slack, opened(slack, silent, "Reject…"), None) is None
    assert answer(slack, silent) == {
        "decision": "reject",
        "digest": answer(slack, silent)["digest"],
        "by": "ada",
    }


def test_respond_gives_the_text_instead_of_running_the_tool(slack: Slack) -> None:
    asked = ask(slack)
    view = opened(slack, asked, "Respond…")
    empty = submit(slack, view, "  ")
    assert empty is not None and empty["errors"]["text"].startswith("text: required")
    assert slack.status(asked) == "pending"
    assert submit(slack, view, "deployed by hand") is None
    decided = answer(slack, asked)
    assert (decided["decision"], decided["text"]) == ("respond", "deployed by hand")
    assert "Answered instead of running it: deployed by hand" in updated(slack)


def test_a_stranger_cannot_decide(slack: Slack) -> None:
    asked = ask(slack)
    view = opened(slack, asked, "Reject…")
    payload = {
        "type": "view_submission",
        "user": {"id": "U0STRANGER"},
        "view": {**view, "state": {"values": {}}},
    }
    refused = slack.post(payload).json()
    assert "not linked to a PawFlow user" in refused["errors"]["reason"]
    press_as = click(asked, "tool_approve", "", user="U0STRANGER")
    assert slack.post(press_as).status_code == 200
    assert slack.status(asked) == "pending"


def test_a_yes_button_of_a_message_sent_as_a_confirm_still_approves(slack: Slack) -> None:
    asked = ask(slack)
    press(slack, asked, {"action_id": "pick", "value": "0"})  # Yes, as a confirm is asked
    assert answer(slack, asked)["decision"] == "approve"

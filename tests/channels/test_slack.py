"""Slack through the official client against a local server playing its Web API, and the
interactivity endpoint of a real server fed payloads signed as Slack signs them (both
backends)."""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

import pawflow.channels
from pawflow.channels import slack as slack_channel
from pawflow.channels import slack_approvals
from pawflow.clock import FakeClock
from pawflow.redaction import redact
from pawflow.serve import dispatcher
from pawflow.server.testing import live_server
from pawflow.store import Question, Store
from pawflow.store.reach import addresses, outbox
from tests.channels.conftest import ADA, PATH, QUIET, SECRET, TOKEN, Slack, click
from tests.channels.slack_api import sign
from tests.logs import tracebacks

ROOT = Path(__file__).parents[2]
SOURCES = Path(pawflow.channels.__file__).parent


def _blocks(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [b for b in message["blocks"] if b["type"] == kind]


def _elements(message: dict[str, Any]) -> list[dict[str, Any]]:
    found = [e for b in _blocks(message, "actions") for e in b["elements"]]
    return found + [b["element"] for b in _blocks(message, "input")]


def _submit(request_id: str, state: dict[str, Any]) -> dict[str, Any]:
    payload = click(request_id, "submit", request_id)
    payload["state"] = {"values": {"pawflow_answer": {"value": state}}}
    return payload


FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name"},
        "amount": {"type": "number", "title": "Amount", "minimum": 1},
        "when": {"type": "string", "format": "date", "title": "When"},
        "urgent": {"type": "boolean", "title": "Urgent"},
        "tags": {"type": "array", "items": {"enum": ["ops", "dev"]}, "title": "Tags"},
    },
    "required": ["name", "amount"],
}
DANGER_CARD = {
    "contract": "pawflow.ui-surface.v1",
    "type": "card",
    "fallback": "confirm",
    "title": "Drop the table?",
    "actions": [
        {"label": "Drop it", "value": True, "style": "danger"},
        {"label": "Keep it", "value": False},
    ],
}


def test_each_kind_is_sent_with_its_native_elements(slack: Slack) -> None:
    many = [f"region-{i}" for i in range(12)]
    asked = {
        "confirm": slack.ask("confirm", "Deploy?", title="Deploy"),
        "danger": slack.ask("confirm", "Drop the table?", ui_surface=DANGER_CARD),
        "short": slack.ask("choice", "Which?", options=["red", "blue"]),
        "long": slack.ask("choice", "Which region?", options=many),
        "multi": slack.ask("multi", "Which ones?", options=["red", "blue", "green"]),
        "many": slack.ask("multi", "Which regions?", options=many),
        "integer": slack.ask("integer", "How many?"),
        "decimal": slack.ask("decimal", "How much?"),
        "date": slack.ask("date", "When?"),
        "datetime": slack.ask("datetime", "At what time?"),
        "text": slack.ask("text", "Why?"),
        "multiline": slack.ask("multiline", "Notes?"),
        "form": slack.ask("form", "Details?", response_schema=FORM),
        "file": slack.ask("file", "The report?"),
    }
    assert slack.dispatcher.step() == len(asked)
    sent = {name: slack.message(request_id) for name, request_id in asked.items()}
    assert {m["channel"] for m in sent.values()} == {ADA}
    assert {c.token for c in slack.api.calls} == {TOKEN}
    assert _blocks(sent["confirm"], "header")[0]["text"]["text"] == "Deploy"
    assert sent["confirm"]["text"] == "Deploy"

    yes, no = _elements(sent["confirm"])
    assert (yes["text"]["text"], yes["value"], yes["style"]) == ("Yes", "0", "primary")
    assert (no["text"]["text"], no["value"]) == ("No", "1") and "confirm" not in yes
    drop, keep = _elements(sent["danger"])
    assert drop["text"]["text"] == "Drop it" and drop["style"] == "danger"
    assert drop["confirm"]["confirm"]["text"] == "Drop it" and "confirm" not in keep

    assert [e["text"]["text"] for e in _elements(sent["short"])] == ["red", "blue"]
    select, *_ = _elements(sent["long"])[::-1]
    assert select["type"] == "static_select" and len(select["options"]) == 12
    assert _elements(sent["multi"])[-1]["type"] == "checkboxes"
    assert _elements(sent["many"])[-1]["type"] == "multi_static_select"
    integer = _elements(sent["integer"])[-1]
    decimal = _elements(sent["decimal"])[-1]
    assert integer["type"] == decimal["type"] == "number_input"
    assert (integer["is_decimal_allowed"], decimal["is_decimal_allowed"]) == (False, True)
    assert _elements(sent["date"])[-1]["type"] == "datepicker"
    assert _elements(sent["datetime"])[-1]["type"] == "datetimepicker"
    assert _elements(sent["text"])[-1]["type"] == "plain_text_input"
    assert _elements(sent["multiline"])[-1]["multiline"] is True
    for name in ("long", "integer", "text"):
        submit, more = _blocks(sent[name], "actions")[0]["elements"]
        assert submit["action_id"] == "submit" and more["url"].startswith(slack.server.url + "/a/")
    (opener,) = _elements(sent["form"])
    assert opener["action_id"] == "open_form"
    (link,) = _elements(sent["file"])
    assert link["url"].startswith(slack.server.url + "/a/pfa_")

    with slack.store.transaction(write=False) as tx:
        (row,) = outbox.deliveries(tx, asked["confirm"])
    assert row.status == "sent" and row.external_ref and row.external_ref.startswith("D")


def test_a_signature_that_is_bad_stale_or_missing_is_refused_and_changes_nothing(
    slack: Slack,
) -> None:
    asked = slack.ask("confirm", "Deploy?")
    slack.dispatcher.step()
    clicked = click(asked, "pick", "0")
    assert slack.post(clicked, secret="not-the-signing-secret-of-this-app").status_code == 401
    assert slack.post(clicked, age=301).status_code == 401
    assert slack.post(clicked, age=-301).status_code == 401
    body = urlencode({"payload": json.dumps(clicked)})
    bare = slack.http.post(slack.server.url + PATH, content=body)
    assert bare.status_code == 401
    assert slack.status(asked) == "pending"
    assert slack.api.called("chat.postEphemeral") == []
    # Within the window it answers.
    assert slack.post(clicked, age=299).status_code == 200
    assert slack.status(asked) == "answered"


def test_a_button_answers_and_every_copy_is_updated_in_place(slack: Slack) -> None:
    asked = slack.ask("choice", "Which?", options=["red", "blue"])
    slack.dispatcher.step()
    assert slack.post(click(asked, "pick", "1")).status_code == 200
    record = slack.store.get_interaction(asked, user="ada")
    assert (record.answer, record.answered_by, record.answered_via) == ("blue", "ada", "slack")

    assert slack.dispatcher.step() == 1
    (update,) = slack.api.called("chat.update")
    with slack.store.transaction(write=False) as tx:
        (row,) = outbox.deliveries(tx, asked)
    assert row.external_ref == f"{update['channel']}:{update['ts']}"
    assert update["ts"] and update["channel"] == "D" + ADA[1:]
    assert update["text"].startswith("Answered by ada in Slack, <!date^")
    assert "actions" not in {b["type"] for b in update["blocks"]}

    # A second click on a settled request answers nothing and says so.
    assert slack.post(click(asked, "pick", "0")).status_code == 200
    assert slack.store.get_interaction(asked, user="ada").answer == "blue"
    (told,) = slack.api.called("chat.postEphemeral")
    assert told["user"] == ADA and told["text"].startswith("Answered by ada in Slack")


def test_inputs_answer_with_their_values_and_a_refusal_is_explained(slack: Slack) -> None:
    decimal = slack.ask("decimal", "How much?", response_schema={"type": "number", "maximum": 100})
    moment = slack.ask("datetime", "When?")
    picks = slack.ask("multi", "Which?", options=["red", "blue", "green"])
    slack.dispatcher.step()

    refused = _submit(decimal, {"type": "number_input", "value": "120.50"})
    assert slack.post(refused).status_code == 200
    assert slack.status(decimal) == "pending"
    (told,) = slack.api.called("chat.postEphemeral")
    assert told["text"].startswith("Not answered:") and told["channel"] == "D" + ADA[1:]

    assert slack.post(_submit(decimal, {"type": "number_input", "value": "12.50"})).is_success
    # Sent as the text typed, never a float: the store keeps it exact.
    assert slack.store.get_interaction(decimal, user="ada").answer == "12.5"

    at = int(datetime(2026, 12, 24, 9, 30, tzinfo=UTC).timestamp())
    slack.post(_submit(moment, {"type": "datetimepicker", "selected_date_time": at}))
    assert slack.store.get_interaction(moment, user="ada").answer == "2026-12-24T09:30:00Z"

    chosen = {"type": "checkboxes", "selected_options": [{"value": "green"}, {"value": "red"}]}
    slack.post(_submit(picks, chosen))
    assert slack.store.get_interaction(picks, user="ada").answer == ["red", "green"]
    vias = {
        slack.store.get_interaction(i, user="ada").answered_via for i in (decimal, moment, picks)
    }
    assert vias == {"slack"}


def test_a_form_opens_a_modal_whose_refusal_keeps_it_open_with_field_errors(
    slack: Slack,
) -> None:
    asked = slack.ask("form", "Details?", title="Expense", response_schema=FORM)
    slack.dispatcher.step()
    assert slack.post(click(asked, "open_form", asked)).status_code == 200
    (opened,) = slack.api.called("views.open")
    view = opened["view"]
    assert opened["trigger_id"] and view["private_metadata"] == asked
    inputs = {b["block_id"]: b for b in view["blocks"] if b["type"] == "input"}
    assert list(inputs) == ["name", "amount", "when", "urgent", "tags"]
    kinds = {name: block["element"]["type"] for name, block in inputs.items()}
    assert kinds == {
        "name": "plain_text_input",
        "amount": "number_input",
        "when": "datepicker",
        "urgent": "checkboxes",
        "tags": "checkboxes",
    }
    assert inputs["name"]["optional"] is False and inputs["when"]["optional"] is True

    def submission(values: dict[str, Any]) -> dict[str, Any]:
        state = {name: {"value": value} for name, value in values.items()}
        return {
            "type": "view_submission",
            "user": {"id": ADA},
            "view": {**view, "id": "V1", "state": {"values": state}},
        }

    bad = {
        "name": {"type": "plain_text_input", "value": "Lunch"},
        "amount": {"type": "number_input", "value": "0.5"},
        "when": {"type": "datepicker", "selected_date": None},
        "urgent": {"type": "checkboxes", "selected_options": []},
        "tags": {"type": "checkboxes", "selected_options": []},
    }
    refused = slack.post(submission(bad))
    assert refused.status_code == 200
    body = refused.json()
    assert body["response_action"] == "errors" and list(body["errors"]) == ["amount"]
    assert slack.status(asked) == "pending"

    good = {
        **bad,
        "amount": {"type": "number_input", "value": "12.50"},
        "urgent": {"type": "checkboxes", "selected_options": [{"value": "yes"}]},
        "tags": {"type": "checkboxes", "selected_options": [{"value": "ops"}]},
    }
    answered = slack.post(submission(good))
    assert answered.status_code == 200 and answered.content == b""
    record = slack.store.get_interaction(asked, user="ada")
    assert record.answer == {"name": "Lunch", "amount": "12.5", "urgent": True, "tags": ["ops"]}
    assert record.answered_via == "slack"


def test_an_unknown_slack_user_is_refused_politely(slack: Slack) -> None:
    asked = slack.ask("confirm", "Deploy?")
    slack.dispatcher.step()
    assert slack.post(click(asked, "pick", "0", user="U0STRANGER")).status_code == 200
    assert slack.status(asked) == "pending"
    (told,) = slack.api.called("chat.postEphemeral")
    assert told["user"] == "U0STRANGER" and "not linked to a PawFlow user" in told["text"]
    # Another PawFlow user's Slack id cannot answer ada's request either.
    slack.store.ensure_user("bo")
    with slack.store.transaction() as tx:
        addresses.set_reach(tx, "bo", slack="U0BO00001", now=slack.store.now())
    slack.post(click(asked, "pick", "0", user="U0BO00001"))
    assert slack.status(asked) == "pending"
    assert "not one you can answer" in slack.api.called("chat.postEphemeral")[-1]["text"]
    # A modal sent by a stranger is refused on its first field; the link button does nothing.
    stranger = {
        "type": "view_submission",
        "user": {"id": "U0STRANGER"},
        "view": {
            "callback_id": "pawflow_form",
            "private_metadata": asked,
            "state": {"values": {"name": {"value": {"type": "plain_text_input", "value": "x"}}}},
        },
    }
    refused = slack.post(stranger).json()
    assert refused["response_action"] == "errors" and "not linked" in refused["errors"]["name"]
    assert slack.post(click(asked, "open_page", "")).status_code == 200
    assert slack.status(asked) == "pending" and len(slack.api.called("chat.postEphemeral")) == 2


def test_an_answer_from_the_web_api_updates_the_slack_message(slack: Slack) -> None:
    asked = slack.ask("confirm", "Deploy?")
    slack.dispatcher.step()
    token = slack.server.token("ada")
    answered = slack.http.post(
        f"{slack.server.url}/api/actions/respond_interaction",
        json={"request_id": asked, "answer": True},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert answered.status_code == 200
    assert slack.api.called("chat.update") == []
    slack.dispatcher.step()
    (update,) = slack.api.called("chat.update")
    assert update["text"].startswith("Answered by ada through the API, <!date^")
    with slack.store.transaction(write=False) as tx:
        (row,) = outbox.deliveries(tx, asked)
    assert row.external_ref == f"{update['channel']}:{update['ts']}"
    with slack.store.transaction(write=False) as tx:
        assert [r.settle for r in outbox.deliveries(tx, asked)] == ["done"]


def test_slack_refusing_a_message_fails_its_row_with_the_reason(slack: Slack) -> None:
    slack.api.failures["chat.postMessage"] = "channel_not_found"
    asked = slack.ask("confirm", "Deploy?")
    slack.dispatcher.step()
    with slack.store.transaction(write=False) as tx:
        (row,) = outbox.deliveries(tx, asked)
    assert (row.status, row.last_error) == ("failed", "Slack: channel_not_found")


def test_without_a_signing_secret_the_endpoint_is_not_there(store: Store, tmp_path: Path) -> None:
    with live_server(store, settings=QUIET) as server, httpx.Client(timeout=60) as http:
        body = urlencode({"payload": "{}"})
        found = http.post(server.url + PATH, content=body, headers=sign(SECRET, 0, body))
    assert found.status_code == 404


def test_a_post_whose_answer_was_lost_is_not_posted_twice(slack: Slack) -> None:
    slack.api.lose.add("chat.postMessage")
    asked = slack.ask("confirm", "Deploy?")
    slack.dispatcher.step()
    with slack.store.transaction(write=False) as tx:
        (row,) = outbox.deliveries(tx, asked)
    assert row.status == "queued" and row.last_error and "internal_error" in row.last_error
    slack.api.lose.clear()
    clock = slack.store.clock
    assert isinstance(clock, FakeClock)
    clock.advance("1m")
    slack.dispatcher.step()
    (posted,) = slack.api.called("chat.postMessage")  # found by its key, not posted again
    with slack.store.transaction(write=False) as tx:
        (row,) = outbox.deliveries(tx, asked)
    assert row.status == "sent" and row.external_ref == "D" + ADA[1:] + ":1700000000.000001"
    assert posted["metadata"]["event_payload"]["delivery"] == row.idempotency_key


def test_a_server_with_a_bot_token_sends_by_slack_and_masks_its_secrets(store: Store) -> None:
    settings = QUIET.replace(slack_bot_token=TOKEN, slack_signing_secret=SECRET)
    built = dispatcher(store, settings)
    # Every server runs apprise, and push unless it is turned off.
    assert set(built.channels) == {"slack", "apprise", "push"}
    assert redact(f"token {TOKEN}, secret {SECRET}") == "token ***, secret ***"
    assert set(dispatcher(store, QUIET.replace(push=False)).channels) == {"apprise"}


def test_an_answer_not_the_clickers_is_explained_to_them_alone_and_logs_no_traceback(
    slack: Slack, caplog: pytest.LogCaptureFixture
) -> None:
    """A click on a request that waits for someone else, or a second vote for the same
    person: an ephemeral message says why, Slack gets its 200, nothing changes."""
    caplog.set_level(logging.INFO)
    slack.store.ensure_user("bea")
    theirs = slack.ask(
        "confirm", "Deploy?", policy={"assignees": ["bea"], "requester_may_answer": False}
    )
    refused = slack.post(click(theirs, "pick", "0"))
    assert refused.status_code == 200, refused.text
    assert slack.status(theirs) == "pending"
    (told,) = slack.api.called("chat.postEphemeral")
    assert told["user"] == ADA and told["channel"] == "D" + ADA[1:]
    assert told["text"].startswith("Not answered:") and "waits for bea" in told["text"]

    quorum = slack.ask(
        "confirm", "Ship?", policy={"assignees": ["ada", "bea"], "required_approvals": 2}
    )
    assert slack.post(click(quorum, "pick", "0")).status_code == 200
    counted = slack.api.called("chat.postEphemeral")[-1]
    assert counted["text"] == "Your vote was counted; the request waits for more approvals."
    again = slack.post(click(quorum, "pick", "1"))  # a second vote of ada's
    assert again.status_code == 200
    told = slack.api.called("chat.postEphemeral")[-1]
    assert "ada has already voted yes" in told["text"]
    with slack.store.unit(write=False) as u:
        details = u.accountability.details(quorum, user="ada")
    assert details["interaction"].status == "pending"
    assert details["policy"]["progress"] == "1 of 2 approvals"
    assert tracebacks(caplog.records) == []


def test_forged_signatures_are_throttled_per_source_like_failed_sign_ins(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    settings = QUIET.replace(
        slack_bot_token=TOKEN,
        slack_signing_secret=SECRET,
        auth_failure_limit=1,
        auth_failure_burst=2,
    )
    body = urlencode({"payload": "{}"})
    now = int(store.now().timestamp())
    with live_server(store, settings=settings) as server, httpx.Client(timeout=60) as http:
        forged = sign("not-the-signing-secret-of-this-app", now, body)
        codes = [http.post(server.url + PATH, content=body, headers=forged).status_code]
        codes += [http.post(server.url + PATH, content=body, headers=forged).status_code]
        throttled = http.post(server.url + PATH, content=body, headers=forged)
        # Once the allowance is spent, the source is refused whatever it signs.
        signed = http.post(server.url + PATH, content=body, headers=sign(SECRET, now, body))
    assert codes == [401, 401]
    assert throttled.status_code == 429 and int(throttled.headers["retry-after"]) >= 1
    assert signed.status_code == 429
    assert tracebacks(caplog.records) == []


def test_the_manual_lists_every_web_api_method_and_action_the_channel_uses() -> None:
    """docs/channels.md names each Web API method the code calls and each action_id and
    callback_id it answers, for whoever puts a proxy or a stand-in in Slack's place."""
    source = "\n".join(
        (SOURCES / name).read_text(encoding="utf-8")
        for name in ("slack.py", "slack_answers.py", "slack_approvals.py")
    )
    called = {
        ".".join(name.split("_", 1))  # chat_postMessage -> chat.postMessage
        for name in re.findall(r"self\.client\.(\w+)\(", source)
    }
    page = (ROOT / "docs" / "channels.md").read_text(encoding="utf-8")
    table = re.findall(r"^\| `([\w.]+)` \|", page, re.M)
    assert len(called) == 6 and sorted(called - set(table)) == []
    named = {
        slack_channel.PICK,
        slack_channel.SUBMIT,
        slack_channel.OPEN_FORM,
        slack_channel.OPEN_PAGE,
        slack_channel.FORM_CALLBACK,
        slack_channel.ANSWER_BLOCK,
        slack_approvals.APPROVE,
        slack_approvals.DECIDE,
        slack_approvals.CALLBACK,
    }
    assert sorted(n for n in named if f"`{n}`" not in page and f".{n}." not in page) == []


def test_an_assignee_and_her_delegate_answer_an_assigned_request_from_slack(slack: Slack) -> None:
    """The message goes to the assignees; a click of one of them (or of her delegate) is an
    answer under the rules of HTTP, never the requester's read."""
    store = slack.store
    lee, bob = "U0LEE00001", "U0BOB00001"
    for user, slack_id in (("lee", lee), ("bob", bob), ("zed", "U0ZED00001")):
        store.ensure_user(user)
        with store.transaction() as tx:
            addresses.set_reach(tx, user, slack=slack_id, now=store.now())
    with store.unit() as u:
        u.groups.add_members("leads", ["lee"])
        u.groups.delegate("lee", to="bob", until=store.now() + timedelta(days=1))
    conversation = store.create_conversation("req", "deploys").id
    first = store.ask(
        Question("req", conversation, "confirm", "Deploy?", policy={"assignees": ["group:leads"]})
    ).interaction.id
    second = store.ask(
        Question("req", conversation, "confirm", "Again?", policy={"assignees": ["group:leads"]})
    ).interaction.id
    slack.dispatcher.step()
    assert slack.post(click(first, "pick", "0", user=lee)).status_code == 200
    record = store.get_interaction(first, user="req")
    assert (record.answer, record.answered_by, record.answered_via) == (True, "lee", "slack")
    assert slack.post(click(second, "pick", "1", user="U0ZED00001")).status_code == 200
    told = slack.api.called("chat.postEphemeral")[-1]
    assert told["text"] == "Sorry, this request is not one you can answer."
    assert slack.post(click(second, "pick", "1", user=bob)).status_code == 200
    record = store.get_interaction(second, user="req")
    assert (record.answer, record.answered_by) == (False, "bob")


def test_a_message_says_who_asks_where_and_by_when_beside_both_links(slack: Slack) -> None:
    conversation = slack.store.create_conversation("ada", "Deploys <prod>")
    asked = slack.store.ask(
        Question(
            "ada",
            conversation.id,
            "confirm",
            "Ship it?",
            title="Ship",
            requester={"type": "agent", "name": "deployer"},
            expires_in="2h",
        )
    ).interaction
    assert slack.dispatcher.step() == 1
    sent = slack.message(asked.id)
    assert sent["text"] == "Ship — the agent deployer asks"
    (context,) = _blocks(sent, "context")
    note = context["elements"][0]["text"]
    expires = asked.expires_at
    assert expires is not None
    lines = note.split("\n")
    assert lines[:3] == [
        "Asked by the agent deployer for ada.",
        "In the conversation “Deploys &lt;prod&gt;”.",  # what a person named, shown as typed
        # Slack says it in each reader's own time zone (UTC where it cannot).
        f"Answer by <!date^{int(expires.timestamp())}^{{date_short_pretty}} {{time}}"
        f"|{expires.strftime('%Y-%m-%d %H:%M UTC')}>.",
    ]
    question, where = re.findall(r"<([^|>]+)\|Open the (?:question|conversation)>", lines[3])
    assert question.startswith(slack.server.url + "/a/pfa_")
    assert where == f"{slack.server.url}/?c={conversation.id}"

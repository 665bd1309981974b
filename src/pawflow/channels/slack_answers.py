"""Answers from Slack: what a click, an input or a modal sends back, read as an answer.

Slack posts each interaction to ``/integrations/slack/interactions`` (the server verifies its
signature before anything here runs). :class:`SlackAnswers` handles the two payloads a
request's message makes:

- ``block_actions``: a button (a confirm's or a choice's pick), the **Answer** button beside
  an input (its value is read from the message's ``state``), the **Answer…** button of a form
  (which opens the form's modal with ``views.open``), or the link to the answer page (nothing
  to do);
- ``view_submission``: the form's modal;

and those of a tool approval (:mod:`pawflow.channels.slack_approvals`): **Approve** answers at
once, **Edit…**, **Reject…** and **Respond…** open their modal, whose submission is the
decision.

The Slack user is mapped to the PawFlow user whose Slack id it is; an unknown one is told so
in an ephemeral message, and nothing changes. Every answer goes through
``respond_interaction`` (``answered_via: "slack"``), so the request's own validation
decides: a refused modal stays open with its field errors (``response_action: "errors"``), a
refused message answer is explained in an ephemeral message — an answer that is not the
clicker's to give too (whom the request waits for, or the vote that stands), and Slack gets
its 200. Once answered, the dispatcher rewrites every sent copy
(:meth:`pawflow.channels.slack.SlackChannel.settle`).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from pawflow import extras

with extras.needed("slack", part="the Slack channel"):
    from slack_sdk.errors import SlackClientError

from pawflow.channels import slack, slack_approvals
from pawflow.channels.base import VOTE_COUNTED
from pawflow.errors import AlreadyVoted, Forbidden, InvalidInput, NotFound, NotPending
from pawflow.interactions import Kind
from pawflow.interactions.kinds import kind_of_property
from pawflow.interactions.tool_approval import is_tool_approval
from pawflow.records import Interaction
from pawflow.store import Store

log = logging.getLogger("pawflow.channels.slack")

UNKNOWN_USER = (
    "Sorry, your Slack account is not linked to a PawFlow user, so it cannot answer this. "
    "Ask an administrator to add your Slack id to your PawFlow user "
    "(pawflow users set NAME --slack {slack_id})."
)
NOT_YOURS = "Sorry, this request is not one you can answer."
Response = dict[str, Any] | None
"""The JSON body of the reply to Slack (None: an empty 200)."""


def _selected(state: dict[str, Any]) -> list[str] | str | None:
    """What an input element holds, as Slack reports it in ``state.values``."""
    kind = state.get("type")
    if kind in ("checkboxes", "multi_static_select"):
        return [str(o.get("value")) for o in state.get("selected_options") or []]
    if kind == "static_select":
        option = state.get("selected_option")
        return None if not option else str(option.get("value"))
    if kind == "datepicker":
        return state.get("selected_date")
    if kind == "datetimepicker":
        moment = state.get("selected_date_time")
        if not isinstance(moment, int | float) or isinstance(moment, bool):
            return None
        return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    value = state.get("value")
    return None if value is None or value == "" else str(value)


def read(kind: Kind, state: dict[str, Any] | None) -> Any:
    """The answer an element's state gives for ``kind`` (a decimal stays text)."""
    selected = _selected(state or {})
    if kind == Kind.CONFIRM:
        return isinstance(selected, list) and "yes" in selected
    if kind == Kind.MULTI:
        return selected if isinstance(selected, list) else []
    return selected


def modal(request: Interaction) -> dict[str, Any]:
    """The form's modal: one ``input`` block per field, in the schema's order."""
    schema = request.response_schema
    required = set(schema.get("required", []))
    blocks = []
    for name, prop in schema.get("properties", {}).items():
        kind = kind_of_property(prop)
        found = slack.element(kind, prop)
        assert found is not None, "a form is asked in a modal only when every field fits"
        block: dict[str, Any] = {
            "type": "input",
            "block_id": name[:255],
            "label": slack._text(str(prop.get("title") or name), 2000),
            "element": found,
            "optional": kind == Kind.CONFIRM or name not in required,
        }
        if prop.get("description"):
            block["hint"] = slack._text(str(prop["description"]), 2000)
        blocks.append(block)
    return {
        "type": "modal",
        "callback_id": slack.FORM_CALLBACK,
        "private_metadata": request.id,
        "title": slack._text(request.title or "A question for you", 24),
        "submit": slack._text("Answer"),
        "close": slack._text("Cancel"),
        "blocks": [b for b in slack.question_blocks(request) if b["type"] != "header"] + blocks,
    }


def field_errors(request: Interaction, error: InvalidInput) -> dict[str, str]:
    """A refusal's problems by the modal block they belong to (others on the first)."""
    names = list(request.response_schema.get("properties", {}))
    found: dict[str, list[str]] = {}
    for problem in error.errors or []:
        name = problem.path.removeprefix("answer").lstrip(".").split(".")[0].split("[")[0]
        if name in names:
            found.setdefault(name, []).append(problem.message)
        elif names:
            shown = f"{problem.path}: {problem.message}" if problem.path else problem.message
            found.setdefault(names[0], []).append(shown)
    if not found and names:
        found[names[0]] = [error.message]
    return {name: "; ".join(messages)[:2000] for name, messages in found.items()}


def not_theirs(error: Forbidden | AlreadyVoted) -> str:
    """Why an answer was not the clicker's to give: whom the request waits for, or the vote
    that stands."""
    return f"Not answered: {error.message}."


def _problems(error: InvalidInput) -> str:
    items = [f"{e.path}: {e.message}" if e.path else e.message for e in error.errors or []]
    return "Not answered: " + ("; ".join(items) or error.message)


class SlackAnswers:
    """Turns Slack's interaction payloads into answers, as the mapped PawFlow user."""

    def __init__(self, store: Store, config: slack.SlackConfig) -> None:
        self.store = store
        self.client = config.client()

    def handle(self, payload: dict[str, Any]) -> Response:
        kind = payload.get("type")
        if kind == "block_actions":
            self._actions(payload)
            return None
        if kind == "view_submission":
            return self._submission(payload)
        return None  # shortcuts, closed views, …: nothing of ours

    def _user(self, payload: dict[str, Any]) -> tuple[str, str | None]:
        slack_id = str((payload.get("user") or {}).get("id", ""))
        with self.store.unit(write=False) as u:
            return slack_id, u.outbox.user_by_slack(slack_id) if slack_id else None

    def _read(self, request_id: str, *, user: str) -> Interaction:
        """The request as ``user`` may see it (an assignee, a delegate, the requester): the
        answer then goes through the same rules as over HTTP."""
        if not isinstance(request_id, str) or not request_id:
            raise NotFound()
        with self.store.unit(write=False) as u:
            return u.accountability.visible(request_id, user=user)

    def _tell(self, payload: dict[str, Any], slack_id: str, text: str) -> None:
        """An ephemeral message, seen only by the one who clicked."""
        channel = (payload.get("channel") or {}).get("id") or (payload.get("container") or {}).get(
            "channel_id"
        )
        if not channel or not slack_id:
            return
        try:
            self.client.chat_postEphemeral(channel=channel, user=slack_id, text=text)
        except SlackClientError:
            log.warning("could not tell a Slack user why nothing was answered", exc_info=True)

    def _actions(self, payload: dict[str, Any]) -> None:
        actions = payload.get("actions") or []
        action = actions[0] if actions and isinstance(actions[0], dict) else {}
        block = str(action.get("block_id", ""))
        action_id = action.get("action_id")
        if action_id == slack.OPEN_PAGE or not block.startswith(slack.ACTIONS_PREFIX):
            return  # a link opens in the browser; other apps' blocks are not ours
        request_id = block.removeprefix(slack.ACTIONS_PREFIX)
        slack_id, user = self._user(payload)
        if user is None:
            self._tell(payload, slack_id, UNKNOWN_USER.format(slack_id=slack_id or "U…"))
            return
        try:
            request = self._read(request_id, user=user)
        except (NotFound, InvalidInput):
            self._tell(payload, slack_id, NOT_YOURS)
            return
        if not request.pending:
            self._tell(payload, slack_id, slack.settled_line(request) + ".")
            return
        if action_id in (slack_approvals.APPROVE, slack_approvals.DECIDE):
            if is_tool_approval(request.ui_surface):
                self._tool_action(payload, slack_id, user, request, action)
            return
        if action_id == slack.OPEN_FORM:
            try:
                self.client.views_open(trigger_id=payload.get("trigger_id"), view=modal(request))
            except SlackClientError:
                log.warning("could not open the form of request %s in Slack", request_id)
            return
        if action_id == slack.PICK:
            answer = self._pick(request, str(action.get("value", "")))
        elif action_id == slack.SUBMIT:
            values = (payload.get("state") or {}).get("values") or {}
            answer = read(request.kind, (values.get(slack.ANSWER_BLOCK) or {}).get(slack.INPUT))
        else:
            return
        self._answer(payload, slack_id, user, request, answer)

    def _tool_action(
        self,
        payload: dict[str, Any],
        slack_id: str,
        user: str,
        request: Interaction,
        action: dict[str, Any],
    ) -> None:
        """Approve at once, or open the modal of another decision the tool offers."""
        surface = request.ui_surface or {}
        value = str(action.get("value", ""))
        if action.get("action_id") == slack_approvals.APPROVE:
            answer = {"decision": "approve", **({"digest": value} if value else {})}
            self._answer(payload, slack_id, user, request, answer)
            return
        if value not in slack_approvals.BLOCKS or value not in slack_approvals.offered(surface):
            return
        view = slack_approvals.modal(request.id, surface, value)
        try:
            self.client.views_open(trigger_id=payload.get("trigger_id"), view=view)
        except SlackClientError:
            log.warning("could not open the %s modal of request %s in Slack", value, request.id)

    @staticmethod
    def _pick(request: Interaction, value: str) -> Any:
        index = int(value) if value.isdigit() and len(value) < 5 else -1
        if request.kind == Kind.CONFIRM:
            return {0: True, 1: False}.get(index)
        options = request.options or []
        return options[index]["value"] if 0 <= index < len(options) else None

    def _answer(
        self, payload: dict[str, Any], slack_id: str, user: str, request: Interaction, answer: Any
    ) -> None:
        try:
            voted = self.store.respond_interaction(request.id, answer, user=user, via="slack")
        except InvalidInput as exc:
            self._tell(payload, slack_id, _problems(exc))
        except (Forbidden, AlreadyVoted) as exc:
            self._tell(payload, slack_id, not_theirs(exc))
        except NotPending:
            settled = self._read(request.id, user=user)
            self._tell(payload, slack_id, slack.settled_line(settled) + ".")
        except NotFound:
            self._tell(payload, slack_id, NOT_YOURS)
        else:
            if voted.pending:  # a vote of a quorum: nothing else shows it was taken
                self._tell(payload, slack_id, VOTE_COUNTED)

    def _submission(self, payload: dict[str, Any]) -> Response:
        view = payload.get("view") or {}
        if view.get("callback_id") == slack_approvals.CALLBACK:
            return self._decision(payload, view)
        if view.get("callback_id") != slack.FORM_CALLBACK:
            return None
        request_id = str(view.get("private_metadata", ""))
        values = (view.get("state") or {}).get("values") or {}
        first = next(iter(values), "")
        slack_id, user = self._user(payload)
        if user is None:
            refusal = UNKNOWN_USER.format(slack_id=slack_id or "U…")
            return {"response_action": "errors", "errors": {first: refusal[:2000]}}
        try:
            request = self._read(request_id, user=user)
        except (NotFound, InvalidInput):
            return {"response_action": "errors", "errors": {first: NOT_YOURS}}
        try:
            answer = {}
            for name, prop in request.response_schema.get("properties", {}).items():
                value = read(kind_of_property(prop), (values.get(name) or {}).get(slack.INPUT))
                if value is not None:  # left empty: the schema says whether it may be
                    answer[name] = value
            self.store.respond_interaction(request.id, answer, user=user, via="slack")
        except InvalidInput as exc:
            return {"response_action": "errors", "errors": field_errors(request, exc)}
        except (Forbidden, AlreadyVoted) as exc:
            return {"response_action": "errors", "errors": {first: not_theirs(exc)[:2000]}}
        except NotFound:
            return {"response_action": "errors", "errors": {first: NOT_YOURS}}
        except NotPending:
            settled = self._read(request_id, user=user)
            line = slack.settled_line(settled, plain=True)
            return {"response_action": "errors", "errors": {first: line}}
        return None

    def _decision(self, payload: dict[str, Any], view: dict[str, Any]) -> Response:
        """A tool approval's modal: the decision it carries, checked by the store."""
        meta = slack_approvals.metadata(view)
        if not meta:
            return None
        block = slack_approvals.BLOCKS[meta["decision"]]
        slack_id, user = self._user(payload)
        if user is None:
            refusal = UNKNOWN_USER.format(slack_id=slack_id or "U…")
            return {"response_action": "errors", "errors": {block: refusal[:2000]}}
        values = (view.get("state") or {}).get("values") or {}
        try:
            request = self._read(meta.get("request", ""), user=user)
            if not is_tool_approval(request.ui_surface):
                raise NotFound()
            answer = slack_approvals.decision_from(meta, values)
            self.store.respond_interaction(request.id, answer, user=user, via="slack")
        except NotFound:
            return {"response_action": "errors", "errors": {block: NOT_YOURS}}
        except InvalidInput as exc:
            errors = slack_approvals.field_errors(meta["decision"], exc)
            return {"response_action": "errors", "errors": errors}
        except (Forbidden, AlreadyVoted) as exc:
            return {"response_action": "errors", "errors": {block: not_theirs(exc)[:2000]}}
        except NotPending:
            settled = self._read(request.id, user=user)
            line = slack.settled_line(settled, plain=True)
            return {"response_action": "errors", "errors": {block: line}}
        return None

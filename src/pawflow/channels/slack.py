"""Slack: a Block Kit message to the user's Slack id, with native controls for its kind.

``PAWFLOW_SLACK_BOT_TOKEN`` is the app's bot token (``xoxb-…``), ``PAWFLOW_SLACK_SIGNING_SECRET``
verifies what Slack posts to ``/integrations/slack/interactions``, and ``PAWFLOW_SLACK_API_URL``
is where the Web API is reached (Slack's own by default). Each request becomes one direct
message (``chat.postMessage`` to the user's id) whose controls fit its kind:

- confirm: **Yes** / **No** buttons; a request whose card marks an answer ``danger`` asks
  once more in a ``confirm`` dialog before that button answers;
- choice: one button per option when there are few and short, else a ``static_select``;
- multi: ``checkboxes`` (a ``multi_static_select`` past ten options);
- integer and decimal: a ``number_input`` (a decimal stays text: ``12.50`` is not 12.5);
- date and datetime: a ``datepicker`` / ``datetimepicker``; text: a ``plain_text_input``;
- form: a button that opens a modal of ``input`` blocks, one per field;
- a tool approval: the call and a button per decision the tool offers
  (:mod:`pawflow.channels.slack_approvals`);
- file (and a form with a file): a button to the answer link's page.

The message's metadata carries the outbox row's idempotency key: a row tried again after a
post whose answer was lost finds its message in the conversation instead of posting another.
The inputs sit in an ``input`` block with an **Answer** button beside them; what Slack sends
back is read by :mod:`pawflow.channels.slack_answers`. The message's channel and ``ts`` are
kept as the outbox row's reference, and :meth:`SlackChannel.settle` rewrites the message in
place once the request is settled anywhere: "Answered by ada in the web chat, 14:02".
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pawflow import extras

with extras.needed("slack", part="the Slack channel"):
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError, SlackClientError

from pawflow.channels import slack_approvals
from pawflow.channels.base import DeliveryError, Outgoing
from pawflow.interactions import Kind
from pawflow.interactions.kinds import kind_of_property
from pawflow.interactions.tool_approval import is_tool_approval
from pawflow.interactions.tool_approval import outcome as decision_text
from pawflow.records import Interaction
from pawflow.redaction import remember
from pawflow.store import OutboxRow

log = logging.getLogger("pawflow.channels.slack")

SLACK_API_URL = "https://slack.com/api/"
ANSWER_BLOCK = "pawflow_answer"
"""The ``block_id`` of a message's input block (one per message)."""
ACTIONS_PREFIX = "pawflow:"
"""A message's actions block is ``pawflow:<request id>``: what an action answers."""
PICK = "pick"
SUBMIT = "submit"
OPEN_FORM = "open_form"
OPEN_PAGE = "open_page"
INPUT = "value"
"""The ``action_id`` of every input element (its block says which field)."""
FORM_CALLBACK = "pawflow_form"
MAX_BUTTONS = 5
MAX_BUTTON_LABEL = 30
MAX_CHECKBOXES = 10
MAX_OPTIONS = 100
_PERMANENT = {
    "channel_not_found",
    "user_not_found",
    "not_in_channel",
    "is_archived",
    "invalid_auth",
    "account_inactive",
    "not_authed",
    "missing_scope",
    "cannot_dm_bot",
    "invalid_blocks",
    "msg_too_long",
}
VIA_WORDS = {
    "chat": "in the chat",
    "button": "in the web chat",
    "link": "by answer link",
    "email": "by email",
    "slack": "in Slack",
    "cli": "from the command line",
    "api": "through the API",
    "mcp": "over MCP",
    "mcp-app": "in an MCP app",
    "agui": "over AG-UI",
    "a2a": "over A2A",
}


@dataclass(frozen=True)
class SlackConfig:
    bot_token: str
    signing_secret: str | None = None
    api_url: str = SLACK_API_URL
    timeout: int = 30

    def __post_init__(self) -> None:
        remember(self.bot_token)
        remember(self.signing_secret)

    def client(self) -> WebClient:
        base = self.api_url if self.api_url.endswith("/") else self.api_url + "/"
        return WebClient(token=self.bot_token, base_url=base, timeout=self.timeout)


def _text(text: str, limit: int = 75) -> dict[str, Any]:
    """A ``plain_text`` object, cut to Slack's ``limit``."""
    cut = text if len(text) <= limit else text[: limit - 1] + "…"
    return {"type": "plain_text", "text": cut or " ", "emoji": True}


def _mrkdwn(text: str, limit: int = 3000) -> dict[str, Any]:
    escaped = _escape(text)
    cut = escaped if len(escaped) <= limit else escaped[: limit - 1] + "…"
    return {"type": "mrkdwn", "text": cut or " "}


def _option(value: str, label: str) -> dict[str, Any]:
    return {"text": _text(label), "value": value[:150]}


def _card_actions(request: Interaction) -> dict[str, dict[str, Any]]:
    """A request's card actions by the answer each gives (``"true"``/``"false"`` or an
    option's value)."""
    surface = request.ui_surface or {}
    found = {}
    for action in surface.get("actions", []) if isinstance(surface, dict) else []:
        if isinstance(action, dict):
            value = action.get("value")
            key = ("true" if value else "false") if isinstance(value, bool) else str(value)
            found[key] = action
    return found


def _danger(request: Interaction) -> set[str]:
    """The answers a request's card marks ``danger``: those ask once more before answering."""
    return {k for k, a in _card_actions(request).items() if a.get("style") == "danger"}


def _button(label: str, action: str, value: str, *, danger: bool = False) -> dict[str, Any]:
    button: dict[str, Any] = {
        "type": "button",
        "text": _text(label),
        "action_id": action,
        "value": value,
    }
    if danger:
        button["style"] = "danger"
        button["confirm"] = {
            "title": _text("Are you sure?"),
            "text": _text(f"Answer “{label}”?", 300),
            "confirm": _text(label),
            "deny": _text("Cancel"),
            "style": "danger",
        }
    return button


def _choices(schema: dict[str, Any]) -> list[tuple[str, str]]:
    values = [str(v) for v in schema.get("enum", [])]
    titles = {str(o.get("const")): str(o.get("title")) for o in schema.get("oneOf", [])}
    return [(v, titles.get(v, v)) for v in values]


def element(kind: Kind, schema: dict[str, Any], action: str = INPUT) -> dict[str, Any] | None:
    """The input element for a scalar kind (a form field's too); None: Slack has none."""
    if kind == Kind.CONFIRM:
        return {"type": "checkboxes", "action_id": action, "options": [_option("yes", "Yes")]}
    if kind == Kind.CHOICE:
        options = [_option(v, t) for v, t in _choices(schema)]
        if not options or len(options) > MAX_OPTIONS:
            return None
        return {"type": "static_select", "action_id": action, "options": options}
    if kind == Kind.MULTI:
        options = [_option(v, t) for v, t in _choices(schema.get("items", {}))]
        if not options or len(options) > MAX_OPTIONS:
            return None
        if len(options) <= MAX_CHECKBOXES:
            return {"type": "checkboxes", "action_id": action, "options": options}
        return {"type": "multi_static_select", "action_id": action, "options": options}
    if kind in (Kind.INTEGER, Kind.DECIMAL):
        number: dict[str, Any] = {
            "type": "number_input",
            "action_id": action,
            "is_decimal_allowed": kind == Kind.DECIMAL,
        }
        for bound, key in (("minimum", "min_value"), ("maximum", "max_value")):
            if isinstance(schema.get(bound), int | float) and not isinstance(
                schema.get(bound), bool
            ):
                number[key] = str(schema[bound])
        return number
    if kind == Kind.DATE:
        return {"type": "datepicker", "action_id": action}
    if kind == Kind.DATETIME:
        return {"type": "datetimepicker", "action_id": action}
    if kind in (Kind.TEXT, Kind.MULTILINE):
        text: dict[str, Any] = {"type": "plain_text_input", "action_id": action}
        if kind == Kind.MULTILINE:
            text["multiline"] = True
        if isinstance(schema.get("maxLength"), int) and 0 < schema["maxLength"] <= 3000:
            text["max_length"] = schema["maxLength"]
        return text
    return None


def _link(message: Outgoing, label: str = "Open the question") -> dict[str, Any]:
    return {
        "type": "button",
        "text": _text(label),
        "action_id": OPEN_PAGE,
        "url": message.answer_url,
    }


def _form_fits(request: Interaction) -> bool:
    """A form Slack can ask in a modal: every field has a native element."""
    properties = request.response_schema.get("properties", {})
    if not properties or len(properties) > 100:
        return False
    return all(
        element(kind_of_property(prop), prop) is not None and kind_of_property(prop) != Kind.FILE
        for prop in properties.values()
    )


def controls(message: Outgoing) -> list[dict[str, Any]]:
    """The blocks that answer: buttons, an input with its Answer button, or a link."""
    request = message.request
    kind = request.kind
    actions_id = ACTIONS_PREFIX + request.id
    danger = _danger(request)
    if is_tool_approval(request.ui_surface):
        surface = request.ui_surface or {}
        return slack_approvals.message_blocks(surface, actions_id, _link(message, "More"))
    if kind == Kind.CONFIRM:
        card = _card_actions(request)
        yes = str(card.get("true", {}).get("label") or "Yes")
        no = str(card.get("false", {}).get("label") or "No")
        buttons = [
            _button(yes, PICK, "0", danger="true" in danger),
            _button(no, PICK, "1", danger="false" in danger),
        ]
        buttons[0].setdefault("style", "primary")
        return [{"type": "actions", "block_id": actions_id, "elements": buttons}]
    options = request.options or []
    short = all(len(o["label"]) <= MAX_BUTTON_LABEL for o in options)
    if kind == Kind.CHOICE and 0 < len(options) <= MAX_BUTTONS and short:
        buttons = [
            _button(o["label"], PICK, str(i), danger=o["value"] in danger)
            for i, o in enumerate(options)
        ]
        return [{"type": "actions", "block_id": actions_id, "elements": buttons}]
    if kind == Kind.FORM and _form_fits(request):
        opener = _button("Answer…", OPEN_FORM, request.id)
        opener["style"] = "primary"
        return [{"type": "actions", "block_id": actions_id, "elements": [opener]}]
    found = None if kind == Kind.FORM else element(kind, request.response_schema)
    if found is None:
        return [{"type": "actions", "block_id": actions_id, "elements": [_link(message)]}]
    label = "Choose any that apply" if kind == Kind.MULTI else _label(kind)
    submit = _button("Answer", SUBMIT, request.id)
    submit["style"] = "primary"
    return [
        {
            "type": "input",
            "block_id": ANSWER_BLOCK,
            "label": _text(label, 2000),
            "element": found,
            "optional": True,
        },
        {"type": "actions", "block_id": actions_id, "elements": [submit, _link(message, "More")]},
    ]


def _label(kind: Kind) -> str:
    # The answer page's labels, which are the web chat's (kept here: channels sit below it).
    return {
        "integer": "Whole number",
        "decimal": "Number",
        "date": "Date",
        "datetime": "Date and time",
        "choice": "Choose one",
    }.get(kind.value, "Your answer")


def question_blocks(request: Interaction) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if request.title:
        blocks.append({"type": "header", "text": _text(request.title, 150)})
    if request.message.strip():
        blocks.append({"type": "section", "text": _mrkdwn(request.message)})
    return blocks


def render(message: Outgoing) -> list[dict[str, Any]]:
    """The message's blocks: the question, its controls, and who asks, in which
    conversation and by when (in each reader's time zone), with the conversation's link
    beside the answer link."""
    blocks = question_blocks(message.request) + controls(message)
    lines = message.context(when=_when, text=_escape)
    links = (
        f"<{message.answer_url}|Open the question>"
        f" · <{message.conversation_url}|Open the conversation>"
    )
    note = "\n".join([*lines, links])
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": note}]})
    return blocks


def _escape(text: str) -> str:
    """Text shown as itself in mrkdwn (Slack's three control characters)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _when(moment: datetime) -> str:
    """A moment each reader sees in their own time zone (UTC where Slack cannot say)."""
    seconds = int(moment.timestamp())
    fallback = moment.strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{seconds}^{{date_short_pretty}} {{time}}|{fallback}>"


def settled_line(request: Interaction, *, plain: bool = False) -> str:
    """How the request ended: "Answered by ada in the web chat, 14:02" (in the reader's
    time zone; ``plain``: in UTC, for the places Slack shows text as it is)."""
    if request.status == "answered":
        via = VIA_WORDS.get(request.answered_via or "", f"via {request.answered_via}")
        moment = request.answered_at
        when = ""
        if moment is not None:
            when = ", " + (moment.strftime("%Y-%m-%d %H:%M UTC") if plain else _when(moment))
        return f"Answered by {request.answered_by} {via}{when}"
    return f"This request was {request.status}."


def settled_blocks(request: Interaction) -> list[dict[str, Any]]:
    """The question and how it ended (a tool approval: the call, and what was decided)."""
    said = f"*{settled_line(request)}*"
    call: list[dict[str, Any]] = []
    if is_tool_approval(request.ui_surface):
        call = slack_approvals.call_blocks(request.ui_surface or {})
        decided = decision_text(request.answer) if request.status == "answered" else ""
        if decided:
            said += "\n" + _mrkdwn(decided, 2900)["text"]
    line = {"type": "section", "text": {"type": "mrkdwn", "text": said}}
    return [*question_blocks(request), *call, line]


def reference(channel: str, ts: str) -> str:
    return f"{channel}:{ts}"


def parse_reference(ref: str | None) -> tuple[str, str] | None:
    if not ref or ":" not in ref:
        return None
    channel, _, ts = ref.partition(":")
    return channel, ts


def delivery_error(exc: SlackClientError) -> DeliveryError:
    if isinstance(exc, SlackApiError):
        code = str(exc.response.get("error", "unknown"))
        status = exc.response.status_code
        permanent = code in _PERMANENT or (400 <= status < 500 and status != 429)
        return DeliveryError(f"Slack: {code}", permanent=permanent)
    return DeliveryError(f"Slack: {type(exc).__name__}: {exc}")


class SlackChannel:
    """The ``slack`` channel: one direct message per outbox row, updated once settled."""

    name = "slack"

    def __init__(self, config: SlackConfig) -> None:
        self.config = config
        self.client = config.client()

    def render(self, message: Outgoing) -> list[dict[str, Any]]:
        return render(message)

    def send(self, message: Outgoing) -> str | None:
        """Post the message; a row tried before is first looked for in the conversation, by
        the idempotency key its metadata carries, so a post whose answer was lost (a crash,
        a timeout) is not posted twice."""
        if message.row.attempts > 1:
            found = self._already_sent(message.row)
            if found is not None:
                return found
        try:
            sent = self.client.chat_postMessage(
                channel=message.row.address,
                text=message.subject,
                blocks=self.render(message),
                unfurl_links=False,
                metadata={
                    "event_type": "pawflow_request",
                    "event_payload": {
                        "request_id": message.request.id,
                        "delivery": message.row.idempotency_key,
                    },
                },
            )
        except SlackClientError as exc:
            raise delivery_error(exc) from exc
        return reference(str(sent["channel"]), str(sent["ts"]))

    def _already_sent(self, row: OutboxRow) -> str | None:
        """The reference of the row's message if an earlier attempt posted it (best effort:
        without the ``im:history`` scope the message is posted again)."""
        try:
            opened = self.client.conversations_open(users=row.address)
            channel = str(opened["channel"]["id"])
            history = self.client.conversations_history(
                channel=channel, limit=100, include_all_metadata=True
            )
        except SlackClientError as exc:
            log.info("could not look for an earlier post of delivery %s: %s", row.id, exc)
            return None
        for posted in history.get("messages") or []:
            payload = (posted.get("metadata") or {}).get("event_payload") or {}
            if payload.get("delivery") == row.idempotency_key:
                return reference(channel, str(posted["ts"]))
        return None

    def settle(self, row: OutboxRow, request: Interaction) -> None:
        """Rewrite the sent message: the question and how it ended, no controls."""
        found = parse_reference(row.external_ref)
        if found is None:
            return
        channel, ts = found
        try:
            self.client.chat_update(
                channel=channel,
                ts=ts,
                text=settled_line(request),
                blocks=settled_blocks(request),
            )
        except SlackApiError as exc:
            if exc.response.get("error") in ("message_not_found", "channel_not_found"):
                return  # deleted in Slack: nothing left to update
            raise delivery_error(exc) from exc
        except SlackClientError as exc:
            raise delivery_error(exc) from exc

"""Typed answers: a chat message read as the answer to the durable request it waits on.

The newest pending durable request of a conversation — an agent's ``request_confirmation``,
a consequential tool's approval, a flow's ``requestConfirmation``, any
``request_interaction`` — is what the conversation waits on
(:meth:`~pawflow.chat.sessions.SessionRegistry.pending`, kind ``request``). The classify
stage reads each message against it, by the request's kind:

- ``confirm`` (approvals too): the yes/no reader, with the same phrase tables as every match,
  or the label of one of its card's buttons ("Allow", "Don't allow");
- ``choice``: an option's label or value, a number, an ordinal, ``#2`` — exactly one option;
- ``multi``: one or several of those ("unit and lint", "1, 3");
- ``integer`` / ``decimal``: a bare number (a decimal stays exact);
- ``date`` / ``datetime``: an ISO date, or an ISO date and time;
- ``text``, ``multiline``, ``file``, ``form``: never — their block has the input.

A message that reads as an answer goes through ``respond_interaction`` as its sender: the
same validation, and one transaction for the answer, its signal, its event, the end of the
turn and the reply that says what was taken. The requester then resumes as if its block's
button had been pressed (an agent is woken, a flow goes on). Any other message is an
ordinary turn: the request stays pending, whatever is said. Like the other readers, this one
would rather miss an answer than invent one; a pick out of range answers nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pawflow.chat.readers import (
    NUMBER_WORDS,
    ORDINAL_WORDS,
    UNSURE,
    Classifier,
    normalize,
    vocabulary,
    yes_no_verdict,
)
from pawflow.errors import AlreadyVoted, Forbidden, InvalidInput, LeaseLost, NotFound, NotPending
from pawflow.interactions import Kind
from pawflow.interactions.tool_approval import is_tool_approval
from pawflow.records import Interaction, OptionItem

if TYPE_CHECKING:
    from pawflow.chat.sessions import SessionContinuation
    from pawflow.chat.turn import Turn
    from pawflow.store import Transaction as Tx

MAX_TYPED = 300
CHANNEL = "chat"
NEVER_TYPED = frozenset({"text", "multiline", "file", "form"})
"""The kinds no message answers: their block has the input."""

# Words that may frame a pick without changing it: "let's go with production", "#1 please",
# "I'll take the 2nd one". Words of the question itself frame too ("deploy to production").
# Negations, conditions and questions are not here: "not production" answers nothing.
_FRAMING = vocabulary(
    "the a an one just go with i i'll i'd i'm want like let's lets take pick choose select use "
    "prefer option number item choice answer is it that this those these we we'll ll please pls "
    "plz thanks thank you thx ty ok okay sure yes yeah yep yup hmm um oh well so and both also "
    "plus then for to"
)
# "one" is a pick only where nothing else can be meant: alone, or after one of these.
_ONE_LEADS = vocabulary("number option item #")
_TOKEN = re.compile(r"#?\w+(?:['.-]\w+)*")
_INTEGER = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATETIME = re.compile(
    r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(Z|[+-]\d{2}:?\d{2})?", re.I
)
_OUT_OF_RANGE = -1


@dataclass(frozen=True)
class Typed:
    """What a message gives as the answer (before the request's own validation)."""

    value: Any


# -- reading ------------------------------------------------------------------------------


def read(request: Interaction, text: str, classifier: Classifier | None = None) -> Typed | None:
    """The answer ``text`` gives to ``request``, or None when it is not an answer of its kind.

    ``classifier`` (off by default) is asked only about a yes or no the tables are unsure of.
    """
    if len(text) > MAX_TYPED or not text.strip():
        return None
    kind = Kind(request.kind)
    if kind is Kind.CONFIRM:
        labelled = _action_labels(request).get(" ".join(_tokens(text)))
        if labelled is not None:
            return Typed(labelled)  # a card's own button, typed: "Allow", "Not now"
        verdict = yes_no_verdict(text)
        if isinstance(verdict, bool):
            return Typed(verdict)
        if verdict == UNSURE and classifier is not None:
            answer = classifier.yes_no(request.message, text)
            return None if answer is None else Typed(answer)
        return None
    if kind in (Kind.CHOICE, Kind.MULTI):
        options = list(request.options or [])
        picks = picks_in(text, options, request.message)
        if not picks or (kind is Kind.CHOICE and len(picks) != 1):
            return None
        values = [options[index]["value"] for index in picks]
        return Typed(values[0] if kind is Kind.CHOICE else values)
    bare = _bare(text)
    if kind is Kind.INTEGER and _INTEGER.fullmatch(bare):
        return Typed(bare)
    if kind is Kind.DECIMAL and _DECIMAL.fullmatch(bare):
        return Typed(bare)  # as text: the request reads it exactly, never through a float
    if kind is Kind.DATE and _DATE.fullmatch(bare):
        return Typed(bare)
    if kind is Kind.DATETIME:
        found = _DATETIME.fullmatch(bare)
        if found is not None:
            return Typed(f"{found.group(1)}T{found.group(2)}{found.group(3) or ''}")
    return None  # text, multiline, file and form: their block has the input


def _action_labels(request: Interaction) -> dict[str, bool]:
    """A confirm card's buttons, by their label as typed: ``{"allow": True, …}``."""
    surface = request.ui_surface or {}
    actions = surface.get("actions") if surface.get("type") == "card" else None
    return {
        " ".join(_tokens(str(action.get("label", "")))): action["value"]
        for action in actions or []
        if isinstance(action, dict) and isinstance(action.get("value"), bool)
    }


def _bare(text: str) -> str:
    """The message without its surrounding spaces and a closing full stop."""
    stripped = text.strip()
    return stripped[:-1].rstrip() if stripped.endswith(".") else stripped


def _tokens(text: str) -> list[str]:
    squeezed = re.sub(r"(\d)\s+(st|nd|rd|th)\b", r"\1\2", normalize(text))
    return _TOKEN.findall(squeezed)


def _number(words: Sequence[str], index: int) -> int | None:
    """The 1-based position a word names ("2", "#2", "2nd", "second", "last"), if any."""
    word = words[index]
    digits = re.fullmatch(r"#?(\d{1,4})(?:st|nd|rd|th)?", word)
    if digits:
        return int(digits.group(1))
    if word in ORDINAL_WORDS:
        return ORDINAL_WORDS[word]
    if word in NUMBER_WORDS:
        return NUMBER_WORDS[word]
    if word == "one" and (len(words) == 1 or (index > 0 and words[index - 1] in _ONE_LEADS)):
        return 1
    return None


def picks_in(text: str, options: Sequence[OptionItem], question: str = "") -> list[int]:
    """The options ``text`` picks (0-based, in the order named, each once); [] when it says
    anything else, or names a position out of range."""
    words = _tokens(text)
    framing = _FRAMING | {w for w in _tokens(question) if not w[0].isdigit()}
    phrases = sorted(
        {
            (tuple(found), index)
            for index, option in enumerate(options)
            for said in (option["value"], option["label"])
            if (found := _tokens(said))
        },
        key=lambda item: -len(item[0]),
    )
    picks: list[int] = []
    at = 0
    while at < len(words):
        named = next(
            (
                (index, len(phrase))
                for phrase, index in phrases
                if tuple(words[at : at + len(phrase)]) == phrase
            ),
            None,
        )
        if named is not None:
            picks.append(named[0])
            at += named[1]
            continue
        position = _number(words, at)
        if position is not None:
            if position < 0:
                position = len(options) + 1 + position
            if not 1 <= position <= len(options):
                return []  # "the 7th one" of two answers nothing
            picks.append(position - 1)
        elif words[at] not in framing:
            return []
        at += 1
    return list(dict.fromkeys(picks))


# -- saying what was taken -------------------------------------------------------------------


def shown_answer(record: Interaction) -> str:
    """The answer as the restatement shows it: labels for options, yes or no, the value."""
    labels = {o["value"]: o["label"] for o in record.options or []}
    answer = record.answer
    if is_tool_approval(record.ui_surface) and isinstance(answer, dict):
        answer = {"approve": True, "reject": False}.get(str(answer.get("decision")), answer)
    if isinstance(answer, bool):
        items = ["yes" if answer else "no"]
    elif isinstance(answer, list):
        items = [labels.get(str(value), str(value)) for value in answer]
    else:
        items = [labels.get(str(answer), str(answer))]
    marked = [f"*{_plain(item)}*" for item in items]
    if len(marked) == 1:
        return marked[0]
    return f"{', '.join(marked[:-1])} and {marked[-1]}"


def _plain(text: str) -> str:
    """Text shown as itself in Markdown."""
    return re.sub(r"([\\`*_\[\]<>#])", r"\\\1", " ".join(text.split()))


VOTE_COUNTED = "Your vote on '{question}' was counted; the request waits for more approvals."
"""What a typed vote of a quorum is told (the web chat's words)."""


def restatement(record: Interaction) -> str:
    """The line that says what was taken: ``Taking *production* for 'Which …?'``."""
    return f"Taking {shown_answer(record)} for '{_plain(record.message)}'"


# -- answering --------------------------------------------------------------------------------


def answer(turn: Turn, pending: SessionContinuation, classifier: Classifier | None) -> None:
    """Answer the request ``pending`` stands for with ``turn``'s message, if it is an answer.

    A message that answers settles the turn with the restatement, written in the answering
    transaction. One that reads as an answer but is refused (out of bounds, say) settles the
    turn with the reason; the request stays pending. Any other message goes on as an
    ordinary turn.
    """
    request = pending.request
    assert request is not None
    typed = read(request, turn.text, classifier)
    if typed is None:
        turn.notes.append(f"not an answer to request {request.id}: an ordinary turn")
        return
    author = pending.owner
    data: dict[str, Any] = {}

    def record_reply(tx: Tx, record: Interaction) -> None:
        if record.pending:  # a vote of a quorum: the request waits for more
            data["voted"] = {"request_id": record.id, "vote": typed.value}
            turn.reply = VOTE_COUNTED.format(question=_plain(record.message))
            turn.recorded = turn.post_reply_in(tx, turn.reply, author=author, data=data)
            return
        data["answered"] = {
            "request_id": record.id,
            "kind": record.kind.value,
            "question": record.message,
            "answer": record.answer,
            "answered_via": CHANNEL,
        }
        turn.reply = restatement(record)
        turn.recorded = turn.post_reply_in(tx, turn.reply, author=author, data=data)

    try:
        turn.store.respond_interaction(
            request.id, typed.value, user=turn.user, via=CHANNEL, seq=turn.seq, also=record_reply
        )
    except LeaseLost:
        turn.notes.append("the turn was taken over by another process")
        turn.reply, turn.recorded, turn.done = None, None, True
        return
    except NotPending as exc:
        turn.reply = f"'{_plain(request.message)}' was {exc.status} already: nothing was taken."
    except InvalidInput as exc:
        reasons = "; ".join(dict.fromkeys(e.message for e in exc.errors)) or exc.message
        turn.reply = (
            f"That does not answer '{_plain(request.message)}': {reasons}."
            " It is still waiting for your answer."
        )
    except Forbidden as exc:  # it waits for its assignees (docs/governance.md)
        question = _plain(request.message)
        turn.reply = f"'{question}' is not yours to answer ({exc.message}): nothing was taken."
    except AlreadyVoted as exc:  # a quorum's vote for that person stands (docs/governance.md)
        turn.reply = f"'{_plain(request.message)}': {exc.message}; nothing was taken."
    except NotFound:  # the sender may not answer it: the message is theirs to say anyway
        turn.notes.append(f"{turn.user} may not answer request {request.id}")
        return
    else:
        turn.notes.append(f"answered request {request.id} by typing")
        turn.done = True
        return
    not_taken = {"not_taken": {"request_id": request.id, "text": turn.text}}
    turn.recorded = turn.post_reply(turn.reply, author=author, data=not_taken)
    turn.done = True


def waiting_note(pending: SessionContinuation) -> str:
    """What the agent's model is told while a request waits and the message did not answer."""
    request = pending.request
    assert request is not None
    options = ", ".join(o["label"] for o in request.options or [])
    what = f"{request.kind.value}" + (f": {options}" if options else "")
    return (
        f"A request is still waiting for the user's answer in this conversation: "
        f"{request.message!r} ({what}; asked by {pending.owner}). The user's latest message"
        " does not answer it. It stays open until the user answers it in its block or types"
        " an answer; do not ask it again."
    )

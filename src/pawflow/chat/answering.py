"""Typed answers: a chat message read as the answer to the durable request it waits on.

The newest pending durable request of a conversation — an agent's ``request_confirmation``,
a consequential tool's approval, a flow's ``requestConfirmation``, any
``request_interaction`` — is what the conversation waits on
(:meth:`~pawflow.chat.sessions.SessionRegistry.pending`, kind ``request``). The classify
stage reads each message against it, by the request's kind, with the one reader of typed
answers (:mod:`pawflow.reading.typed`). A message that reads as well as an answer to
another request the sender may answer in the conversation ("yes" with two confirms open)
answers none of them: the reply asks which one, naming each.

A message that reads as an answer goes through ``respond_interaction`` as its sender: the
same validation, and one transaction for the answer, its signal, its event, the end of the
turn and the reply that says what was taken. The requester then resumes as if its block's
button had been pressed (an agent is woken, a flow goes on). Any other message is an
ordinary turn: the request stays pending, whatever is said. Like the other readers, this one
would rather miss an answer than invent one; a pick out of range answers nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pawflow.errors import AlreadyVoted, Forbidden, InvalidInput, LeaseLost, NotFound, NotPending
from pawflow.reading.typed import Typed, picks_in, read, restatement
from pawflow.reading.typed import plain as _plain
from pawflow.reading.words import Classifier
from pawflow.records import Interaction

if TYPE_CHECKING:
    from pawflow.chat.sessions import SessionContinuation
    from pawflow.chat.turn import Turn
    from pawflow.store import Transaction as Tx

CHANNEL = "chat"
__all__ = [
    "CHANNEL",
    "Typed",
    "answer",
    "picks_in",
    "read",
    "restatement",
    "signed_by",
    "waiting_note",
    "which_one",
]


VOTE_COUNTED = "Your vote on '{question}' was counted; the request waits for more approvals."
"""What a typed vote of a quorum is told (the web chat's words)."""


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
    author = signed_by(request)
    alike = _read_alike(turn, request)
    if alike:
        which = [*alike, request]
        turn.reply = which_one(turn.text, which)
        data_which = {"which": {"request_ids": [r.id for r in which], "text": turn.text}}
        turn.recorded = turn.post_reply(turn.reply, author=author, data=data_which)
        turn.notes.append(f"could answer {len(which)} requests: asked which one")
        turn.done = True
        return
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


def signed_by(request: Interaction) -> str:
    """Who the chat's reply about a typed answer is from, in a name people read: the agent's
    or the flow's name, the API caller's ("tour"), never ``api:tour``."""
    name = request.requester.name
    return name if name and name != "api" else "PawFlow"


def _read_alike(turn: Turn, request: Interaction) -> list[Interaction]:
    """The other requests of the conversation the sender may answer now that the message
    reads as an answer to as well (oldest first): then it says nothing of which one it
    answers. Read by the words alone (no classifier is asked about each)."""
    with turn.store.unit(write=False) as u:
        waiting = u.accountability.inbox(user=turn.user, which="all")
    others = [
        found.interaction
        for found in waiting
        if found.interaction.conversation_id == request.conversation_id
        and found.interaction.id != request.id
    ]
    if request.id not in {found.interaction.id for found in waiting}:
        return []  # not the sender's to answer: the answer's refusal says why
    alike = [other for other in others if read(other, turn.text) is not None]
    return sorted(alike, key=lambda other: (other.created_at, other.id))


def which_one(text: str, requests: list[Interaction]) -> str:
    """What a typed answer that could answer several requests is told: which are they."""
    asked = [f"'{_plain(r.message)}'" for r in requests]
    listed = f"{', '.join(asked[:-1])} and {asked[-1]}"
    return (
        f"Which one? '{_plain(text)}' could answer {len(requests)} requests waiting here: "
        f"{listed}. Nothing was taken: answer the one you mean with its buttons."
    )


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

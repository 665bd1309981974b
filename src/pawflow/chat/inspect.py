"""What a conversation is waiting on, and what a run halted on — as lines for people.

``pawflow session inspect`` and ``pawflow run inspect`` print these. Checkpoints are read
through the one decoder (:func:`pawflow.agent.resume.decode`), so what is shown is exactly
what a resume would start from.
"""

from __future__ import annotations

import json
from datetime import datetime

from pawflow.agent.checkpoints import Checkpoint, CheckpointStore
from pawflow.agent.resume import UndecodableCheckpoint, decode
from pawflow.chat.sessions import SessionContinuation, SessionRegistry
from pawflow.clock import iso
from pawflow.errors import NotFound
from pawflow.reading.typed import NEVER_TYPED
from pawflow.store import QueuedTurn, Store

_ARTICLE = {
    "question": "a question",
    "approval": "an approval",
    "choice": "a choice",
    "request": "a request",
}


def _quote(text: str | None) -> str:
    return json.dumps(" ".join((text or "").split()), ensure_ascii=False)


def checkpoint_line(checkpoint: Checkpoint) -> str:
    try:
        seed = decode(checkpoint)
    except UndecodableCheckpoint as exc:
        return (
            f"checkpoint {checkpoint.run_id}/{checkpoint.step_id} of {checkpoint.agent}"
            f" ({checkpoint.halt_reason}) cannot be resumed: {exc}"
        )
    asked = f", asked {_quote(seed.question)}" if seed.question else ""
    return (
        f"checkpoint {seed.run_id}/{seed.step_id} of {seed.agent} ({seed.halt_reason}, step"
        f" {seed.step}, {len(seed.messages)} messages{asked};"
        f" expires {'never (pinned)' if checkpoint.pinned else iso(seed.expires_at)})"
    )


def waiting_on(continuation: SessionContinuation) -> str:
    expires = "never" if continuation.expires_at is None else iso(continuation.expires_at)
    request = continuation.request
    if request is not None:
        how = (
            "answered in its block only"
            if request.kind.value in NEVER_TYPED
            else "a typed answer of its kind answers it"
        )
        return (
            f"{continuation.owner}: the durable {request.kind.value} request {request.id},"
            f" {_quote(continuation.question)} (asked {iso(continuation.created_at)};"
            f" expires {expires}); {how}"
        )
    return (
        f"{continuation.owner}: {_ARTICLE[continuation.kind]}, {_quote(continuation.question)}"
        f" ({continuation.origin}; asked {iso(continuation.created_at)}; expires {expires})"
    )


def history_line(continuation: SessionContinuation) -> str:
    reply = f" ← {_quote(continuation.reply)}" if continuation.reply is not None else ""
    run = f" [run {continuation.run_id}/{continuation.step_id}]" if continuation.run_id else ""
    return (
        f"  {iso(continuation.created_at)}  {continuation.kind:<8} {continuation.origin:<8}"
        f" {continuation.owner:<12} {continuation.status:<10}"
        f" {_quote(continuation.question)}{reply}{run}"
    )


def _behind(checkpoints: CheckpointStore, continuation: SessionContinuation) -> list[str]:
    if continuation.run_id is None or continuation.step_id is None:
        return []
    found = checkpoints.get(continuation.run_id, continuation.step_id)
    if found is None:
        return [
            f"behind it: checkpoint {continuation.run_id}/{continuation.step_id} is gone"
            " (expired or swept): the next message starts a fresh turn"
        ]
    return [f"behind it: {checkpoint_line(found)}"]


def turn_line(turn: QueuedTurn, now: datetime) -> str:
    """``message turn … of deployer: running in <process> (attempt 2), at model call, …``."""
    what = f"{turn.kind} turn {turn.id}" + (f" of {turn.agent}" if turn.agent else "")
    if turn.status == "running" and turn.lease_until is not None and turn.lease_until > now:
        at = f", at {turn.stage}" if turn.stage else ""
        return (
            f"{what}: running in {turn.owner} (attempt {turn.attempts}{at};"
            f" lease until {iso(turn.lease_until)})"
        )
    if turn.status == "running":
        return f"{what}: its process stopped mid-turn; it runs again (attempt {turn.attempts})"
    when = "now" if turn.due_at <= now else iso(turn.due_at)
    error = f"; last error: {turn.last_error}" if turn.last_error else ""
    return f"{what}: queued, due {when}{error}"


def describe_session(store: Store, session_id: str) -> list[str]:
    """``this conversation is waiting on …``, the checkpoint behind it, and its history."""
    registry = SessionRegistry(store)
    checkpoints = CheckpointStore(store)
    history = registry.history(session_id)
    conversation = store.find_conversation(session_id)
    if conversation is None and not history:
        raise NotFound("session")
    title = (
        f'conversation "{conversation.title}" of {conversation.owner}'
        if conversation
        else "no conversation"
    )
    lines = [f"session {session_id} — {title}"]
    pending = registry.pending(session_id)
    if pending is None:
        lines.append("this conversation is waiting on nothing")
    else:
        lines.append(f"this conversation is waiting on {waiting_on(pending)}")
        for number, option in enumerate(pending.options, 1):
            lines.append(f"  {number}. {option}")
        lines += _behind(checkpoints, pending)
    with store.unit(write=False) as u:
        in_flight = u.turns.open_turns(session_id)
    if in_flight:  # queued or running turns: a reply is on its way
        lines.append("turns in flight:")
        lines += [f"  {turn_line(turn, store.now())}" for turn in in_flight]
    lines.append("history:" if history else "history: none")
    # Re-read: pending() may just have expired one.
    lines += [history_line(c) for c in registry.history(session_id)]
    return lines


def describe_run(store: Store, run_id: str) -> list[str]:
    """A run's checkpoints, what it waits on, and the continuations that pointed at it."""
    registry = SessionRegistry(store)
    found = CheckpointStore(store).of_run(run_id)
    continuations = registry.by_run(run_id)
    if not found and not continuations:
        raise NotFound("run")
    first = found[0] if found else None
    agent = first.agent if first else continuations[0].owner
    session = (first.session_id if first else None) or (
        continuations[0].session_id if continuations else None
    )
    lines = [f"run {run_id} of {agent}" + (f" in conversation {session}" if session else "")]
    lines.append("checkpoints:" if found else "checkpoints: none left (expired or swept)")
    lines += [f"  {checkpoint_line(checkpoint)}" for checkpoint in found]
    current = None if session is None else registry.pending(session)
    if current is not None and current.run_id == run_id:
        lines.append(
            f"this run is waiting on the answer to {_quote(current.question)}"
            f" in conversation {current.session_id}"
        )
    else:
        lines.append("this run is waiting on nothing")
    lines.append("history:" if continuations else "history: none")
    lines += [history_line(c) for c in registry.by_run(run_id)]
    return lines

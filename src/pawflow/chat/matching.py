"""Matching: how a message reaches whoever asked in its conversation, read without a model.

The steer (the classify stage) reads the user's message against what the session waits on:

- an ``approval`` is matched by a message the yes/no reader reads as an answer; any other
  message leaves it pending;
- a ``choice`` is matched by a message that picks exactly one in-range item; any other
  message withdraws it;
- a ``question`` is matched by the next message, whatever it says.

A match hands the owner the answer as its task (:meth:`Match.task`) and, once the owner has
acted, restates what was asked (:meth:`Match.restatement`) — so that someone answering
days later is never silently held to a question whose context they have lost.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from pawflow.reading.words import UNSURE, Classifier, pick_verdict, yes_no_verdict

if TYPE_CHECKING:
    from pawflow.agent.resume import ResumeSeed
    from pawflow.chat.sessions import SessionContinuation

# A question is restated when its answer comes at least this long after it was asked.
REGROUND_AFTER = timedelta(hours=1)
TASK_MARK = "[answer]"

Reading = Literal["match", "keep", "withdraw"]


@dataclass(frozen=True)
class Match:
    """A message taken as the answer to what its session waited on."""

    continuation: SessionContinuation
    reply: str
    answer: bool | None = None  # an approval's yes or no
    pick: int | None = None  # a choice's item, 1-based
    seed: ResumeSeed | None = None  # the halted run the answer resumes

    @property
    def owner(self) -> str:
        return self.continuation.owner

    @property
    def question(self) -> str:
        return self.continuation.question

    @property
    def option(self) -> str | None:
        options = self.continuation.options
        if self.pick is None or not 1 <= self.pick <= len(options):
            return None
        return options[self.pick - 1]

    def task(self) -> str:
        """What the owner is handed in place of the raw message."""
        asked = _quote(self.question)
        said = _quote(self.reply)
        kind = self.continuation.kind
        if kind == "approval":
            reading = "yes" if self.answer else "no"
            return (
                f"{TASK_MARK} You asked the user: {asked}\n"
                f"The user replied: {said} (read as: {reading})\n"
                + (
                    "Go ahead with what you offered."
                    if self.answer
                    else "Do not do it; acknowledge briefly and ask what to change."
                )
            )
        if kind == "choice":
            listed = "\n".join(
                f"{i}. {item}" for i, item in enumerate(self.continuation.options, 1)
            )
            return (
                f"{TASK_MARK} You offered the user this list and asked: {asked}\n{listed}\n"
                f"The user picked {self.pick}: {_quote(self.option or '')} (they wrote: {said})"
            )
        return (
            f"{TASK_MARK} You asked the user: {asked}\n"
            f"The user replied: {said}\n"
            "If that reply does not answer the question, address the reply instead."
        )

    def restatement(self, now: datetime) -> str | None:
        """The line that re-grounds the owner's reply in what was asked (None: not needed)."""
        asked = _quote(self.question)
        kind = self.continuation.kind
        if kind == "approval":
            return f"Earlier I asked {asked} — taking that as {'yes' if self.answer else 'no'}."
        if kind == "choice":
            return f"Earlier I asked {asked} — taking that as #{self.pick}: {self.option}."
        if now - self.continuation.created_at >= REGROUND_AFTER:
            return f"Earlier I asked {asked} — you replied {_quote(self.reply)}."
        return None


def _quote(text: str) -> str:
    return json.dumps(" ".join(text.split()), ensure_ascii=False)


def read(
    pending: SessionContinuation, text: str, classifier: Classifier | None = None
) -> tuple[Reading, Match | None]:
    """What ``text`` does to the pending continuation: match it, keep it, or withdraw it.

    ``classifier`` is asked only what the deterministic reader is unsure of, and only about
    this continuation (see :mod:`pawflow.chat.classifier`). A durable request is read by
    :mod:`pawflow.chat.answering`, never here: it is kept.
    """
    if pending.kind == "request":
        return "keep", None
    if pending.kind == "approval":
        verdict = yes_no_verdict(text)
        answer = verdict if isinstance(verdict, bool) else None
        if verdict == UNSURE and classifier is not None:
            answer = classifier.yes_no(pending.question, text)
        if answer is None:
            return "keep", None
        return "match", Match(pending, text, answer=answer)
    if pending.kind == "choice":
        options = pending.options
        found = pick_verdict(text, len(options))
        pick = found if isinstance(found, int) else None
        if found == UNSURE and classifier is not None:
            pick = classifier.pick(pending.question, options, text)
        if pick is None or not 1 <= pick <= len(options):
            return "withdraw", None
        return "match", Match(pending, text, pick=pick)
    return "match", Match(pending, text)


def picked(pending: SessionContinuation | None, text: str) -> bool:
    """Whether ``text`` picks an item of the pending ``choice`` (deterministically)."""
    if pending is None or pending.kind != "choice":
        return False
    return isinstance(pick_verdict(text, len(pending.options)), int)


def regrounded(reply: str | None, match: Match, now: datetime) -> str | None:
    """``reply`` opened by the restatement, unless the owner already restated it."""
    line = match.restatement(now)
    if line is None or reply is None:
        return reply if line is None else line
    if "earlier i asked" in reply.lower():
        return reply
    return f"{line}\n\n{reply}"

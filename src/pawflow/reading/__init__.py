"""The one reader of typed answers: the words people type for a yes, a no or a pick
(:mod:`pawflow.reading.words`), and the text typed for one request read by its kind
(:mod:`pawflow.reading.typed`). The chat, replies by mail, Slack's text inputs,
``pawflow answer`` and ``pawflow chat`` all read with it."""

from __future__ import annotations

from pawflow.reading.typed import Typed, read, restatement, shown_answer
from pawflow.reading.words import Classifier, read_pick, read_yes_no, yes_no_verdict

__all__ = [
    "Classifier",
    "Typed",
    "read",
    "read_pick",
    "read_yes_no",
    "restatement",
    "shown_answer",
    "yes_no_verdict",
]

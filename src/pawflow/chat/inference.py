"""What an assistant's final answer leaves the conversation waiting on, read without a model.

The gate is the question mark: an answer that does not end on "?" leaves nothing open. One
that does is read by its closing line: a numbered list (1..N, N ≥ 2) whose closing line asks
for a pick is a ``choice`` over the listed items; an offer to act is an ``approval``;
anything else is a ``question``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pawflow.chat.sessions import ContinuationKind

_ITEM = re.compile(r"^\s*(\d{1,2})[.)]\s+(\S.*?)\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_MARKUP = re.compile(r"[*_`]+")

# A closing line that asks the user to pick out of a list.
_PICK_CUES = re.compile(
    r"\b(which|any of|one of|pick|choose|select|number|open|more about|details on|"
    r"read|expand|dig into|look at|hear more)\b"
)
# A closing sentence that offers to do something, so that a yes or a no answers it.
_OFFERS = (
    re.compile(r"^(would|do|did)\s+you\s+(like|want)\s+(me\s+)?to\b"),
    re.compile(r"^(shall|should|can|could|may)\s+(i|we)\b"),
    re.compile(r"^(want|like)\s+me\s+to\b"),
    re.compile(r"^(ok|okay|alright|all right)\s+(if|to)\b"),
    re.compile(r"^(is it|is that|would it be|will that be)\s+(ok|okay|alright|all right|fine)\b"),
    re.compile(r"^(are you|you)\s+(ready|happy|ok|okay|good)\s+(to|for|with)\b"),
    re.compile(r"^ready\s+(to|for)\b"),
    re.compile(r"\b(proceed|go ahead)\b"),
)


@dataclass(frozen=True)
class Inferred:
    kind: ContinuationKind
    question: str
    options: list[str] = field(default_factory=list)


def numbered_items(lines: list[str]) -> list[str]:
    """The items of the last numbered list (1..N in order) among ``lines``."""
    found: list[str] = []
    for line in lines:
        match = _ITEM.match(line)
        if match is None:
            continue
        number = int(match.group(1))
        item = _MARKUP.sub("", match.group(2)).strip()
        if number == 1:
            found = [item]
        elif number == len(found) + 1:
            found.append(item)
        else:
            found = []  # out of sequence: not a list to pick from
    return found


def closing_question(line: str) -> str:
    """The last sentence of the closing line: the question itself."""
    parts = [part for part in _SENTENCE_END.split(line.strip()) if part]
    return parts[-1] if parts else line.strip()


def offers_to_act(question: str) -> bool:
    lowered = " ".join(question.lower().replace("\u2019", "'").split())
    return any(pattern.search(lowered) for pattern in _OFFERS)


def asks_for_pick(line: str) -> bool:
    return _PICK_CUES.search(line.lower()) is not None


def infer(text: str | None) -> Inferred | None:
    """What the answer ``text`` waits on, or None when it does not end on a question."""
    if not text:
        return None
    stripped = text.rstrip()
    if not stripped.endswith("?"):
        return None
    lines = [line for line in stripped.splitlines() if line.strip()]
    closing = lines[-1].strip()
    question = closing_question(closing)
    items = numbered_items(lines[:-1])
    if len(items) >= 2 and asks_for_pick(closing):
        return Inferred("choice", closing, items)
    if offers_to_act(question):
        return Inferred("approval", question)
    return Inferred("question", question)

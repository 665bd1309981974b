"""Typed answers: the text a person types, read as the answer to one request, by its kind.

One reader for every surface that takes typed words — the chat, replies by mail, Slack's
text inputs, ``pawflow answer`` and ``pawflow chat`` — with the word tables of
:mod:`pawflow.reading.words`:

- ``confirm`` (approvals too): the yes/no reader, or the label of one of its card's buttons
  ("Allow", "Don't allow");
- ``choice``: an option's label or value, a number, an ordinal, ``#2`` — exactly one option;
- ``multi``: one or several of those ("unit and lint", "1, 3");
- ``integer`` / ``decimal``: a bare number (a decimal stays exact);
- ``date`` / ``datetime``: an ISO date, or an ISO date and time;
- ``text``, ``multiline``, ``file``, ``form``: never — their block has the input.

It would rather miss an answer than invent one: a pick out of range, or one that could be
either of two options, answers nothing. What it reads still goes through the request's own
validation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pawflow.interactions import Kind
from pawflow.reading.words import (
    NUMBER_WORDS,
    ORDINAL_WORDS,
    UNSURE,
    Classifier,
    normalize,
    vocabulary,
    yes_no_verdict,
)
from pawflow.records import Interaction, OptionItem

MAX_TYPED = 300
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


def _action_labels(request: Interaction, *, raw: bool = False) -> dict[str, bool]:
    """A confirm card's buttons, by their label as typed: ``{"allow": True, …}`` (``raw``:
    the labels as shown)."""
    surface = request.ui_surface or {}
    actions = surface.get("actions") if surface.get("type") == "card" else None
    return {
        (
            str(action.get("label", "")) if raw else " ".join(_tokens(str(action.get("label", ""))))
        ): action["value"]
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
    from pawflow.interactions.tool_approval import is_tool_approval  # noqa: PLC0415 (jsonschema: only when shown)

    labels = {o["value"]: o["label"] for o in record.options or []}
    answer = record.answer
    if is_tool_approval(record.ui_surface) and isinstance(answer, dict):
        answer = {"approve": True, "reject": False}.get(str(answer.get("decision")), answer)
    if isinstance(answer, bool):
        card = {value: label for label, value in _action_labels(record, raw=True).items()}
        items = [card.get(answer) or ("yes" if answer else "no")]
    elif isinstance(answer, list):
        items = [labels.get(str(value), str(value)) for value in answer]
    else:
        items = [labels.get(str(answer), str(answer))]
    marked = [f"*{plain(item)}*" for item in items]
    if len(marked) == 1:
        return marked[0]
    return f"{', '.join(marked[:-1])} and {marked[-1]}"


def plain(text: str) -> str:
    """Text shown as itself in Markdown."""
    return re.sub(r"([\\`*_\[\]<>#])", r"\\\1", " ".join(text.split()))


def restatement(record: Interaction) -> str:
    """The line that says what was taken, with the card's own label for a confirm:
    ``Taking *Merge* for 'Merge the dependency update?'``."""
    return f"Taking {shown_answer(record)} for '{plain(record.message)}'"

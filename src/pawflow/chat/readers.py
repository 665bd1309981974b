"""Deterministic readers of a reply: is it a yes or a no, is it a pick from a list?

No model is consulted: whether a message claims a pending continuation is decided here, by
rules a test can enumerate. Both readers would rather miss an answer (the turn then runs as
a fresh request) than invent one.
"""

from __future__ import annotations

import re


def vocabulary(words: str) -> frozenset[str]:
    """A word table written as one string: long tables stay readable."""
    return frozenset(words.split())


_WORD = re.compile(r"#?\d+(?:st|nd|rd|th)?|[a-z]+(?:'[a-z]+)?")

YES = vocabulary(
    "yes y yeah yep yup sure ok okay k proceed confirm confirmed approve approved affirmative "
    "absolutely definitely agreed go do please alright fine correct right"
)
NO = vocabulary("no n nope nah don't dont cancel stop abort negative decline declined reject never")
YES_PHRASES = (
    "go ahead",
    "do it",
    "sounds good",
    "of course",
    "let's do it",
    "lets do it",
    "go for it",
    "make it so",
    "ship it",
)
NO_PHRASES = (
    "not now",
    "never mind",
    "nevermind",
    "no thanks",
    "don't do it",
    "do not",
    "not yet",
    "hold off",
)
# Words that may follow a yes or a no without making it something else.
_ANSWER_TAIL = vocabulary(
    "go ahead with the plan it that this please thanks thank you do proceed sure and i think "
    "so just for now one that's fine good great perfect ok okay yes no all right alright "
    "let's lets a plan's them those these sounds way idea thing change changes move moves "
    "files of course not mind yet later off hold"
)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def read_yes_no(text: str) -> bool | None:
    """``True`` for a yes, ``False`` for a no, ``None`` when the message is not an answer."""
    lowered = " ".join(text.lower().replace("\u2019", "'").split())
    if not lowered or "?" in lowered or len(lowered) > 200:
        return None
    words = _words(lowered)
    if not words:
        return None
    said_no = any(lowered.startswith(p) for p in NO_PHRASES) or words[0] in NO
    said_yes = not said_no and (any(lowered.startswith(p) for p in YES_PHRASES) or words[0] in YES)
    if not (said_yes or said_no):
        return None
    if any(word not in _ANSWER_TAIL | YES | NO for word in words[1:]):
        return None  # more than an answer: treat it as a new request
    return said_yes


ORDINAL_WORDS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "last": -1,
}
# Words that only frame a pick ("tell me more about …", "the … one", "the 3rd headline").
FRAMING = vocabulary(
    "the one just go with give me more details detail on about expand what dig into can could "
    "would you open tell show read please pick choose take select i i'll i'd want like let's "
    "lets see look at explain describe summarize summarise that this a of in from your list "
    "number no option item entry headline story article news email mail message result link "
    "thing to and info information regarding for is it how ok okay yes let do get us say "
    "prefer use we ll there them those these one's"
)
_PLURAL_EXCEPTIONS = vocabulary("news details this is us yes ls its")


def _ordinal(token: str) -> int | None:
    digits = re.fullmatch(r"#?(\d+)(?:st|nd|rd|th)?", token)
    if digits:
        return int(digits.group(1))
    return ORDINAL_WORDS.get(token)


def read_pick(text: str, count: int) -> int | None:
    """The 1-based item a message picks out of ``count``, or ``None`` if it picks nothing.

    It picks only when the message reduces to exactly one in-range ordinal plus words that
    merely frame a pick. A number used as a quantity ("show me 5 more", "give me 3
    headlines") is not a pick; neither is a message with two numbers.
    """
    if count < 1 or len(text) > 300:
        return None
    lowered = re.sub(r"(\d)\s+(st|nd|rd|th)\b", r"\1\2", text.lower())
    words = _words(lowered)
    found: list[tuple[int, int]] = []
    for index, word in enumerate(words):
        value = _ordinal(word)
        if value is not None:
            found.append((index, value))
    if len(found) != 1:
        return None
    index, value = found[0]
    token = words[index]
    bare = token.isdigit()
    following = words[index + 1] if index + 1 < len(words) else ""
    if bare and (following == "more" or _is_plural(following)):
        return None  # a quantity: "5 more", "3 headlines"
    if any(word not in FRAMING for i, word in enumerate(words) if i != index):
        return None
    if value == -1:
        value = count
    return value if 1 <= value <= count else None


def _is_plural(word: str) -> bool:
    return len(word) > 2 and word.endswith("s") and word not in _PLURAL_EXCEPTIONS

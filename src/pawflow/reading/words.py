"""Deterministic readers of a reply: is it a yes or a no, is it a pick from a list?

No model is consulted: whether a message matches a pending continuation is decided here, by
rules a test can enumerate (``tests/chat/test_phrases.py`` holds the table). Both readers
would rather miss an answer (the turn then runs as a fresh request) than invent one.

Each reader has a verdict form (:func:`yes_no_verdict`, :func:`pick_verdict`) that also
says *why* a message is not an answer: ``"refused"`` when it is definitely something else
(a question, a condition, a quantity, two numbers), ``"unsure"`` when it merely uses words
the tables do not know. An optional classifier (:mod:`pawflow.chat.classifier`) may only
ever be asked about the unsure ones.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Literal, Protocol

Unread = Literal["refused", "unsure"]
REFUSED: Unread = "refused"
UNSURE: Unread = "unsure"

MAX_ANSWER = 200
MAX_PICK = 300


class Classifier(Protocol):
    """A second reader for what the tables do not know; ``None`` is "not an answer"."""

    def yes_no(self, question: str, reply: str) -> bool | None: ...

    def pick(self, question: str, options: Sequence[str], reply: str) -> int | None: ...


def vocabulary(words: str) -> frozenset[str]:
    """A word table written as one string: long tables stay readable."""
    return frozenset(words.split())


_WORD = re.compile(r"#?\d+(?:st|nd|rd|th)?|[a-z_]+(?:'[a-z]+)?")

# -- normalising --------------------------------------------------------------------------

# Emoji that answer, and the marker word they stand for. Skin tones and variation
# selectors are dropped first, so every variant of a thumb reads the same.
_EMOJI = {
    "\U0001f44d": " yes ",  # thumbs up
    "\u2705": " yes ",  # check mark button
    "\u2714": " yes ",  # heavy check mark
    "\u2611": " yes ",  # ballot box with check
    "\U0001f44c": " yes ",  # ok hand
    "\U0001f197": " yes ",  # OK button
    "\U0001f646": " yes ",  # person gesturing OK
    "\U0001f4af": " yes ",  # hundred points
    "\U0001f44e": " no ",  # thumbs down
    "\u274c": " no ",  # cross mark
    "\u274e": " no ",  # cross mark button
    "\u2716": " no ",  # heavy multiplication x
    "\U0001f6ab": " no ",  # prohibited
    "\u26d4": " no ",  # no entry
    "\U0001f645": " no ",  # person gesturing no
    "\U0001f6d1": " no ",  # stop sign
}
_MODIFIERS = re.compile("[\ufe0e\ufe0f\u200d\U0001f3fb-\U0001f3ff]")


def normalize(text: str) -> str:
    """Lower case, one kind of apostrophe, answering emoji as words, single spaces."""
    lowered = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'")
    lowered = _MODIFIERS.sub("", lowered)
    for emoji, word in _EMOJI.items():
        lowered = lowered.replace(emoji, word)
    return " ".join(lowered.split())


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _squeezed(word: str) -> list[str]:
    """Spellings of an emphasised word: "yesss" → "yes", "nooope" → "nope", "okkk" → "ok"."""
    once = re.sub(r"(.)\1+", r"\1", word)
    twice = re.sub(r"(.)\1{2,}", r"\1\1", word)
    return [word, twice, once]


# -- yes and no ---------------------------------------------------------------------------

# Strong words decide; soft ones ("fine", "please") only answer when nothing strong does.
YES = vocabulary(
    "yes y ya yah yea yeah yeh yep yup yeap yeup yas yse yez ys ye yesh "
    "proceed procede proceeding confirm confirmed confirming confrim confim "
    "approve approved aprove aproved approving accept accepted agree agreed "
    "affirmative absolutely definitely certainly indeed totally exactly "
    "_yes"
)
SOFT_YES = vocabulary(
    "ok okay okey okie oki oky oaky okk kk k alright allright alrighty aight righto "
    "sure shure sur fine correct right good great perfect cool nice excellent lgtm please "
    "pls plz go"
)
NO = vocabulary(
    "no n nope nop nah naw nay negative never cancel cancelled canceled stop abort "
    "decline declined reject rejected deny denied don't dont nvm pass skip _no"
)
# Phrases are read before words, longest first; each becomes a marker word.
YES_PHRASES = (
    "go ahead",
    "go for it",
    "go on",
    "carry on",
    "do it",
    "do that",
    "do so",
    "please do",
    "let's do it",
    "lets do it",
    "let's do this",
    "let's go",
    "lets go",
    "sounds good",
    "sounds great",
    "sounds fine",
    "sounds like a plan",
    "looks good",
    "looks great",
    "looks fine",
    "of course",
    "make it so",
    "ship it",
    "i think so",
    "i guess so",
    "why not",
    "no problem",
    "no worries",
    "no prob",
    "by all means",
    "all right",
    "all good",
    "fair enough",
    "good to go",
    "that works",
    "works for me",
    "fine by me",
    "ok by me",
    "okay by me",
    "yes please",
    "sure thing",
    "you bet",
    "for sure",
    "green light",
    "i agree",
    "i approve",
    "i confirm",
    "that's right",
    "that's correct",
    "that's fine",
    "that is fine",
    "that's ok",
    "that's okay",
    "go go go",
)
NO_PHRASES = (
    "not now",
    "not yet",
    "not really",
    "not today",
    "not this time",
    "no thanks",
    "no thank you",
    "never mind",
    "nevermind",
    "don't do it",
    "don't do that",
    "do not do it",
    "please do not do it",
    "please don't do it",
    "please do not",
    "do not",
    "please don't",
    "i don't think so",
    "don't think so",
    "i'd rather not",
    "i would rather not",
    "rather not",
    "better not",
    "hold off",
    "no way",
    "forget it",
    "forget about it",
    "leave it",
    "scrap that",
    "scrap it",
    "skip it",
    "let's not",
    "lets not",
    "no need",
    "i'll pass",
    "maybe later",
    "another time",
    "some other time",
    "i decline",
    "i refuse",
    "cancel that",
    "cancel it",
    "stop it",
)
_YES_MARK = "_yes"
_NO_MARK = "_no"
_PHRASES = sorted(
    [(p, _YES_MARK) for p in YES_PHRASES] + [(p, _NO_MARK) for p in NO_PHRASES],
    key=lambda item: -len(item[0]),
)
_PHRASE = re.compile(r"(?<![\w'])(" + "|".join(re.escape(p) for p, _ in _PHRASES) + r")(?![\w'])")
_PHRASE_MARK = dict(_PHRASES)
# Words that may come before the answer: "oh", "well", "um yes".
_OPENERS = vocabulary("oh well um umm uh uhh hmm hm ah ahh hey hi so then i mean er erm let's lets")
# Words that may surround an answer without making it something else: politeness,
# emphasis, and what an answer points at ("yes, go ahead with the plan").
_ANSWER_TAIL = vocabulary(
    "with the plan it that this these those them please thanks thank you thx ty cheers and "
    "i think so just for now one that's all a plan's sounds way idea thing change changes "
    "move moves files of course mind yet later off hold really very much so totally "
    "definitely absolutely indeed mate buddy man dude friend sir lol haha then too also "
    "is are me by from here to"
)
# What makes a message more than an answer, whatever else it says.
_CONDITIONS = vocabulary(
    "but if unless except only although though however instead provided once when after "
    "before until first"
)


# The words a slip of the finger is forgiven in ("yse", "aprove", "cancle", "nopee"): one
# letter added, dropped, changed or two swapped, never the first letter changed. A slip
# that could be a word of either side answers nothing.
_MENDABLE_YES = vocabulary(
    "yes yeah yep yup okay sure proceed confirm confirmed approve approved accept accepted "
    "agree agreed absolutely definitely certainly affirmative"
)
_MENDABLE_NO = vocabulary(
    "nope nah cancel cancelled reject rejected decline declined deny denied abort negative"
)
_KNOWN = YES | NO | SOFT_YES


def _one_slip(typed: str, word: str) -> bool:
    """Whether ``typed`` is ``word`` with one letter added, dropped, changed, or two swapped
    (never its first letter changed)."""
    if typed == word or typed[:1] != word[:1] or abs(len(typed) - len(word)) > 1:
        return False
    if len(typed) == len(word):
        diff = [i for i, (a, b) in enumerate(zip(typed, word, strict=True)) if a != b]
        if len(diff) == 1:
            return True
        i = diff[0]
        return diff == [i, i + 1] and typed[i] == word[i + 1] and typed[i + 1] == word[i]
    short, long = (typed, word) if len(typed) < len(word) else (word, typed)
    return any(long[:i] + long[i + 1 :] == short for i in range(1, len(long)))


def mended(word: str) -> bool | None:
    """The side a misspelt ``word`` is a slip of: True, False, or None (none, or both)."""
    if len(word) < 3 or word in _KNOWN or not word.isalpha():
        return None
    sides = {
        side
        for side, table in ((True, _MENDABLE_YES), (False, _MENDABLE_NO))
        if any(_one_slip(word, known) for known in table)
    }
    return sides.pop() if len(sides) == 1 else None


def _polarity(word: str) -> tuple[bool | None, bool]:
    """(yes/no/None, strong) for one word, emphasised spellings and slips included."""
    for spelling in _squeezed(word):
        if spelling in YES:
            return True, True
        if spelling in NO:
            return False, True
        if spelling in SOFT_YES:
            return True, False
    if word in _ANSWER_TAIL or word in _OPENERS or word in _CONDITIONS:
        return None, False
    for spelling in _squeezed(word):
        side = mended(spelling)
        if side is not None:
            return side, True
    return None, False


def _mend_phrases(lowered: str) -> str:
    """The text with a phrase typed with one slip written as the phrase ("go head"), when it
    holds no phrase as written (one typed right is never rewritten into another)."""
    if _PHRASE.search(lowered):
        return lowered
    words = lowered.split()
    for phrase, _ in _PHRASES:
        size = phrase.count(" ") + 1
        if len(phrase) < 7:
            continue
        for at in range(len(words) - size + 1):
            window = " ".join(w.strip(".,!") for w in words[at : at + size])
            if window != phrase and _one_slip(window, phrase):
                words[at : at + size] = phrase.split()
    return " ".join(words)


def yes_no_verdict(text: str) -> bool | Unread:
    """``True`` for a yes, ``False`` for a no, else why it is not an answer."""
    lowered = normalize(text)
    if not lowered or "?" in lowered or len(lowered) > MAX_ANSWER:
        return REFUSED if lowered else UNSURE
    marked = _PHRASE.sub(lambda m: f" {_PHRASE_MARK[m.group(1)]} ", _mend_phrases(lowered))
    words = _words(marked)
    if any(word in _CONDITIONS or word[0].isdigit() or word[0] == "#" for word in words):
        return REFUSED  # "yes but change step 2", "no, only the first one"
    while words and words[0] in _OPENERS and _polarity(words[0])[0] is None:
        words = words[1:]
    if not words:
        return UNSURE
    first, _ = _polarity(words[0])
    if first is None:
        return UNSURE  # it does not start with an answer
    strong: set[bool] = set()
    for word in words:
        said, is_strong = _polarity(word)
        if said is None:
            if not any(spelling in _ANSWER_TAIL for spelling in _squeezed(word)):
                return UNSURE  # more than an answer: a new request, most likely
        elif is_strong:
            strong.add(said)
    if len(strong) > 1:
        return REFUSED  # "yes and no"
    return strong.pop() if strong else first


def read_yes_no(text: str) -> bool | None:
    """``True`` for a yes, ``False`` for a no, ``None`` when the message is not an answer."""
    verdict = yes_no_verdict(text)
    return verdict if isinstance(verdict, bool) else None


# -- picks --------------------------------------------------------------------------------

ORDINAL_WORDS = {
    "first": 1,
    "frist": 1,
    "fisrt": 1,
    "second": 2,
    "secnd": 2,
    "secnod": 2,
    "third": 3,
    "thrid": 3,
    "thrd": 3,
    "fourth": 4,
    "forth": 4,
    "fifth": 5,
    "fith": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "eigth": 8,
    "ninth": 9,
    "nineth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
    "last": -1,
    "penultimate": -2,
}
NUMBER_WORDS = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
# "one" is a pick only where nothing else can be meant ("one", "number one"): it also
# frames picks ("the second one") and counts ("just one more").
_ONE_LEADS = vocabulary("number no option item entry # pick choose open")
# A cardinal after these counts things ("the two", "top three", "all five").
_COUNTING = vocabulary("the these those all both top any first last next")
# Words that only frame a pick ("tell me more about …", "the … one", "the 3rd headline").
FRAMING = vocabulary(
    "the one just go with give me more details detail on about expand what dig into can could "
    "would you open tell show read please pls plz pick choose take select i i'll i'd want like "
    "let's lets see look at explain describe summarize summarise that this a of in from your "
    "list number no option item entry headline story article news email mail message result "
    "link thing to and info information regarding for is it how ok okay yes let do get us say "
    "prefer use we ll there them those these one's thanks thank thx ty cheers go_ahead "
    "oh um hmm well so sure yeah yep"
)
_PICK_CONDITIONS = vocabulary("but if unless except although though however instead provided")
_PLURAL_EXCEPTIONS = vocabulary("news details this is us yes ls its thanks thx pls plz")


def _number(words: list[str], index: int) -> int | None:
    token = words[index]
    digits = re.fullmatch(r"#?(\d+)(?:st|nd|rd|th)?", token)
    if digits:
        return int(digits.group(1))
    for spelling in (token, *_squeezed(token)[1:]):
        if spelling in ORDINAL_WORDS:
            return ORDINAL_WORDS[spelling]
    if token in NUMBER_WORDS:
        return NUMBER_WORDS[token]
    if token == "one" and (index == 0 or words[index - 1] in _ONE_LEADS):
        return 1
    return None


def pick_verdict(text: str, count: int) -> int | Unread:
    """The 1-based item a message picks out of ``count``, else why it picks nothing."""
    if count < 1 or len(text) > MAX_PICK:
        return REFUSED
    lowered = re.sub(r"(\d)\s+(st|nd|rd|th)\b", r"\1\2", normalize(text))
    lowered = lowered.replace("go ahead", "go_ahead")
    words = _words(lowered)
    found = [(i, value) for i in range(len(words)) if (value := _number(words, i)) is not None]
    if not found:
        return UNSURE
    if len(found) != 1:
        return REFUSED  # "compare 2 and 3", "the first three"
    index, value = found[0]
    token = words[index]
    following = words[index + 1] if index + 1 < len(words) else ""
    cardinal = token.lstrip("#").isdigit() or token in NUMBER_WORDS or token == "one"
    if cardinal and (following == "more" or _is_plural(following)):
        return REFUSED  # a quantity: "5 more", "3 headlines", "two more"
    before = words[index - 1] if index > 0 else ""
    if token in NUMBER_WORDS and before in _COUNTING:
        return REFUSED  # "the two", "top three"
    if token in ORDINAL_WORDS and before == "a":
        return REFUSED  # "in a second", "a third option"
    if any(word in _PICK_CONDITIONS for word in words) or "top" in words:
        return REFUSED
    if any(word not in FRAMING for i, word in enumerate(words) if i != index):
        return UNSURE
    if value < 0:
        value = count + 1 + value
    return value if 1 <= value <= count else REFUSED


def read_pick(text: str, count: int) -> int | None:
    """The 1-based item a message picks out of ``count``, or ``None`` if it picks nothing.

    It picks only when the message reduces to exactly one in-range ordinal plus words that
    merely frame a pick. A number used as a quantity ("show me 5 more", "give me 3
    headlines", "top two") is not a pick; neither is a message with two numbers.
    """
    verdict = pick_verdict(text, count)
    return verdict if isinstance(verdict, int) else None


def _is_plural(word: str) -> bool:
    return len(word) > 2 and word.endswith("s") and word not in _PLURAL_EXCEPTIONS

"""The deterministic matching readers over tables of phrasings."""

from __future__ import annotations

import pytest

from pawflow.reading.words import read_pick, read_yes_no

PICKS = [
    ("3", 3),
    ("#2", 2),
    ("the second one", 2),
    ("just go with the 1 st one", 1),
    ("give me more details on 3", 3),
    ("expand on 3", 3),
    ("what about 3", 3),
    ("dig into 3", 3),
    ("can you open 3", 3),
    ("the 3rd headline", 3),
    ("tell me more about the 4th news from your list", 4),
    ("The last one", 5),
    ("2.", 2),
    ("open 2", 2),
    ("number 2 please", 2),
    ("I'll take the third", 3),
    ("go with #3", 3),
    ("option 2", 2),
    ("the 5th", 5),
    ("Tell me more about the 4th", 4),
]
NOT_PICKS = [
    "show me 5 more",
    "give me 3 headlines",
    "compare 2 and 3",
    "the 9th one",  # out of range
    "0",
    "what's the weather in Paris?",
    "3 people are coming to dinner",
    "",
    "yes",
    "tell me about the third and the fourth",
    "2 more please",
    "show me 10 stories",
    "give me 3 more headlines",
    "top 3 stories",
    "give me the 3 best",
    "between 2 and 4",
    "what's the capital of France?",
    "6",  # out of range
]


@pytest.mark.parametrize(("message", "expected"), PICKS)
def test_picks(message: str, expected: int) -> None:
    assert read_pick(message, 5) == expected


@pytest.mark.parametrize("message", NOT_PICKS)
def test_not_picks(message: str) -> None:
    assert read_pick(message, 5) is None


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("yes", True),
        ("Yes go ahead with the plan", True),
        ("yep, do it", True),
        ("sounds good", True),
        ("ok", True),
        ("no", False),
        ("nope, not now", False),
        ("don't", False),
        ("cancel it", False),
        ("never mind", False),
    ],
)
def test_yes_no(message: str, expected: bool) -> None:
    assert read_yes_no(message) is expected


@pytest.mark.parametrize(
    "message",
    [
        "what's the weather tomorrow?",
        "yes?",
        "no idea, can you summarize my inbox instead",
        "organize my downloads folder",
        "",
        "yes and also book a flight to Rome",
    ],
)
def test_not_answers(message: str) -> None:
    assert read_yes_no(message) is None

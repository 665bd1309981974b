"""What a final answer leaves the conversation waiting on, over a table of answers."""

from __future__ import annotations

import pytest

from pawflow.chat.inference import infer, numbered_items

HEADLINES = "Headlines:\n1. Alpha\n2. **Beta**\n3. Gamma\nWant me to open any of these?"


@pytest.mark.parametrize(
    ("answer", "kind", "question"),
    [
        (HEADLINES, "choice", "Want me to open any of these?"),
        ("Found these:\n1) one\n2) two\nWhich one should I read?", "choice", None),
        (
            "Here is a plan:\n1. Draft\n2. Email\nWould you like to proceed with this plan?",
            "approval",
            "Would you like to proceed with this plan?",
        ),
        ("I drafted it. Shall I send it?", "approval", "Shall I send it?"),
        ("Want me to book it?", "approval", None),
        ("Should I go ahead?", "approval", None),
        ("Which graph database should I set up: Neo4j or Stardog?", "question", None),
        ("Neo4j or Stardog?", "question", None),
        ("Only one option:\n1. Alpha\nWant me to open it?", "approval", None),  # N < 2
        ("1. Alpha\n3. Gamma\nWhich one?", "question", None),  # not 1..N
    ],
)
def test_answers_ending_on_a_question(answer: str, kind: str, question: str | None) -> None:
    found = infer(answer)
    assert found is not None and found.kind == kind
    if question is not None:
        assert found.question == question


@pytest.mark.parametrize(
    "answer",
    [None, "", "Done.", "Paris.", "Here you go:\n1. a\n2. b", "Is it? Yes, it is."],
)
def test_answers_that_do_not_end_on_a_question(answer: str | None) -> None:
    assert infer(answer) is None


def test_a_choice_carries_the_listed_items() -> None:
    found = infer(HEADLINES)
    assert found is not None and found.options == ["Alpha", "Beta", "Gamma"]
    assert numbered_items(["1. a", "2. b", "text", "1. c", "2. d", "3. e"]) == ["c", "d", "e"]

"""How a message reads as the answer to a durable request of each kind (no store, no model)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from pawflow.interactions import normalize_options, prepare_request
from pawflow.interactions.kinds import Kind
from pawflow.reading.typed import Typed, read, restatement
from pawflow.records import Interaction

ENVIRONMENTS = ["staging", "production"]
FORMATS = [
    {"value": "pdf", "label": "PDF"},
    {"value": "html", "label": "Web page"},
    {"value": "csv", "label": "Spreadsheet (CSV)"},
]
CHECKS = ["unit", "lint", "e2e"]


def request(kind: str, options: Any = None, message: str = "Which one?") -> Interaction:
    parsed = None if options is None else normalize_options(options)
    final, schema = prepare_request(Kind(kind), parsed, None)
    return Interaction(
        id="r1",
        kind=Kind(kind),
        message=message,
        options=None if final is None else [o.model_dump() for o in final],  # type: ignore[misc]
        response_schema=schema,
        owner="alice",
        conversation_id="c1",
        requester={"type": "agent", "name": "deployer"},  # type: ignore[arg-type]
        signal_id="confirmation:r1",
        status="pending",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def value(kind: str, text: str, options: Any = None, message: str = "Which one?") -> Any:
    found = read(request(kind, options, message), text)
    return None if found is None else found.value


@pytest.mark.parametrize(
    ("text", "taken"),
    [
        ("production", "production"),
        ("Production.", "production"),
        ("PRODUCTION!", "production"),
        ("the 2nd one", "production"),
        ("2", "production"),
        ("#1 please", "staging"),
        ("the first one", "staging"),
        ("the last one", "production"),
        ("second", "production"),
        ("let's go with staging", "staging"),
        ("I'll take production, thanks", "production"),
        ("deploy to production", "production"),  # the question's own words frame it
        # Not one pick: nothing is taken.
        ("the 7th one", None),
        ("#3", None),
        ("not production", None),
        ("no, production", None),
        ("staging or production", None),
        ("staging and production", None),
        ("tell me more about 2", None),
        ("what is the difference?", None),
        ("production but only tomorrow", None),
        ("yes", None),
        ("give me 2 more", None),
        ("", None),
    ],
)
def test_a_choice_takes_one_option_by_label_value_number_or_ordinal(
    text: str, taken: str | None
) -> None:
    assert value("choice", text, ENVIRONMENTS, "Which environment should I deploy to?") == taken


@pytest.mark.parametrize(
    ("text", "taken"),
    [
        ("web page", "html"),
        ("Spreadsheet (CSV)", "csv"),
        ("csv", "csv"),
        ("pdf please", "pdf"),
        ("spreadsheet", None),  # part of a label is not a label
    ],
)
def test_a_choice_reads_labels_and_values(text: str, taken: str | None) -> None:
    assert value("choice", text, FORMATS) == taken


@pytest.mark.parametrize(
    ("text", "taken"),
    [
        ("unit and lint", ["unit", "lint"]),
        ("lint, unit", ["lint", "unit"]),
        ("1, 3", ["unit", "e2e"]),
        ("#2 and #3", ["lint", "e2e"]),
        ("e2e", ["e2e"]),
        ("both unit and lint please", ["unit", "lint"]),
        ("unit, unit", ["unit"]),
        ("1 and 7", None),
        ("unit or lint", None),
        ("everything except e2e", None),
        ("yes", None),
    ],
)
def test_a_multi_takes_several_picks(text: str, taken: list[str] | None) -> None:
    assert value("multi", text, CHECKS) == taken


@pytest.mark.parametrize(
    ("kind", "text", "taken"),
    [
        ("confirm", "yes", True),
        ("confirm", "sounds good, go ahead", True),
        ("confirm", "nope, not now", False),
        ("confirm", "👍", True),
        ("confirm", "yes but only staging", None),
        ("confirm", "is it safe?", None),
        ("confirm", "production", None),
        ("integer", "42", "42"),
        ("integer", " -3. ", "-3"),
        ("integer", "42 please", None),
        ("integer", "forty-two", None),
        ("integer", "4.5", None),
        ("decimal", "12.50", "12.50"),
        ("decimal", ".5", ".5"),
        ("decimal", "about 12", None),
        ("date", "2026-05-01", "2026-05-01"),
        ("date", "May 1st", None),
        ("datetime", "2026-05-01T10:00Z", "2026-05-01T10:00Z"),
        ("datetime", "2026-05-01 10:00:30 +02:00", "2026-05-01T10:00:30+02:00"),
        ("datetime", "2026-05-01", None),
        ("text", "hello", None),
        ("multiline", "hello\nworld", None),
        ("file", "report.pdf", None),
    ],
)
def test_scalar_kinds_take_a_bare_value_and_text_kinds_take_nothing(
    kind: str, text: str, taken: Any
) -> None:
    assert value(kind, text) == taken


def test_a_confirm_cards_buttons_may_be_typed() -> None:
    card = {
        "contract": "pawflow.ui-surface.v1",
        "type": "card",
        "fallback": "confirm",
        "title": "deployer wants to run rollback",
        "actions": [
            {"label": "Allow", "value": True, "style": "primary"},
            {"label": "Don't allow", "value": False},
        ],
    }
    approval = request("confirm").model_copy(update={"ui_surface": card})
    assert [read(approval, typed) for typed in ("allow", "Don't allow.", "yes", "allow it")] == [
        Typed(True),
        Typed(False),
        Typed(True),
        None,
    ]


def test_a_form_is_never_answered_by_free_text() -> None:
    form = request("confirm").model_copy(update={"kind": Kind.FORM})
    assert read(form, "yes") is None


def test_the_restatement_names_what_was_taken_by_its_label() -> None:
    asked = request("multi", FORMATS, "Which formats?")
    answered = asked.model_copy(update={"status": "answered", "answer": ["pdf", "csv"]})
    assert restatement(answered) == ("Taking *PDF* and *Spreadsheet (CSV)* for 'Which formats?'")
    yes = request("confirm", None, "Ship *it*?").model_copy(update={"answer": True})
    assert restatement(yes) == "Taking *yes* for 'Ship \\*it\\*?'"


def test_a_card_answer_is_restated_with_its_buttons_label_and_typos_are_forgiven() -> None:
    card = {
        "contract": "pawflow.ui-surface.v1",
        "type": "card",
        "fallback": "confirm",
        "title": "Merge?",
        "actions": [{"label": "Merge", "value": True}, {"label": "Not now", "value": False}],
    }
    asked = request("confirm", None, "Merge the dependency update?").model_copy(
        update={"ui_surface": card}
    )
    assert read(asked, "yse") == Typed(True)
    assert read(asked, "go head") == Typed(True)
    assert read(asked, "not now") == Typed(False)
    merged = asked.model_copy(update={"status": "answered", "answer": True})
    assert restatement(merged) == "Taking *Merge* for 'Merge the dependency update?'"
    kept = asked.model_copy(update={"status": "answered", "answer": False})
    assert restatement(kept) == "Taking *Not now* for 'Merge the dependency update?'"

"""The ``pawflow.ui-surface.v1`` contract: known surfaces checked in full and against the
request they present; unknown types kept when their envelope is sound (clients fall back)."""

from __future__ import annotations

from typing import Any

import pytest

from pawflow.demo.tour import EXAMPLES
from pawflow.errors import InvalidInput
from pawflow.interactions import Kind, normalize_options
from pawflow.interactions.surfaces import check_surface
from pawflow.store import Question, Store

OPTIONS = normalize_options(["a", "b"])


def table(**changes: Any) -> dict[str, Any]:
    surface: dict[str, Any] = {
        "contract": "pawflow.ui-surface.v1",
        "type": "table",
        "columns": [{"key": "name", "label": "Name"}, {"key": "n", "label": "N", "align": "end"}],
        "rows": [
            {"value": "a", "cells": {"name": "A", "n": 1}},
            {"value": "b", "cells": {"name": "B", "n": None}},
        ],
        "fallback": "choice",
    }
    surface.update(changes)
    return surface


def card(**changes: Any) -> dict[str, Any]:
    surface: dict[str, Any] = {
        "contract": "pawflow.ui-surface.v1",
        "type": "card",
        "title": "Deploy?",
        "fields": [{"label": "Version", "value": "2.4"}],
        "actions": [
            {"label": "Go", "value": True, "style": "primary"},
            {"label": "No", "value": False},
        ],
        "fallback": "confirm",
    }
    surface.update(changes)
    return surface


def paths(error: pytest.ExceptionInfo[InvalidInput]) -> set[str]:
    return {e.path for e in error.value.errors}


def test_valid_surfaces_are_kept_as_given() -> None:
    assert check_surface(table(), Kind.CHOICE, OPTIONS) == table()
    assert check_surface(table(fallback="multi"), "multi", OPTIONS)["fallback"] == "multi"
    assert check_surface(card(), Kind.CONFIRM, None) == card()
    informational = card(actions=[], fallback="text")
    assert check_surface(informational, Kind.TEXT, None) == informational
    chooser = card(actions=[{"label": "A", "value": "a"}], fallback="choice")
    assert check_surface(chooser, Kind.CHOICE, OPTIONS) == chooser


def test_an_unknown_type_is_kept_when_its_envelope_is_sound() -> None:
    chart = {"contract": "pawflow.ui-surface.v1", "type": "chart", "fallback": "decimal", "x": [1]}
    assert check_surface(chart, Kind.DECIMAL, None) == chart
    with pytest.raises(InvalidInput) as error:
        check_surface({**chart, "fallback": "text"}, Kind.DECIMAL, None)
    assert paths(error) == {"ui_surface.fallback"}


@pytest.mark.parametrize(
    ("surface", "kind", "where"),
    [
        ([], Kind.CHOICE, "ui_surface"),
        (table(contract="pawflow.ui-surface.v2"), Kind.CHOICE, "ui_surface.contract"),
        (table(fallback="sing"), Kind.CHOICE, "ui_surface.fallback"),
        (table(fallback="multi"), Kind.CHOICE, "ui_surface.fallback"),
        (table(rows=[{"value": "z", "cells": {}}]), Kind.CHOICE, "ui_surface.rows[0].value"),
        (table(rows=[{"cells": {"name": "A"}}]), Kind.CHOICE, "ui_surface.rows[0].value"),
        (
            table(rows=[{"value": "a", "cells": {}}, {"value": "a", "cells": {}}]),
            Kind.CHOICE,
            "ui_surface.rows[1].value",
        ),
        (
            table(rows=[{"value": "a", "cells": {"x": 1}}]),
            Kind.CHOICE,
            "ui_surface.rows[0].cells.x",
        ),
        (
            table(rows=[{"value": "a", "cells": {"n": [1]}}]),
            Kind.CHOICE,
            "ui_surface.rows[0].cells.n",
        ),
        (table(columns=[]), Kind.CHOICE, "ui_surface.columns"),
        (table(extra=1), Kind.CHOICE, "ui_surface.extra"),
        (card(fallback="text"), Kind.TEXT, "ui_surface.actions"),
        (
            card(actions=[{"label": "Go", "value": "yes"}]),
            Kind.CONFIRM,
            "ui_surface.actions[0].value",
        ),
        (
            card(actions=[{"label": "Z", "value": "z"}], fallback="choice"),
            Kind.CHOICE,
            "ui_surface.actions[0].value",
        ),
        (table(title="x" * 2000), Kind.CHOICE, "ui_surface.title"),
        (table(rows=[{"value": "a", "cells": {"name": "x" * 70_000}}]), Kind.CHOICE, "ui_surface"),
    ],
)
def test_a_bad_surface_is_refused_naming_the_place(surface: Any, kind: Kind, where: str) -> None:
    with pytest.raises(InvalidInput) as error:
        check_surface(surface, kind, OPTIONS)
    assert where in paths(error), error.value.errors


def test_the_store_checks_surfaces_when_a_request_is_published(sqlite_store: Store) -> None:
    chat = sqlite_store.create_conversation("ann", "Surfaces").id
    for example in (e for e in EXAMPLES if "ui_surface" in e):
        fields = dict(example)
        record = sqlite_store.ask(
            Question("ann", chat, fields.pop("kind"), fields.pop("message"), **fields)
        ).interaction
        assert record.ui_surface == example["ui_surface"]
    with pytest.raises(InvalidInput) as error:
        sqlite_store.ask(Question("ann", chat, "choice", "Pick", options=["a"], ui_surface=table()))
    assert "ui_surface.rows[1].value" in paths(error)
    assert sqlite_store.list_interactions(user="ann", conversation_id=chat, kind="choice")

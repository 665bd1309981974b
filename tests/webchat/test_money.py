"""One money format: the web chat writes an amount in a currency exactly as the terminal app
and the flows' messages do (pawflow.interactions.money), whatever the reader's locale."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pawflow.interactions.money import money
from tests.webchat.conftest import Person

pytestmark = pytest.mark.slow

AMOUNTS = [
    (42.5, "EUR"),
    ("42.50", "EUR"),
    (1234.5, "USD"),
    (-3, "GBP"),
    (1234.5, "JPY"),
    ("0.125", "KWD"),
    (1234.5, "CHF"),
    (99.999, "CAD"),
    (1234567.891, "INR"),
    (1234.5, "XOF"),
]


def test_the_web_chat_writes_amounts_as_the_terminal_and_the_flows_do(
    person: Callable[..., Person],
) -> None:
    page = person().open("/")  # an en-GB reader: "US$" there, were the locale followed
    shown = page.evaluate(
        """async (amounts) => {
            const format = await import("/static/js/format.js");
            return amounts.map(([amount, currency]) => format.money(amount, currency));
        }""",
        [[amount, currency] for amount, currency in AMOUNTS],
    )
    assert shown == [money(amount, currency) for amount, currency in AMOUNTS]
    assert shown[:3] == ["€42.50", "€42.50", "$1,234.50"]

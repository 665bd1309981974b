"""What the tests read of the log: no refusal a user can cause ever logs a traceback."""

from __future__ import annotations

from collections.abc import Iterable
from logging import LogRecord


def tracebacks(records: Iterable[LogRecord]) -> list[str]:
    """The records that carry a traceback (an exception, or one written out in the text)."""
    return [
        f"{record.name}: {record.getMessage()}"
        for record in records
        if record.exc_info or record.exc_text or "Traceback" in record.getMessage()
    ]

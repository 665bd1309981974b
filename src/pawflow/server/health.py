"""``GET /healthz``: whether this server can work, and if not, what is down.

It answers at once: what the store knows of the database (unreachable since when, its disk
full) is read without asking the database; only when nothing is known to be wrong does one
``SELECT 1`` check it. Every background loop of the process (the sweeper, the flow service,
the outbox, the listeners, …) is listed with its state: ``running``, ``failing for N s (…)``
or ``not running`` (its thread ended).

The status is ``ok``; ``degraded`` while some loop fails but the store answers (still 200);
``unavailable`` (503, with ``Retry-After``) when the store does not answer or a loop is not
running: a process to take out of rotation, or restart. On PostgreSQL, ``clock`` says how far
this server's clock is off the database's (:mod:`pawflow.store.clocks`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from pawflow import loops
from pawflow.errors import StoreUnavailable
from pawflow.store import Store, clock_health

from .models import Out

RETRY_AFTER = "1"


def check(store: Store) -> tuple[int, dict[str, Any]]:
    """The status code and the body of ``/healthz``."""
    problem = store.problem()
    if problem is None:
        try:
            store.ping()
        except StoreUnavailable as exc:
            problem = store.problem() or str(exc)
    states: dict[str, str] = {}
    for loop in loops.background():
        name, number = loop.name, 1
        while name in states:
            number += 1
            name = f"{loop.name} #{number}"
        states[name] = loop.state()
    stopped = any(state == "not running" for state in states.values())
    failing = any(state.startswith("failing") for state in states.values())
    status = "unavailable" if problem is not None or stopped else "degraded" if failing else "ok"
    body = {"status": status, "store": problem or "ok", "loops": states}
    body.update(clock_health(store.clock))
    return (503 if status == "unavailable" else 200), body


class ClockHealth(Out):
    """This server's clock against the database's (PostgreSQL only)."""

    status: Literal["ok", "skewed"]
    offset_seconds: float | None = Field(
        description="How far this server's clock is ahead of the database's (negative: behind)"
    )
    max_skew_seconds: float = Field(description="PAWFLOW_MAX_CLOCK_SKEW")
    read_at: str | None = Field(description="When the database's clock was last read")
    detail: str


class Health(Out):
    status: Literal["ok", "degraded", "unavailable"] = Field(
        description="ok; degraded: a background loop fails, the store answers;"
        " unavailable (503): the store does not answer, or a loop is not running."
    )
    store: str = Field(description="`ok`, or what is wrong with the database and for how long.")
    loops: dict[str, str] = Field(
        description="Each background loop of the process: `running`, `failing for N s (…)`"
        " or `not running`."
    )
    version: str = Field(description="The server's version of PawFlow.")
    clock: ClockHealth | None = None

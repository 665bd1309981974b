"""Every id is made by ``pawflow.ids.new_id``: none starts with ``-`` (a command line would
read it as an option) or ``_``."""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Callable

import pytest

from pawflow.agent import RunRequest, ToolContext
from pawflow.flow import FlowFile
from pawflow.flow import deployments as deps
from pawflow.ids import new_id, new_ordered_id
from pawflow.store import Question, Store

WAIT_FLOW = "name: w\ntasks:\n  w: {type: durableWait, properties: {signal_id: s}}\n"


def awkward_randomness() -> Callable[[int | None], str]:
    """Each fresh id is first drawn starting with ``-``, then with ``_``, then usable."""
    counter = itertools.count()

    def token_urlsafe(nbytes: int | None = None) -> str:
        n = next(counter)
        return ["-", "_", "A"][n % 3] + f"{n:021d}"

    return token_urlsafe


def test_ids_are_long_random_and_safe_on_a_command_line() -> None:
    made = {new_id() for _ in range(2000)}
    assert len(made) == 2000
    assert all(len(i) == 22 and i[0] not in "-_" for i in made)


def test_deployment_run_and_flowfile_ids_never_start_with_a_dash(
    sqlite_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    conversation = sqlite_store.create_conversation("alice").id
    monkeypatch.setattr(secrets, "token_urlsafe", awkward_randomness())
    deployment, _ = deps.deploy(sqlite_store, WAIT_FLOW, conversation_id=conversation)
    ctx = ToolContext(sqlite_store, "agent", conversation, "alice", "run")
    made = [deployment.id, RunRequest("agent", [], ctx).run_id, FlowFile.create(b"").id]
    assert all(made) and [i[0] for i in made] == ["A", "A", "A"]


def test_ordered_ids_sort_as_they_were_made() -> None:
    made = [new_ordered_id() for _ in range(5000)]
    assert made == sorted(made)  # a browser's string comparison sees the same order
    assert len(set(made)) == len(made)
    assert all(len(i) == 22 and i.isalnum() for i in made)
    # What follows the time stamp is not guessable from one id to the next.
    assert len({i[9:] for i in made}) == len(made)


def test_requests_made_in_one_instant_keep_their_order(store: Store) -> None:
    conversation = store.create_conversation("alice").id
    made = [
        store.ask(Question("alice", conversation, "confirm", f"Q{n}?")).interaction.id
        for n in range(20)
    ]
    assert made == sorted(made)

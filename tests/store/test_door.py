"""The door: text the store cannot keep is refused where it comes in, naming the argument.

NUL (SQLite would keep it, PostgreSQL cannot), lone surrogates (neither can) and text over
the door's limit get an ``InvalidInput`` on every backend alike, from the ``Store``'s
methods and every table of a unit, before anything is read or written; what is kept as JSON
keeps its NUL, alike on both.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from pawflow.errors import InvalidInput
from pawflow.store import NewQueueRow, Park, Question, Store, Unit
from pawflow.store.unit.binding import MAX_TEXT, Table, bound, checked, refuse_unstorable

Door = Callable[[Store, str], object]


def _in_unit(call: Callable[[Unit], object]) -> Door:
    def opened(store: Store, conversation_id: str) -> object:
        with store.unit() as u:
            return call(u)

    return opened


FACADE: list[tuple[str, Door]] = [
    ("user", lambda s, c: s.ensure_user("al\x00ice")),
    ("owner", lambda s, c: s.create_conversation("al\x00ice", "Plans")),
    ("title", lambda s, c: s.create_conversation("alice", "Plans\x00")),
    ("title", lambda s, c: s.create_conversation("alice", "Plans\ud800")),
    (
        "with_user",
        lambda s, c: s.share_conversation(c, user="alice", with_user="b\x00", access="read"),
    ),
    ("content", lambda s, c: s.post_message(c, "hi\x00", user="alice")),
    ("conversation_id", lambda s, c: s.post_message(c + "\x00", "hi", user="alice")),
    ("name", lambda s, c: s.add_file("alice", "a\x00.txt", "text/plain", b"x")),
    ("target", lambda s, c: s.park("job\x00:1")),
    ("target", lambda s, c: s.park("job:" + "x" * MAX_TEXT)),
    ("signal_id", lambda s, c: s.park("job:1", signal_id="s\x00")),
    ("signal_id", lambda s, c: s.notify_signal("s\x00", "v")),
    ("conversation_id", lambda s, c: s.ask(Question("alice", c + "\x00", "confirm", "Go?"))),
    ("kind", lambda s, c: s.ask(Question("alice", c, "conf\x00irm", "Go?"))),
    ("owner", lambda s, c: s.ask(Question("al\x00ice", c, "confirm", "Go?"))),
    ("notify[1]", lambda s, c: s.ask(Question("alice", c, "confirm", "Go?", notify=["a", "\x00"]))),
    ("target", lambda s, c: s.ask(Question("alice", c, "confirm", "Go?"), park=Park("t\x00:1"))),
    ("request_id", lambda s, c: s.respond_interaction("id\x00", True, user="alice")),
    ("via", lambda s, c: s.respond_interaction("id", True, user="alice", via="a\x00")),
    ("request_id", lambda s, c: s.cancel_interaction("id\x00", user="alice")),
    ("request_id", lambda s, c: s.get_interaction("id\x00", user="alice")),
    ("conversation_id", lambda s, c: s.page_interactions(user="alice", conversation_id="c\x00")),
    ("event_type", lambda s, c: s.announce(c, "ev\x00", {})),
]

UNITS: list[tuple[str, Door]] = [
    ("title", _in_unit(lambda u: u.conversations.create_conversation("alice", "x\x00"))),
    ("content", _in_unit(lambda u: u.messages.append_message("c", author="a", content="\x00"))),
    ("name", _in_unit(lambda u: u.leases.acquire("lease\x00", "me", timedelta(seconds=5)))),
    ("name", _in_unit(lambda u: u.leases.release("lease\x00", "me"))),  # a bound function
    ("user", _in_unit(lambda u: u.conversations.user_exists("al\x00ice"))),
    ("run_id", _in_unit(lambda u: u.checkpoints.get("run\x00", "step"))),
    (
        "rows[0].task",
        _in_unit(lambda u: u.queues.enqueue("flow:x", [NewQueueRow("t\x00", "ff", b"")])),
    ),
    (
        "moves[1][1].flowfile_id",
        _in_unit(
            lambda u: u.queues.move(
                [(1, NewQueueRow("t", "ff", b"")), (2, NewQueueRow("t", "f\ud800", b""))], "me"
            )
        ),
    ),
    (
        "name",
        _in_unit(lambda u: u.credentials.add_token("h", "alice", name="n\x00", expires_at=None)),
    ),
    (
        "text",
        _in_unit(
            lambda u: u.turns.schedule_wakeup(
                agent="a", conversation_id="c", user="alice", source="s", text="\x00", data={}
            )
        ),
    ),
]


@pytest.mark.parametrize(("field", "door"), FACADE + UNITS)
def test_text_no_database_can_keep_is_refused_at_the_door_naming_it(
    store: Store, field: str, door: Door
) -> None:
    conversation_id = store.create_conversation("alice", "Doors").id
    with pytest.raises(InvalidInput) as refused:
        door(store, conversation_id)
    assert [e.path for e in refused.value.errors] == [field]
    assert field in str(refused.value)
    assert "\x00" not in str(refused.value)
    # Nothing came in: no request, no other conversation, no message.
    assert [c.id for c in store.list_conversations(user="alice")] == [conversation_id]
    assert store.list_interactions(user="alice") == []
    with store.unit(write=False) as u:
        assert u.messages.history(conversation_id, user="alice") == []


def test_texts_each_within_the_limit_pass_however_long_together() -> None:
    def enqueue(tx: object, rows: list[NewQueueRow]) -> None:
        """Stands for a table function: the door looks at its rows."""

    where = checked(enqueue)
    long = [NewQueueRow("t", "x" * MAX_TEXT, b""), NewQueueRow("t", "y" * MAX_TEXT, b"")]
    refuse_unstorable(where, [long], {})
    with pytest.raises(InvalidInput) as refused:
        refuse_unstorable(where, [[*long, NewQueueRow("t", "z" * (MAX_TEXT + 1), b"")]], {})
    assert [e.path for e in refused.value.errors] == ["rows[2].flowfile_id"]


def test_json_values_keep_their_nul_alike_on_every_backend(store: Store) -> None:
    """What is kept as JSON is not looked into: JSON spells NUL ``\\u0000``."""
    store.notify_signal("sig", {"text": "a\x00b"})
    fired = store.get_signal("sig")
    assert fired is not None and fired.value == {"text": "a\x00b"}
    parked = store.park("job:1", signal_id="later", payload={"note": "\x00"})
    assert json.loads(store.get_continuation(parked.id).payload) == {"note": "\x00"}


def _doors_of(cls: type) -> list[tuple[str, bool]]:
    found = []
    for name, attr in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(attr, bound) or inspect.isfunction(attr):
            found.append((f"{cls.__name__}.{name}", getattr(attr, "__door__", False)))
    return found


def test_every_way_in_goes_through_the_door() -> None:
    tables = [t for t in vars(Unit).values() if isinstance(getattr(t, "table", None), type)]
    assert len(tables) > 20
    ways: list[tuple[str, bool]] = _doors_of(Store)
    for made in tables:
        assert issubclass(made.table, Table)
        ways += _doors_of(made.table)
    assert len(ways) > 200
    assert [way for way, checked in ways if not checked] == []


def test_the_door_names_a_record_s_fields_and_leaves_json_alone(store: Store) -> None:
    conversation_id = store.create_conversation("alice", "Doors").id
    question: dict[str, Any] = {"response_schema": {"type": "string", "title": "x\x00"}}
    with pytest.raises(InvalidInput) as refused:
        store.ask(Question("alice", conversation_id, "text", "Go?", **question))
    assert [e.path for e in refused.value.errors] == ["response_schema.title"]  # the kinds'

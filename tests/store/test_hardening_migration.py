"""The hardening migration on a database with history: answered uploads are linked (only
real file answers of the answerer's own uploads), and each user's events are renumbered
from 1 in their order, with a counter that goes on from there."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pawflow import open_store
from pawflow.store import Store
from pawflow.store.engine import migrations
from pawflow.store.engine.database import sql
from pawflow.testing import throwaway_postgres
from tests.conftest import require_postgres

BEFORE = next(m.version for m in migrations.migrations_for("sqlite") if m.name == "hardening") - 1


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def old_store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Store]:
    """A store migrated only to the version before the hardening migration."""
    every = migrations.migrations_for

    def older(dialect: str) -> list[migrations.Migration]:
        return every(dialect)[:BEFORE]

    def opened(url: str) -> Store:
        store = open_store(url, migrate=False)
        with monkeypatch.context() as patch:
            patch.setattr(migrations, "migrations_for", older)
            assert store.migrate() == BEFORE
        return store

    if request.param == "sqlite":
        store = opened(f"sqlite:///{tmp_path / 'old.db'}")
        yield store
        store.close()
    else:
        require_postgres()
        with throwaway_postgres() as url:
            store = opened(url)
            yield store
            store.close()


def _ref(file_id: str) -> dict[str, object]:
    return {"id": file_id, "name": "f", "size": 1, "media_type": "text/plain", "sha256": "x"}


def test_history_is_linked_and_renumbered(old_store: Store) -> None:
    answers = {
        # a file answer with the answerer's own upload: linked
        "i-file": ("file", "bob", _ref("f-bob")),
        # a form with a file field holding the answerer's upload: linked
        "i-form": ("form", "bob", {"note": "n", "scan": _ref("f-bob-2")}),
        # text fields shaped like a file reference: never linked
        "i-shape": ("form", "alice", {"id": "f-bob", "sha256": "x"}),
        # someone else's upload in a file answer (never accepted, but old data): not linked
        "i-foreign": ("file", "alice", _ref("f-bob")),
        "i-plain": ("text", "alice", "hello"),
    }
    with old_store.transaction() as tx:
        for user in ("alice", "bob"):
            sql(tx).execute("INSERT INTO users (id, created_at) VALUES (?, 0)", (user,))
        sql(tx).execute(
            "INSERT INTO conversations (id, owner, title, created_at) VALUES ('c', 'alice', '', 0)"
        )
        for file_id, owner in (("f-bob", "bob"), ("f-bob-2", "bob"), ("f-alice", "alice")):
            sql(tx).execute(
                "INSERT INTO files (id, owner, name, size, media_type, sha256, content, created_at)"
                " VALUES (?, ?, 'f', 1, 'text/plain', 'x', ?, 0)",
                (file_id, owner, b"x"),
            )
        for request_id, (kind, by, answer) in answers.items():
            sql(tx).execute(
                "INSERT INTO interactions (id, kind, message, response_schema, owner,"
                " conversation_id, requester, signal_id, status, answer, answered_by,"
                " answered_at, created_at) VALUES (?, ?, 'm', '{}', 'alice', 'c', '{}', ?,"
                " 'answered', ?, ?, 1, 0)",
                (request_id, kind, f"interaction:{request_id}", json.dumps(answer), by),
            )
        for user in ("alice", "bob", "alice", "alice", "bob"):
            sql(tx).execute(
                "INSERT INTO events (user_id, conversation_id, type, data, created_at)"
                " VALUES (?, NULL, 'notification', '{}', 0)",
                (user,),
            )

    assert old_store.migrate() == len(migrations.migrations_for(old_store.dialect))

    with old_store.transaction(write=False) as tx:
        links = sql(tx).all(
            "SELECT file_id, interaction_id FROM file_links ORDER BY interaction_id"
        )
        numbered = sql(tx).all("SELECT user_id, user_seq FROM events ORDER BY seq")
        counters = sql(tx).all("SELECT user_id, last_seq FROM event_counters ORDER BY user_id")
    assert [(r["file_id"], r["interaction_id"]) for r in links] == [
        ("f-bob", "i-file"),
        ("f-bob-2", "i-form"),
    ]
    assert [(r["user_id"], r["user_seq"]) for r in numbered] == [
        ("alice", 1),
        ("bob", 1),
        ("alice", 2),
        ("alice", 3),
        ("bob", 2),
    ]
    assert [(r["user_id"], r["last_seq"]) for r in counters] == [("alice", 3), ("bob", 2)]
    # the next events go on from each user's count
    with old_store.unit() as u:
        u.messages.notify_user("bob", "after the upgrade")
    assert [e.seq for e in old_store.events_after("bob", 2)] == [3]
    # the requests' owner may now download what answered them
    assert old_store.readable_file("f-bob", user="alice").id == "f-bob"
    assert old_store.readable_file("f-bob-2", user="alice").id == "f-bob-2"

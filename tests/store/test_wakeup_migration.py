"""Migration 0016 on a database with wakeups in flight: each ``agent_wakeups`` row becomes
(or joins) its turn, and every pending wakeup resumes exactly once; a row that cannot be
migrated refuses the migration and leaves the database as it was."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pawflow import FakeClock, MigrationError, open_store
from pawflow.agent import AgentSpec, ScriptedModel
from pawflow.chat.service import ChatService
from pawflow.clock import to_millis
from pawflow.store import Store
from pawflow.store.engine import migrations
from pawflow.store.engine.database import sql
from pawflow.testing import throwaway_postgres
from tests.agent.conftest import HELPER_SCRIPT, USER
from tests.conftest import require_postgres

BEFORE = (
    next(m.version for m in migrations.migrations_for("sqlite") if m.name == "wakeup_turns") - 1
)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def old_store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Store]:
    """A store migrated only to the version before wakeups became turns."""
    every = migrations.migrations_for

    def older(dialect: str) -> list[migrations.Migration]:
        return every(dialect)[:BEFORE]

    def opened(url: str) -> Store:
        store = open_store(url, migrate=False, clock=FakeClock())
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


def _conversation(store: Store) -> str:
    """A conversation as the code before migration 0016 wrote it (the store's own calls write
    the newest schema's columns)."""
    at = to_millis(store.now())
    with store.db.transaction() as tx:
        sql(tx).execute("INSERT INTO users (id, created_at) VALUES (?, ?)", (USER, at))
        sql(tx).execute(
            "INSERT INTO conversations (id, owner, title, created_at) VALUES (?, ?, ?, ?)",
            ("c-wakeups", USER, "Wakeups", at),
        )
    return "c-wakeups"


def _wakeup(
    store: Store,
    conversation_id: str,
    wakeup_id: str,
    status: str,
    *,
    turn: str | None,
    message_id: str | None = None,
    data: str | None = None,
) -> None:
    """A wakeup as the code before migration 0016 wrote it: its row, and its turn's."""
    at = to_millis(store.now())
    lease = at - 60_000 if status == "running" else None
    with store.db.transaction() as tx:
        sql(tx).execute(
            "INSERT INTO agent_wakeups (id, agent, conversation_id, user_id, source, text, data,"
            " status, due_at, lease_until, attempts, message_id, created_at)"
            " VALUES (?, 'helper', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                wakeup_id,
                conversation_id,
                USER,
                f"confirmation:{wakeup_id}",
                f"The answer to {wakeup_id} came.",
                data if data is not None else json.dumps({"request_id": wakeup_id}),
                status,
                at,
                lease,
                1 if status in ("running", "done") else 0,
                message_id,
                at,
            ),
        )
        if turn is not None:
            sql(tx).execute(
                "INSERT INTO chat_turns (id, conversation_id, agent, kind, wakeup_id, status,"
                " due_at, owner, lease_until, attempts, created_at)"
                " VALUES (?, ?, 'helper', 'wakeup', ?, ?, ?, ?, ?, ?, ?)",
                (
                    f"t-{wakeup_id}",
                    conversation_id,
                    wakeup_id,
                    turn,
                    at,
                    "dead-process" if turn == "running" else None,
                    lease,
                    1 if turn in ("running", "done") else 0,
                    at,
                ),
            )


def _texts(store: Store, conversation_id: str, role: str) -> list[str]:
    with store.unit(write=False) as u:
        return [m.content for m in u.messages.history(conversation_id, user=USER) if m.role == role]


def test_every_pending_wakeup_resumes_once(old_store: Store) -> None:
    store = old_store
    conversation = _conversation(store)
    with store.unit() as u:
        posted = u.messages.append_message(
            conversation,
            content="The answer to w-crashed came.",
            role="system",
            author="agent:helper",
        )
    _wakeup(store, conversation, "w-queued", "scheduled", turn="queued")
    _wakeup(store, conversation, "w-crashed", "running", turn="running", message_id=posted.id)
    _wakeup(store, conversation, "w-no-turn", "scheduled", turn=None)
    _wakeup(store, conversation, "w-done", "done", turn="done")
    _wakeup(store, conversation, "w-absorbed", "absorbed", turn="queued")
    _wakeup(store, conversation, "w-old-done", "done", turn=None)

    assert store.migrate() == migrations.migrations_for("sqlite")[-1].version > BEFORE

    helper = AgentSpec(name="helper", instructions="You help.", model=ScriptedModel(HELPER_SCRIPT))
    with ChatService(store, [helper], poll_interval=None) as service:
        statuses = {w.source: w.status for w in service.wakeups_of(conversation)}
        assert statuses == {
            "confirmation:w-queued": "queued",
            "confirmation:w-crashed": "running",
            "confirmation:w-no-turn": "queued",
            "confirmation:w-done": "done",
            "confirmation:w-absorbed": "absorbed",
            "confirmation:w-old-done": "done",
        }
        assert service.run_due() == 3
        assert service.run_due() == 0
        after = {w.source: w.status for w in service.wakeups_of(conversation)}
    assert after == {
        **statuses,
        **dict.fromkeys(
            ("confirmation:w-queued", "confirmation:w-crashed", "confirmation:w-no-turn"), "done"
        ),
    }
    system = _texts(store, conversation, "system")
    assert sorted(system) == sorted(
        f"The answer to {w} came." for w in ("w-crashed", "w-queued", "w-no-turn")
    )
    assert len(_texts(store, conversation, "assistant")) == 3  # one reply each


@pytest.mark.parametrize(
    ("data", "check"),
    [("not json", "wakeup data is JSON"), ("[1, 2]", "wakeup data is an object")],
)
def test_a_wakeup_that_cannot_be_migrated_refuses_the_migration(
    old_store: Store, data: str, check: str
) -> None:
    conversation = _conversation(old_store)
    _wakeup(old_store, conversation, "w-good", "scheduled", turn="queued")
    _wakeup(old_store, conversation, "w-bad", "scheduled", turn="queued", data=data)
    with pytest.raises(MigrationError) as refused:
        old_store.migrate()
    assert refused.value.check == check and "w-bad" in refused.value.detail
    with old_store.db.transaction(write=False) as tx:
        assert migrations.schema_version(tx) == BEFORE
        assert migrations.table_exists(tx, "agent_wakeups")

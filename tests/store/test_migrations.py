"""Migrations: the legacy upgrade, agreement with current.sql, idempotence, refusals."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from pawflow import FakeClock, MigrationError, open_store
from pawflow.store.engine import migrations, postgres
from pawflow.store.engine.database import sql
from pawflow.store.engine.sqlite import SqliteDatabase
from pawflow.testing import POSTGRES_ADMIN_URL, throwaway_postgres
from tests.conftest import require_postgres

FIXTURE = Path(__file__).parent.parent / "fixtures" / "legacy_confirmations.db"


@pytest.fixture
def legacy(tmp_path: Path) -> Path:
    copy = tmp_path / "legacy.db"
    shutil.copy(FIXTURE, copy)
    return copy


def dump(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def test_legacy_database_upgrades_with_every_row_and_signal(legacy: Path) -> None:
    before = sqlite3.connect(legacy)
    legacy_rows = before.execute("SELECT id, status FROM confirmations ORDER BY id").fetchall()
    before.close()

    # Before the legacy rows' 30-day deadlines, so the pending ones are still answerable.
    clock = FakeClock(datetime(2025, 10, 12, tzinfo=UTC))
    with open_store(f"sqlite:///{legacy}", clock=clock) as store:
        rows = {}
        for owner in ("alice", "bob", "carol"):
            for record in store.list_interactions(user=owner):
                rows[record.id] = record
        assert sorted((i, r.status) for i, r in rows.items()) == legacy_rows
        assert all(r.contract_version == 1 for r in rows.values())
        assert all(r.signal_id == f"confirmation:{i}" for i, r in rows.items())
        assert rows["c-003"].kind == "multi" and rows["c-003"].answer == ["eu", "ap"]
        assert rows["c-002"].options == [
            {"value": "staging", "label": "staging"},
            {"value": "production", "label": "production"},
        ]
        assert rows["c-002"].response_schema["enum"] == ["staging", "production"]
        fired = store.get_signal("confirmation:c-002")
        assert fired is not None and fired.value == {"status": "answered", "answer": "staging"}
        assert store.get_signal("confirmation:c-001") is None

        # A pending legacy request is answerable, and resumes a waiter on its old signal.
        got: list[Any] = []
        store.register_handler("test", lambda delivery: got.append(delivery.continuation.value))
        store.park("test:legacy", signal_id="confirmation:c-001")
        store.respond_interaction("c-001", "yes", user="alice")
        assert got == [{"status": "answered", "answer": True}]

    # The legacy table stays (migrations are additive).
    conn = sqlite3.connect(legacy)
    assert conn.execute("SELECT count(*) FROM confirmations").fetchone()[0] == len(legacy_rows)
    conn.close()


def test_rerunning_migrations_is_a_no_op(legacy: Path) -> None:
    with open_store(f"sqlite:///{legacy}") as store:
        version = store.migrate()
    first = dump(legacy)
    with open_store(f"sqlite:///{legacy}") as store:
        assert store.migrate() == version
    assert dump(legacy) == first


@pytest.mark.parametrize(
    ("corruption", "check"),
    [
        ("UPDATE confirmations SET mode = NULL WHERE id = 'c-006'", "pending rows have a kind"),
        ("UPDATE confirmations SET mode = 'essay' WHERE id = 'c-001'", "pending rows have a kind"),
        (
            "UPDATE confirmations SET signal_id = NULL WHERE id = 'c-001'",
            "pending rows have a signal",
        ),
    ],
)
def test_failed_check_leaves_the_database_as_it_was(
    legacy: Path, corruption: str, check: str
) -> None:
    conn = sqlite3.connect(legacy)
    conn.execute(corruption)
    conn.commit()
    conn.close()
    before = dump(legacy)
    with pytest.raises(MigrationError) as caught:
        open_store(f"sqlite:///{legacy}")
    assert caught.value.check == check
    assert check in str(caught.value)
    assert dump(legacy) == before


def test_row_count_check_refuses_a_lossy_copy(
    legacy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_copy = migrations._copy_confirmation

    def lossy(tx: Any, row: dict[str, Any]) -> None:
        if row["id"] != "c-004":
            real_copy(tx, row)

    monkeypatch.setattr(migrations, "_copy_confirmation", lossy)
    before = dump(legacy)
    with pytest.raises(MigrationError) as caught:
        open_store(f"sqlite:///{legacy}")
    assert caught.value.check == "row count"
    assert dump(legacy) == before


def test_foreign_key_check_refuses_dangling_rows(
    legacy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_copy = migrations._copy_confirmation

    def dangling(tx: Any, row: dict[str, Any]) -> None:
        real_copy(tx, row)
        if row["id"] == "c-005":
            sql(tx).execute("UPDATE interactions SET conversation_id = 'gone' WHERE id = 'c-005'")

    monkeypatch.setattr(migrations, "_copy_confirmation", dangling)
    before = dump(legacy)
    with pytest.raises(MigrationError) as caught:
        open_store(f"sqlite:///{legacy}")
    assert caught.value.check == "foreign keys"
    assert dump(legacy) == before


# --- a database built by all migrations equals one built from current.sql ----------------


def sqlite_shape(path: Path) -> dict[str, Any]:
    conn = sqlite3.connect(path)
    try:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
                " AND name NOT IN ('pawflow_schema', 'sqlite_sequence') ORDER BY name"
            )
        ]
        shape: dict[str, Any] = {}
        for table in tables:
            indexes = {}
            for index in conn.execute(f"PRAGMA index_list('{table}')").fetchall():
                sql = conn.execute(
                    "SELECT sql FROM sqlite_master WHERE name = ?", (index[1],)
                ).fetchone()[0]
                columns = [c[2] for c in conn.execute(f"PRAGMA index_info('{index[1]}')")]
                indexes[index[1] if sql else f"auto:{columns}"] = (
                    columns,
                    index[2],
                    " ".join(sql.split()) if sql else None,
                )
            shape[table] = {
                "columns": conn.execute(f"PRAGMA table_info('{table}')").fetchall(),
                "foreign_keys": sorted(conn.execute(f"PRAGMA foreign_key_list('{table}')")),
                "indexes": indexes,
            }
        return shape
    finally:
        conn.close()


def test_sqlite_migrations_match_current_schema(tmp_path: Path) -> None:
    migrated = tmp_path / "migrated.db"
    with open_store(f"sqlite:///{migrated}"):
        pass
    declared = tmp_path / "declared.db"
    db = SqliteDatabase(str(declared))
    with db.transaction() as tx:
        for statement in migrations.statements(migrations.current_schema("sqlite")):
            sql(tx).execute(statement)
    db.close()
    assert sqlite_shape(migrated) == sqlite_shape(declared)


@pytest.fixture
def two_postgres() -> Iterator[tuple[str, str]]:
    require_postgres()
    with throwaway_postgres() as first, throwaway_postgres() as second:
        yield first, second


def postgres_shape(url: str) -> dict[str, Any]:
    with psycopg.connect(url) as conn:
        columns = conn.execute(
            "SELECT table_name, column_name, data_type, is_nullable, column_default, is_identity"
            " FROM information_schema.columns WHERE table_schema = 'public'"
            " AND table_name <> 'pawflow_schema' ORDER BY table_name, column_name"
        ).fetchall()
        indexes = conn.execute(
            "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'"
            " AND tablename <> 'pawflow_schema' ORDER BY indexname"
        ).fetchall()
        constraints = conn.execute(
            "SELECT conrelid::regclass::text, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2"
        ).fetchall()
        options = conn.execute(
            "SELECT relname::text, reloptions FROM pg_class"
            " WHERE relnamespace = 'public'::regnamespace AND reloptions IS NOT NULL"
            " ORDER BY 1"
        ).fetchall()
    return {"columns": columns, "indexes": indexes, "constraints": constraints, "options": options}


@pytest.mark.postgres
def test_postgres_migrations_match_current_schema(two_postgres: tuple[str, str]) -> None:
    migrated, declared = two_postgres
    open_store(migrated).close()
    with psycopg.connect(declared) as conn:
        for statement in migrations.statements(migrations.current_schema("postgres")):
            conn.execute(statement)
    assert postgres_shape(migrated) == postgres_shape(declared)


@pytest.mark.postgres
def test_postgres_rerun_is_a_no_op(two_postgres: tuple[str, str]) -> None:
    url, _ = two_postgres
    with open_store(url) as store:
        version = store.migrate()
        assert store.migrate() == version == len(migrations.migrations_for("postgres"))


@pytest.mark.postgres
def test_a_migrated_throwaway_database_is_a_copy_at_the_newest_schema(
    two_postgres: tuple[str, str],
) -> None:
    """Tests copy their PostgreSQL databases from one template the migrations made: the
    same schema as migrating an empty database, made once however many ask at once."""
    migrated, _ = two_postgres
    open_store(migrated).close()
    with ThreadPoolExecutor(4) as pool:
        names = set(pool.map(lambda _: postgres.migrated_template(POSTGRES_ADMIN_URL), range(4)))
    assert len(names) == 1
    with throwaway_postgres(migrated=True) as copied:
        with psycopg.connect(copied) as conn:
            row = conn.execute("SELECT version FROM pawflow_schema").fetchone()
        assert row == (len(migrations.migrations_for("postgres")),)
        assert postgres_shape(copied) == postgres_shape(migrated)
    with psycopg.connect(POSTGRES_ADMIN_URL) as conn:
        found = conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE 'pawflow\\_template\\_%'"
        ).fetchall()
    assert (names.pop(),) in found

"""Versioned, in-place, additive schema migrations.

Each backend keeps an append-only numbered list of SQL files in ``sql/<backend>/``
(``0001_initial.sql``, ``0002_….sql``: position = version) and ``current.sql``, the schema
those files add up to. Every step runs in one transaction together with its version bump.

A database made by the earlier confirmations-only schema (a ``confirmations`` table and its
``durable_signals``) is upgraded by the first step: its rows are copied into
``interactions`` as contract version 1, keeping their ``confirmation:<id>`` signals, and
verified before the version marker is written. A failed check rolls everything back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from pawflow.errors import Conflict, InvalidInput, MigrationError, StoreError
from pawflow.interactions import CONFIRMATION_KINDS, normalize_options, parse_kind, prepare_request
from pawflow.store.engine.database import Database, Tx, sql


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def _sql_dir(dialect: str) -> Any:
    return resources.files("pawflow.store.engine").joinpath("sql", dialect)


def migrations_for(dialect: str) -> list[Migration]:
    found: list[Migration] = []
    for entry in sorted(_sql_dir(dialect).iterdir(), key=lambda e: e.name):
        stem = entry.name.removesuffix(".sql")
        if not entry.name.endswith(".sql") or not stem[:4].isdigit():
            continue
        found.append(Migration(int(stem[:4]), stem[5:], entry.read_text("utf-8")))
    for position, migration in enumerate(found, start=1):
        if migration.version != position:
            raise StoreError(
                f"migration {migration.name} is numbered {migration.version}, not {position}"
            )
    return found


def current_schema(dialect: str) -> str:
    return str(_sql_dir(dialect).joinpath("current.sql").read_text("utf-8"))


def statements(sql: str) -> list[str]:
    lines = [line for line in sql.splitlines() if not line.lstrip().startswith("--")]
    return [part.strip() for part in "\n".join(lines).split(";") if part.strip()]


def table_exists(tx: Tx, name: str) -> bool:
    if tx.dialect == "sqlite":
        query = "SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = ?"
    else:
        query = (
            "SELECT 1 AS found FROM pg_tables WHERE schemaname = current_schema() AND tablename = ?"
        )
    return sql(tx).one(query, (name,)) is not None


def schema_version(tx: Tx) -> int:
    if not table_exists(tx, "pawflow_schema"):
        return 0
    row = sql(tx).one("SELECT version FROM pawflow_schema")
    return 0 if row is None else int(row["version"])


def migrate(db: Database) -> int:
    """Bring the database to the newest version; returns it. Re-running is a no-op."""
    steps = migrations_for(db.dialect)
    with db.transaction(write=False) as tx:
        version = schema_version(tx)
    if version >= steps[-1].version:
        return version  # up to date: one read, not a locked transaction per step
    for migration in steps:
        with db.transaction() as tx:
            tx.lock_key("pawflow:migrate")
            version = schema_version(tx)
            if migration.version <= version:
                continue
            if version == 0:
                sql(tx).execute("CREATE TABLE pawflow_schema (version INTEGER NOT NULL)")
                sql(tx).execute("INSERT INTO pawflow_schema (version) VALUES (0)")
            if tx.dialect == "sqlite":
                # Checked explicitly before the marker, so a violation names its check.
                sql(tx).execute("PRAGMA defer_foreign_keys = ON")
            for statement in statements(migration.sql):
                sql(tx).execute(statement)
            data_step = DATA_STEPS.get(migration.version)
            if data_step is not None:
                data_step(tx)
            sql(tx).execute("UPDATE pawflow_schema SET version = ?", (migration.version,))
            version = migration.version
    return version


# --- the upgrade from the confirmations-only schema -------------------------------------


def _millis(seconds: Any) -> int | None:
    return None if seconds is None else int(float(seconds) * 1000)


def _check(name: str, failed: bool, detail: str) -> None:
    if failed:
        raise MigrationError(name, detail)


def _copy_confirmation(tx: Tx, row: dict[str, Any]) -> None:
    kind = parse_kind(row["mode"])
    raw_options = json.loads(row["options"]) if row["options"] else None
    options = normalize_options(raw_options) if raw_options else None
    options, schema = prepare_request(kind, options, None)
    requester = (
        json.loads(row["requester"]) if row["requester"] else {"type": "api", "name": "legacy"}
    )
    created = _millis(row["created_at"])
    for user in {row["owner"], row["answered_by"]} - {None}:
        sql(tx).execute(
            "INSERT INTO users (id, created_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING",
            (user, created),
        )
    sql(tx).execute(
        "INSERT INTO conversations (id, owner, title, created_at) VALUES (?, ?, '', ?)"
        " ON CONFLICT (id) DO NOTHING",
        (row["conversation_id"], row["owner"], created),
    )
    sql(tx).execute(
        "INSERT INTO interactions (id, contract_version, kind, title, message, options,"
        " response_schema, owner, conversation_id, requester, signal_id, status, answer,"
        " answered_by, answered_at, created_at, expires_at)"
        " VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            row["id"],
            kind.value,
            row["title"],
            row["message"],
            json.dumps([o.model_dump() for o in options]) if options else None,
            json.dumps(schema),
            row["owner"],
            row["conversation_id"],
            json.dumps(requester),
            row["signal_id"],
            row["status"],
            row["answer"],
            row["answered_by"],
            _millis(row["answered_at"]),
            created,
            _millis(row["expires_at"]),
        ),
    )


def upgrade_confirmations(tx: Tx) -> None:
    if not table_exists(tx, "confirmations"):
        return
    family = sorted(kind.value for kind in CONFIRMATION_KINDS)
    marks = ", ".join("?" for _ in family)
    bad_kind = sql(tx).one(
        "SELECT count(*) AS n FROM confirmations WHERE status = 'pending'"
        f" AND (mode IS NULL OR mode NOT IN ({marks}))",
        family,
    )
    _check(
        "pending rows have a kind",
        bad_kind is not None and bad_kind["n"] > 0,
        f"{bad_kind and bad_kind['n']} pending row(s) without confirm/choice/multi",
    )
    bad_signal = sql(tx).one(
        "SELECT count(*) AS n FROM confirmations WHERE status = 'pending'"
        " AND (signal_id IS NULL OR signal_id <> 'confirmation:' || id)"
    )
    _check(
        "pending rows have a signal",
        bad_signal is not None and bad_signal["n"] > 0,
        f"{bad_signal and bad_signal['n']} pending row(s) without their confirmation:<id> signal",
    )

    rows = sql(tx).all("SELECT * FROM confirmations ORDER BY created_at, id")
    for row in rows:
        try:
            _copy_confirmation(tx, row)
        except (InvalidInput, Conflict) as exc:
            raise MigrationError("rows copy", f"confirmation {row['id']}: {exc}") from exc
    if table_exists(tx, "durable_signals"):
        sql(tx).execute(
            "INSERT INTO signals (signal_id, value, fired_at)"
            " SELECT signal_id, payload, CAST(created_at * 1000 AS BIGINT) FROM durable_signals"
        )

    copied = sql(tx).one(
        "SELECT count(*) AS n FROM interactions WHERE id IN (SELECT id FROM confirmations)"
    )
    _check(
        "row count",
        copied is None or copied["n"] != len(rows),
        f"{len(rows)} confirmation(s), {copied and copied['n']} interaction(s) copied",
    )
    orphans = sql(tx).one(
        "SELECT count(*) AS n FROM interactions i"
        " LEFT JOIN users u ON u.id = i.owner"
        " LEFT JOIN conversations c ON c.id = i.conversation_id"
        " WHERE u.id IS NULL OR c.id IS NULL"
    )
    dangling = orphans["n"] if orphans else 0
    if tx.dialect == "sqlite":
        dangling += len(sql(tx).all("PRAGMA foreign_key_check"))
    _check(
        "foreign keys", dangling > 0, f"{dangling} row(s) reference missing users or conversations"
    )


# --- agent wakeups become turns (0016) ----------------------------------------------------

_WAKEUP_STATUSES = {
    # the wakeup's status -> the status its turn ends up with once its own is not final
    "scheduled": None,
    "running": None,
    "done": "done",
    "absorbed": "done",
    "failed": "failed",
}


def _wakeup_payload(row: dict[str, Any]) -> str:
    where = f"wakeup {row['id']}"
    try:
        data = json.loads(row["data"])
    except (TypeError, ValueError) as exc:
        raise MigrationError("wakeup data is JSON", f"{where}: {exc}") from exc
    _check("wakeup data is an object", not isinstance(data, dict), where)
    _check("wakeup has a user", not row["user_id"], where)
    _check("wakeup has a text", row["text"] is None, where)
    _check(
        "wakeup status is known",
        row["status"] not in _WAKEUP_STATUSES,
        f"{where}: status {row['status']!r}",
    )
    return json.dumps({"user": row["user_id"], "text": row["text"], "data": data})


def wakeups_into_turns(tx: Tx) -> None:
    """Fold each ``agent_wakeups`` row into its turn (writing one where there is none),
    verify that every wakeup has exactly one turn with its source, then drop the table."""
    if not table_exists(tx, "agent_wakeups"):
        return
    rows = sql(tx).all("SELECT * FROM agent_wakeups ORDER BY created_at, id")
    for row in rows:
        payload = _wakeup_payload(row)
        final = _WAKEUP_STATUSES[row["status"]]
        turn = sql(tx).one("SELECT * FROM chat_turns WHERE wakeup_id = ?", (row["id"],))
        if turn is None:
            status = final or "queued"
            due_at = row["lease_until"] if row["status"] == "running" else row["due_at"]
            sql(tx).execute(
                "INSERT INTO chat_turns (id, conversation_id, agent, kind, message_id,"
                " wakeup_id, status, due_at, attempts, stage, last_error, created_at,"
                " finished_at, source, payload, tool_started_at)"
                " VALUES (?, ?, ?, 'wakeup', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    "w-" + row["id"],
                    row["conversation_id"],
                    row["agent"],
                    row["message_id"],
                    row["id"],
                    status,
                    due_at if due_at is not None else row["due_at"],
                    row["attempts"],
                    "absorbed" if row["status"] == "absorbed" else None,
                    row["last_error"],
                    row["created_at"],
                    row["finished_at"],
                    row["source"],
                    payload,
                    row["tool_started_at"],
                ),
            )
            continue
        where = f"wakeup {row['id']} and turn {turn['id']}"
        _check(
            "a wakeup's turn is of its conversation and agent",
            (turn["conversation_id"], turn["agent"]) != (row["conversation_id"], row["agent"])
            or turn["kind"] != "wakeup",
            where,
        )
        _check(
            "a wakeup's turn has no other message",
            turn["message_id"] is not None
            and row["message_id"] is not None
            and turn["message_id"] != row["message_id"],
            where,
        )
        # A turn still open whose wakeup is over ends as the wakeup did; a running turn
        # keeps its lease and fencing (owner, attempts) untouched.
        ends = final is not None and turn["status"] in ("queued", "running")
        sql(tx).execute(
            "UPDATE chat_turns SET source = ?, payload = ?, tool_started_at = ?,"
            " message_id = COALESCE(message_id, ?), status = ?,"
            " stage = CASE WHEN ? THEN ? ELSE stage END,"
            " lease_until = CASE WHEN ? THEN NULL ELSE lease_until END,"
            " last_error = COALESCE(last_error, ?),"
            " finished_at = COALESCE(finished_at, ?) WHERE id = ?",
            (
                row["source"],
                payload,
                row["tool_started_at"],
                row["message_id"],
                final if ends else turn["status"],
                ends and row["status"] == "absorbed",
                "absorbed",
                ends,
                row["last_error"],
                row["finished_at"],
                turn["id"],
            ),
        )
    moved = sql(tx).one(
        "SELECT count(*) AS n FROM agent_wakeups w JOIN chat_turns t"
        " ON t.source = w.source AND t.kind = 'wakeup' AND t.conversation_id = w.conversation_id"
    )
    _check(
        "every wakeup is a turn",
        moved is None or int(moved["n"]) != len(rows),
        f"{moved and moved['n']} of {len(rows)} wakeup(s) found as turns",
    )
    sql(tx).execute("DROP TABLE agent_wakeups")


DATA_STEPS: dict[int, Callable[[Tx], None]] = {
    1: upgrade_confirmations,
    16: wakeups_into_turns,
}

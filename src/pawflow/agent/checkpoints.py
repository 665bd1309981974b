"""Durable checkpoints of agent runs, keyed ``(run_id, step_id)``.

The loop writes one whenever a run halts (a question to the user, an approval, a limit, a
denial, a model failure). A checkpoint lives for a TTL (7 days by default) that is enforced
on every read, so an expired one is gone to readers even before the sweep removes it;
pinned ones never expire. Payloads are JSON objects, refused over the store's payload cap.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pawflow.clock import from_millis, to_millis
from pawflow.errors import InvalidInput, NotFound, PayloadTooLarge

if TYPE_CHECKING:
    from pawflow.store import Store
    from pawflow.store.database import Tx

DEFAULT_TTL = timedelta(days=7)
SWEEP_BATCH = 500


@dataclass(frozen=True)
class Checkpoint:
    run_id: str
    step_id: str
    session_id: str | None
    agent: str
    halt_reason: str
    payload: dict[str, Any]
    pinned: bool
    created_at: datetime
    expires_at: datetime

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Checkpoint:
        return cls(
            run_id=row["run_id"],
            step_id=row["step_id"],
            session_id=row["session_id"],
            agent=row["agent"],
            halt_reason=row["halt_reason"],
            payload=json.loads(bytes(row["payload"]).decode("utf-8")),
            pinned=bool(row["pinned"]),
            created_at=from_millis(row["created_at"]),
            expires_at=from_millis(row["expires_at"]),
        )


_LIVE = "(pinned = 1 OR expires_at > ?)"


class CheckpointStore:
    """Checkpoints in the store's ``checkpoints`` table."""

    def __init__(
        self, store: Store, *, ttl: timedelta = DEFAULT_TTL, payload_cap: int | None = None
    ) -> None:
        if ttl <= timedelta(0):
            raise InvalidInput("the checkpoint TTL must be positive")
        self.store = store
        self.ttl = ttl
        self.payload_cap = store.payload_cap if payload_cap is None else payload_cap

    def _now(self) -> int:
        return to_millis(self.store.now())

    def encode(self, payload: dict[str, Any]) -> bytes:
        if not isinstance(payload, dict):
            raise InvalidInput("a checkpoint payload must be a JSON object")
        try:
            encoded = json.dumps(payload, separators=(",", ":")).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"a checkpoint payload must be JSON: {exc}") from exc
        if len(encoded) > self.payload_cap:
            raise PayloadTooLarge(
                f"checkpoint of {len(encoded)} bytes exceeds the cap of {self.payload_cap} bytes"
            )
        return encoded

    def put(
        self,
        run_id: str,
        step_id: str,
        payload: dict[str, Any],
        *,
        agent: str,
        halt_reason: str,
        session_id: str | None = None,
        pinned: bool = False,
    ) -> Checkpoint:
        """Write (or overwrite) the checkpoint of one step."""
        if not run_id or not step_id:
            raise InvalidInput("run_id and step_id are required")
        encoded = self.encode(payload)
        now = self.store.now()
        with self.store.transaction() as tx:
            tx.execute(
                "INSERT INTO checkpoints (run_id, step_id, session_id, agent, halt_reason,"
                " payload, pinned, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (run_id, step_id) DO UPDATE SET session_id = excluded.session_id,"
                " agent = excluded.agent, halt_reason = excluded.halt_reason,"
                " payload = excluded.payload, pinned = excluded.pinned,"
                " created_at = excluded.created_at, expires_at = excluded.expires_at",
                (
                    run_id,
                    step_id,
                    session_id,
                    agent,
                    halt_reason,
                    encoded,
                    int(pinned),
                    to_millis(now),
                    to_millis(now + self.ttl),
                ),
            )
            found = _get(tx, run_id, step_id, to_millis(now))
        assert found is not None
        return found

    def get(self, run_id: str, step_id: str) -> Checkpoint | None:
        """The checkpoint, or None when there is none or it has expired."""
        with self.store.transaction(write=False) as tx:
            return _get(tx, run_id, step_id, self._now())

    def latest(self, run_id: str) -> Checkpoint | None:
        with self.store.transaction(write=False) as tx:
            row = tx.one(
                f"SELECT * FROM checkpoints WHERE run_id = ? AND {_LIVE}"
                " ORDER BY created_at DESC, step_id DESC LIMIT 1",
                (run_id, self._now()),
            )
        return None if row is None else Checkpoint.from_row(row)

    def of_run(self, run_id: str) -> list[Checkpoint]:
        """The run's live checkpoints, step by step."""
        with self.store.transaction(write=False) as tx:
            rows = tx.all(
                f"SELECT * FROM checkpoints WHERE run_id = ? AND {_LIVE} ORDER BY step_id",
                (run_id, self._now()),
            )
        return [Checkpoint.from_row(row) for row in rows]

    def by_session(self, session_id: str, *, limit: int = 100) -> list[Checkpoint]:
        """The session's live checkpoints, newest first."""
        with self.store.transaction(write=False) as tx:
            rows = tx.all(
                f"SELECT * FROM checkpoints WHERE session_id = ? AND {_LIVE}"
                " ORDER BY created_at DESC, run_id, step_id DESC LIMIT ?",
                (session_id, self._now(), limit),
            )
        return [Checkpoint.from_row(row) for row in rows]

    def pin(self, run_id: str, step_id: str, pinned: bool = True) -> Checkpoint:
        """Keep a checkpoint past its TTL (or let it expire again, counted from now)."""
        now = self.store.now()
        with self.store.transaction() as tx:
            if _get(tx, run_id, step_id, to_millis(now)) is None:
                raise NotFound("checkpoint")
            tx.execute(
                "UPDATE checkpoints SET pinned = ?, expires_at = ?"
                " WHERE run_id = ? AND step_id = ?",
                (
                    int(pinned),
                    to_millis(now + self.ttl),
                    run_id,
                    step_id,
                ),
            )
            found = _get(tx, run_id, step_id, to_millis(now))
        assert found is not None
        return found

    def delete(self, run_id: str, step_id: str) -> bool:
        with self.store.transaction() as tx:
            return bool(
                tx.execute(
                    "DELETE FROM checkpoints WHERE run_id = ? AND step_id = ?", (run_id, step_id)
                )
            )

    def sweep_expired(self) -> int:
        """Remove expired, unpinned checkpoints (in batches); returns how many."""
        removed = 0
        while True:
            with self.store.transaction() as tx:
                rows = tx.all(
                    "SELECT run_id, step_id FROM checkpoints WHERE pinned = 0 AND expires_at <= ?"
                    " ORDER BY expires_at LIMIT ?" + tx.skip_locked,
                    (self._now(), SWEEP_BATCH),
                )
                for row in rows:
                    tx.execute(
                        "DELETE FROM checkpoints WHERE run_id = ? AND step_id = ?",
                        (row["run_id"], row["step_id"]),
                    )
            removed += len(rows)
            if len(rows) < SWEEP_BATCH:
                return removed

    def sweep_step(self, store: Store) -> dict[str, int]:
        """For ``Store.add_sweep_step``."""
        return {"checkpoints_expired": self.sweep_expired()}


def _get(tx: Tx, run_id: str, step_id: str, now: int) -> Checkpoint | None:
    row = tx.one(
        f"SELECT * FROM checkpoints WHERE run_id = ? AND step_id = ? AND {_LIVE}",
        (run_id, step_id, now),
    )
    return None if row is None else Checkpoint.from_row(row)

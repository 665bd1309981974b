"""Durable checkpoints of agent runs, keyed ``(run_id, step_id)``.

The loop writes one whenever a run halts (a question to the user, an approval, a limit, a
denial, a model failure). A checkpoint lives for a TTL (7 days by default) that is enforced
on every read, so an expired one is gone to readers even before the sweep removes it;
pinned ones never expire. Payloads are JSON objects, refused over the store's payload cap.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from pawflow.errors import InvalidInput, NotFound, PayloadTooLarge
from pawflow.store import SWEEP_BATCH, Checkpoint

if TYPE_CHECKING:
    from pawflow.store import Store

DEFAULT_TTL = timedelta(days=7)

__all__ = ["DEFAULT_TTL", "Checkpoint", "CheckpointStore"]


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
        with self.store.unit() as u:
            return u.checkpoints.put(
                run_id,
                step_id,
                encoded,
                agent=agent,
                halt_reason=halt_reason,
                session_id=session_id,
                pinned=pinned,
                ttl=self.ttl,
            )

    def get(self, run_id: str, step_id: str) -> Checkpoint | None:
        """The checkpoint, or None when there is none or it has expired."""
        with self.store.unit(write=False) as u:
            return u.checkpoints.get(run_id, step_id)

    def latest(self, run_id: str) -> Checkpoint | None:
        with self.store.unit(write=False) as u:
            return u.checkpoints.latest(run_id)

    def of_run(self, run_id: str) -> list[Checkpoint]:
        """The run's live checkpoints, step by step."""
        with self.store.unit(write=False) as u:
            return u.checkpoints.of_run(run_id)

    def by_session(self, session_id: str, *, limit: int = 100) -> list[Checkpoint]:
        """The session's live checkpoints, newest first."""
        with self.store.unit(write=False) as u:
            return u.checkpoints.by_session(session_id, limit)

    def pin(self, run_id: str, step_id: str, pinned: bool = True) -> Checkpoint:
        """Keep a checkpoint past its TTL (or let it expire again, counted from now)."""
        with self.store.unit() as u:
            found = u.checkpoints.pin(run_id, step_id, pinned, self.ttl)
        if found is None:
            raise NotFound("checkpoint")
        return found

    def delete(self, run_id: str, step_id: str) -> bool:
        with self.store.unit() as u:
            return u.checkpoints.delete(run_id, step_id)

    def sweep_expired(self) -> int:
        """Remove expired, unpinned checkpoints (in batches); returns how many."""
        removed = 0
        while True:
            with self.store.unit() as u:
                done = u.checkpoints.remove_expired(SWEEP_BATCH)
            removed += done
            if done < SWEEP_BATCH:
                return removed

    def sweep_step(self, store: Store) -> dict[str, int]:
        """For ``Store.add_sweep_step``."""
        return {"checkpoints_expired": self.sweep_expired()}

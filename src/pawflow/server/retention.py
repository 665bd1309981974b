"""The retention sweep: what is over is forgotten once it is older than the retention.

- A finished A2A task (completed, failed, canceled, rejected) goes with its push configs
  once its last update is older than the retention.
- An A2A push and a webhook delivery go once sent or given up and written longer ago than
  the retention (the webhook's and the task's logs keep that much).
- A request's notifications (mail, Slack, Apprise, Web Push, its webhook row) go once the
  request was settled longer ago than the retention, each of them done: sent, failed or
  skipped, and its copy updated (or given up on). While a request is pending, or settled
  more recently, its details show every notification; its audit trail keeps "delivered"
  for good. A web push has no row of its own besides its notification: a device's
  subscription stays until the device or a push service ends it.

Nothing still queued, due to be sent again or to have its copy updated is ever forgotten.
Each kind goes in batches of :data:`BATCH` rows, each batch its own transaction, oldest
first along an index, so a pass over a million old rows holds no long transaction, and a
pass with nothing to forget reads nothing it keeps: a notification is found by when its
request settled, so those of requests still pending (or settled lately) are never read.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from pawflow.store import Store, SweepStep, Unit

BATCH = 500

Prune = Callable[[Unit, datetime, int], int]
KINDS: tuple[tuple[str, Prune], ...] = (
    ("a2a_tasks_pruned", lambda u, before, n: u.a2a_tasks.prune_finished(before, n)),
    ("a2a_pushes_pruned", lambda u, before, n: u.a2a_push.prune_settled(before, n)),
    ("notifications_pruned", lambda u, before, n: u.outbox.prune_settled(before, n)),
    ("webhook_deliveries_pruned", lambda u, before, n: u.webhooks.prune_settled(before, n)),
)
"""Each kind the sweep forgets: its count in the sweep's report, and one batch of it."""


def settled_step(retention: timedelta, *, batch: int = BATCH) -> SweepStep:
    """A sweep step forgetting what is over and older than ``retention`` (see above)."""

    def prune(store: Store) -> dict[str, int]:
        before = store.now() - retention
        report: dict[str, int] = {}
        for name, one_batch in KINDS:
            removed = 0
            while True:
                with store.unit() as u:
                    done = one_batch(u, before, batch)
                removed += done
                if done < batch:
                    break
            report[name] = removed
        return report

    return prune

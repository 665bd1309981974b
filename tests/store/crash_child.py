"""A worker that is killed with SIGKILL at a random statement: ``crash_child.py URL SEED``.

It runs ask → park → answer (or park → notify) cycles; its delivery handler records each
delivery in the same transaction that consumes the continuation. After KILL_AFTER statements
(drawn from SEED) it kills itself mid-flight, inside or between transactions.
"""

from __future__ import annotations

import os
import random
import signal
import sys
from typing import Any

from pawflow import Delivery, Question, open_store
from pawflow.store.engine.database import Sql, sql

CREATE_LOG = (
    "CREATE TABLE IF NOT EXISTS delivered_log (continuation_id TEXT NOT NULL, signal_id TEXT)"
)


def record(delivery: Delivery) -> None:
    sql(delivery.tx).execute(
        "INSERT INTO delivered_log (continuation_id, signal_id) VALUES (?, ?)",
        (delivery.continuation.id, delivery.continuation.signal_id),
    )


def arm(kill_after: int) -> None:
    count = {"n": 0}
    originals: dict[str, Any] = {name: getattr(Sql, name) for name in ("execute", "one", "all")}

    def counting(name: str) -> Any:
        def wrapper(self: Sql, *args: Any, **kwargs: Any) -> Any:
            count["n"] += 1
            if count["n"] >= kill_after:
                os.kill(os.getpid(), signal.SIGKILL)
            return originals[name](self, *args, **kwargs)

        return wrapper

    for name in originals:
        setattr(Sql, name, counting(name))


def main() -> None:
    url, seed = sys.argv[1], int(sys.argv[2])
    rng = random.Random(seed)
    with open_store(url) as store:
        with store.transaction() as tx:
            sql(tx).execute(CREATE_LOG)
        conversation = store.create_conversation("alice").id
        store.register_handler("log", record)  # recovers what an earlier run left resolved
        arm(rng.randint(5, 400))
        for n in range(10_000):
            if n % 3 == 2:
                store.park(f"log:{seed}-{n}", signal_id=f"plain:{seed}:{n}")
                store.notify_signal(f"plain:{seed}:{n}", n)
            else:
                asked = store.ask(Question("alice", conversation, "confirm", f"#{n}")).interaction
                store.park(f"log:{seed}-{n}", signal_id=asked.signal_id)
                store.respond_interaction(asked.id, n % 2 == 0, user="alice")


if __name__ == "__main__":
    main()

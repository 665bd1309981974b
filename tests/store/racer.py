"""A separate process that races for one request: ``python racer.py URL ID ROLE GO_FILE``.

Prints ``won`` or ``lost``. It waits for GO_FILE to appear so every racer starts together.
"""

from __future__ import annotations

import os
import sys
from datetime import timedelta

from pawflow import FakeClock, NotPending, SystemClock, open_store
from pawflow.testing import eventually


def main() -> None:
    url, request_id, role, go_file = sys.argv[1:5]
    clock = FakeClock(SystemClock().now() + timedelta(days=2)) if role == "expire" else None
    with open_store(url, clock=clock, migrate=False) as store:
        eventually(lambda: os.path.exists(go_file), timeout=60, interval=0.001)
        try:
            if role == "answer":
                store.respond_interaction(request_id, True, user="alice")
                won = True
            elif role == "cancel":
                store.cancel_interaction(request_id, user="alice")
                won = True
            else:
                won = store.sweep()["expired"] == 1
        except NotPending:
            won = False
    print("won" if won else "lost", flush=True)


if __name__ == "__main__":
    main()

"""Another process that fires a signal: ``python signaller.py URL SIGNAL_ID``.

Prints how many parked continuations it resolved.
"""

from __future__ import annotations

import sys

from pawflow import open_store


def main() -> None:
    url, signal_id = sys.argv[1:3]
    with open_store(url, migrate=False) as store:
        print(store.notify_signal(signal_id, {"from": "another process"}))


if __name__ == "__main__":
    main()

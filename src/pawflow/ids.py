"""Record ids: unguessable, URL-safe, and safe on a command line. Every id PawFlow makes
(records, deployments, agent runs, FlowFiles) comes from :func:`new_id`."""

from __future__ import annotations

import secrets

DEFAULT_BYTES = 16


def new_id(nbytes: int = DEFAULT_BYTES) -> str:
    """``nbytes`` of randomness, URL-safe (22 characters for the default 128 bits).

    It never starts with ``-`` or ``_``: ``pawflow flow stop -p6H…`` would read an option.
    """
    while True:
        candidate = secrets.token_urlsafe(nbytes)
        if candidate[0] not in "-_":
            return candidate

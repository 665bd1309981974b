"""Record ids: unguessable (128 bits of randomness), URL-safe, and safe on a command line."""

from __future__ import annotations

import secrets


def new_id() -> str:
    """22 URL-safe characters that never start with ``-`` (a shell would read an option)."""
    while True:
        candidate = secrets.token_urlsafe(16)
        if candidate[0] not in "-_":
            return candidate

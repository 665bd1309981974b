"""Record ids: unguessable, URL-safe, and safe on a command line. Every id PawFlow makes
(records, deployments, agent runs, FlowFiles) comes from :func:`new_id`, or from
:func:`new_ordered_id` where ids must also sort in the order they were made."""

from __future__ import annotations

import secrets
import threading
import time

DEFAULT_BYTES = 16


def new_id(nbytes: int = DEFAULT_BYTES) -> str:
    """``nbytes`` of randomness, URL-safe (22 characters for the default 128 bits).

    It never starts with ``-`` or ``_``: ``pawflow flow stop -p6H…`` would read an option.
    """
    while True:
        candidate = secrets.token_urlsafe(nbytes)
        if candidate[0] not in "-_":
            return candidate


# Digits, then capitals, then small letters: ascending in ASCII, so the text of two ids
# compares as their numbers do (what a browser's string comparison sees).
_ORDERED = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_STAMP_CHARS = 9  # microseconds since 1970 for the next four centuries
_RANDOM_CHARS = 13
_RANDOM_BITS = 77  # one draw of the system's randomness: 62**13 > 2**77, so 13 digits hold it
_last_stamp = 0
_stamp_lock = threading.Lock()


def new_ordered_id() -> str:
    """22 characters that sort by creation (within one process even in one microsecond,
    across processes by the microsecond), the rest unguessable, never starting with ``-``."""
    global _last_stamp
    with _stamp_lock:
        stamp = _last_stamp = max(time.time_ns() // 1000, _last_stamp + 1)
    return _base62(stamp, _STAMP_CHARS) + _base62(secrets.randbits(_RANDOM_BITS), _RANDOM_CHARS)


def _base62(number: int, width: int) -> str:
    """``number`` in ``width`` digits of ``_ORDERED``, most significant first."""
    digits = []
    for _ in range(width):
        number, digit = divmod(number, 62)
        digits.append(_ORDERED[digit])
    return "".join(reversed(digits))

"""Where a delivery goes, as the outbox's dispatcher counts what is in flight: one attempt at
a time per destination, so a slow receiver holds back only its own deliveries."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any
from urllib.parse import urlsplit


def destination(channel: str, address: str, recipient: str = "") -> str:
    """Where a delivery goes, as the dispatcher counts what is in flight: ``host:port`` of a
    URL, the channel for one that sends through one relay (mail, Slack), or for a push its
    recipient (whose devices are pushed to one after another, at any push services)."""
    if channel == "push":
        return f"push to {recipient}"
    if "://" not in address:
        return channel
    try:
        parts = urlsplit(address)
        port = parts.port
    except ValueError:
        return f"{channel}:?"
    host = (parts.hostname or "").lower()
    if not host:
        return f"{channel}:{parts.scheme.lower()}"
    return f"{host}:{port}" if port else f"{host}:{parts.scheme.lower()}"


Busy = Collection[str]  # destinations with a delivery in flight: claims pass over them


def pick(
    rows: list[dict[str, Any]], where: Callable[[dict[str, Any]], str], limit: int, busy: Busy
) -> list[dict[str, Any]]:
    """The first row of each destination not ``busy``, up to ``limit``."""
    chosen: dict[str, dict[str, Any]] = {}
    for row in rows:
        key = where(row)
        if key not in busy and key not in chosen:
            chosen[key] = row
            if len(chosen) == limit:
                break
    return list(chosen.values())

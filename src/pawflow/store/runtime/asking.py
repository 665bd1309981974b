"""Asking and waiting: the continuation a question's requester parks on its answer.

A question asked again under its idempotency key finds the first request; the continuation
parked for it then is found too, so a retried ask never leaves a second one waiting.
"""

from __future__ import annotations

from datetime import datetime

from pawflow.records import Interaction
from pawflow.store.engine.database import Tx
from pawflow.store.runtime import continuations as cont
from pawflow.store.runtime.continuations import Continuation
from pawflow.store.runtime.interactions import Park, Question


def park_for(
    tx: Tx, question: Question, interaction: Interaction, park: Park, now: datetime, cap: int
) -> Continuation:
    """Park ``park`` on the answer's signal of ``interaction`` (just published, or found
    again by the question's idempotency key: then the continuation parked for it before, if
    it is still kept, and a new one parked on a signal that may have fired)."""
    repeat = question.idempotency_key is not None
    if repeat:
        found = cont.parked_for(tx, interaction.signal_id, park.target)
        if found is not None:
            return found
    payload = park.payload(interaction) if callable(park.payload) else park.payload
    return cont.park(
        tx,
        park.target,
        now=now,
        payload=payload,
        payload_cap=cap,
        signal_id=interaction.signal_id,
        fresh_signal=not repeat,
    )

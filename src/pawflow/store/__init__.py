"""The store behind ``open_store(url)``: SQLite (embedded default) or PostgreSQL."""

from __future__ import annotations

from pawflow.store.continuations import Continuation, SignalValue
from pawflow.store.database import Tx as Transaction
from pawflow.store.delivery import Delivery, DeliveryHandler
from pawflow.store.interactions import Asked, Park, Question
from pawflow.store.opening import data_dir, default_url, open_store
from pawflow.store.reports import SweepReport
from pawflow.store.store import Store
from pawflow.store.sweeper import Sweeper

__all__ = [
    "Asked",
    "Continuation",
    "Delivery",
    "DeliveryHandler",
    "Park",
    "Question",
    "SignalValue",
    "Store",
    "SweepReport",
    "Sweeper",
    "Transaction",
    "data_dir",
    "default_url",
    "open_store",
]

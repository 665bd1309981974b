"""The store behind ``open_store(url)``: SQLite (embedded default) or PostgreSQL.

Packages above the store import only the names below: the :class:`Store` (its methods compose
several rules: ask, respond, cancel, post a message, deliver, sweep), ``Store.unit()`` for
everything else (the tables bound to one transaction, :mod:`pawflow.store.unit`), and the
records and terms those hand out. The modules of its tables are private to it: they sit in
its wings, each importing only those under it (``engine``, ``ledger``, ``people`` and
``reach``, ``governance``, ``runtime``; docs/architecture.md, "The wings of the store").
"""

from __future__ import annotations

from pawflow.store.clocks import FAMILIES as CLOCK_FAMILIES
from pawflow.store.clocks import health as clock_health
from pawflow.store.clocks import keep_database_time
from pawflow.store.clocks import samples as clock_samples
from pawflow.store.engine.database import TOUCHED
from pawflow.store.engine.database import Tx as Transaction
from pawflow.store.engine.metrics import StoreGauges, resuming, zero_counters
from pawflow.store.engine.waits import WouldWait, refusing_waits
from pawflow.store.governance.policies import POLICY_KEYS, read_policy
from pawflow.store.ledger.events import EVENT_NOTICE, user_key
from pawflow.store.ledger.events import PRUNE_BATCH as EVENT_PRUNE_BATCH
from pawflow.store.opening import (
    data_dir,
    default_url,
    open_store,
    postgres_available,
    throwaway_postgres,
)
from pawflow.store.people.credentials import TOUCH_EVERY as TOKEN_TOUCH_EVERY
from pawflow.store.people.credentials import TokenRow
from pawflow.store.people.roles import AuditFilter as RoleAuditFilter
from pawflow.store.people.roles import Origin as RoleOrigin
from pawflow.store.people.sign_in import Attempt as SignInAttempt
from pawflow.store.people.sign_in import usable_group_names
from pawflow.store.reach.a2a_push import PushDelivery
from pawflow.store.reach.a2a_tasks import PushConfig, StoredTask
from pawflow.store.reach.addresses import (
    EMAIL_PATTERN,
    NOTIFY_CHANNELS,
    SLACK_PATTERN,
    URL_PATTERN,
    Reach,
)
from pawflow.store.reach.answer_links import AnswerLink
from pawflow.store.reach.lanes import destination as lane_destination
from pawflow.store.reach.outbox import NOTICE as OUTBOX_NOTICE
from pawflow.store.reach.outbox import OutboxRow
from pawflow.store.reach.web_push import Subscription, VapidKeys
from pawflow.store.reach.webhooks import EVENTS as WEBHOOK_EVENTS
from pawflow.store.reach.webhooks import Webhook, WebhookDelivery
from pawflow.store.runtime.checkpoints import Checkpoint
from pawflow.store.runtime.continuations import Continuation, SignalValue
from pawflow.store.runtime.delivery import Delivery, DeliveryHandler
from pawflow.store.runtime.deployments import CHANGED_NOTICE as DEPLOYMENT_CHANGED
from pawflow.store.runtime.deployments import DeploymentRow
from pawflow.store.runtime.deployments import Status as DeploymentStatus
from pawflow.store.runtime.interactions import Asked, Park, Question
from pawflow.store.runtime.leases import DEFAULT_TTL as LEASE_TTL
from pawflow.store.runtime.leases import Hold, LeaseTerms, elapsed
from pawflow.store.runtime.queues import STATUSES as QUEUE_STATUSES
from pawflow.store.runtime.queues import NewRow as NewQueueRow
from pawflow.store.runtime.reports import SWEEP_BATCH, SweepReport
from pawflow.store.runtime.sessions import SessionRow
from pawflow.store.runtime.turns import QueuedTurn, TurnKey, Wakeup
from pawflow.store.store import DEFAULT_FILE_CAP, DEFAULT_PAYLOAD_CAP, Store, SweepStep
from pawflow.store.sweeper import Sweeper
from pawflow.store.unit import A2APushTable, Unit, WebhooksTable

__all__ = [
    "CLOCK_FAMILIES",
    "DEFAULT_FILE_CAP",
    "DEFAULT_PAYLOAD_CAP",
    "DEPLOYMENT_CHANGED",
    "EMAIL_PATTERN",
    "EVENT_NOTICE",
    "EVENT_PRUNE_BATCH",
    "LEASE_TTL",
    "NOTIFY_CHANNELS",
    "OUTBOX_NOTICE",
    "POLICY_KEYS",
    "QUEUE_STATUSES",
    "SLACK_PATTERN",
    "SWEEP_BATCH",
    "TOKEN_TOUCH_EVERY",
    "TOUCHED",
    "URL_PATTERN",
    "WEBHOOK_EVENTS",
    "A2APushTable",
    "AnswerLink",
    "Asked",
    "Checkpoint",
    "Continuation",
    "Delivery",
    "DeliveryHandler",
    "DeploymentRow",
    "DeploymentStatus",
    "Hold",
    "LeaseTerms",
    "NewQueueRow",
    "OutboxRow",
    "Park",
    "PushConfig",
    "PushDelivery",
    "Question",
    "QueuedTurn",
    "Reach",
    "RoleAuditFilter",
    "RoleOrigin",
    "SessionRow",
    "SignInAttempt",
    "SignalValue",
    "Store",
    "StoreGauges",
    "StoredTask",
    "Subscription",
    "SweepReport",
    "SweepStep",
    "Sweeper",
    "TokenRow",
    "Transaction",
    "TurnKey",
    "Unit",
    "VapidKeys",
    "Wakeup",
    "Webhook",
    "WebhookDelivery",
    "WebhooksTable",
    "WouldWait",
    "clock_health",
    "clock_samples",
    "data_dir",
    "default_url",
    "elapsed",
    "keep_database_time",
    "lane_destination",
    "open_store",
    "postgres_available",
    "read_policy",
    "refusing_waits",
    "resuming",
    "throwaway_postgres",
    "usable_group_names",
    "user_key",
    "zero_counters",
]

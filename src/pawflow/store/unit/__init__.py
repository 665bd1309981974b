"""One door into the store: a unit of work over one transaction.

``Store.unit()`` opens a transaction and yields a :class:`Unit`: the store's tables, each a
repository whose methods are the table's functions bound to that transaction and to the
store's clock (``u.turns.enqueue(…)``, ``u.leases.acquire(name, owner, ttl)``,
``u.outbox.mark_sent(…)``: a function's ``now`` is the unit's, never passed), and the clock
itself (``u.now()``). What they do commits together when the block ends, or not at all.
Operations that compose several rules (ask, respond, cancel, post a message, deliver,
sweep) stay methods of the :class:`~pawflow.store.Store` itself.

The table modules are private to the store: packages above it reach them only through a
unit (an import contract in ``pyproject.toml`` holds them to it).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from pawflow.store.engine.database import Tx
from pawflow.store.unit.binding import Table, bound, doors, tables
from pawflow.store.unit.governance import AccountabilityTable, AdministrationTable, ApprovalsTable
from pawflow.store.unit.ledger import (
    AuditTable,
    ConversationsTable,
    EventsTable,
    MessagesTable,
    MetricsTable,
)
from pawflow.store.unit.people import CredentialsTable, GroupsTable, RolesTable, SignInTable
from pawflow.store.unit.reach import (
    A2APushTable,
    A2ATasksTable,
    AnswerLinksTable,
    OutboxTable,
    WebhooksTable,
    WebPushTable,
)
from pawflow.store.unit.runtime import (
    CheckpointsTable,
    ContinuationsTable,
    DeploymentsTable,
    InteractionsTable,
    LeasesTable,
    McpRoundsTable,
    QueuesTable,
    SessionsTable,
    TurnsTable,
)

__all__ = ["A2APushTable", "Table", "Unit", "WebhooksTable", "bound", "doors"]


class Unit:
    """The store's tables bound to one transaction (``tx``) and a clock.

    ``Store.unit()`` opens one with the store's clock. ``Unit(tx, now)`` binds the tables to
    a transaction a caller was handed (a delivery's) and to ``now``: the instant that
    transaction runs at, or a clock to read. A unit always has its clock (code that has a
    unit passes the unit, not its ``tx``), so no table's method can lack one.
    """

    def __init__(self, tx: Tx, now: Callable[[], datetime] | datetime) -> None:
        self.tx = tx
        self.clock: Callable[[], datetime] = (lambda: now) if isinstance(now, datetime) else now

    def now(self) -> datetime:
        """The unit's clock (the store's: a ``FakeClock`` in tests)."""
        return self.clock()

    a2a_push = tables(A2APushTable)
    a2a_tasks = tables(A2ATasksTable)
    accountability = tables(AccountabilityTable)
    administration = tables(AdministrationTable)
    answer_links = tables(AnswerLinksTable)
    approvals = tables(ApprovalsTable)
    audit = tables(AuditTable)
    checkpoints = tables(CheckpointsTable)
    continuations = tables(ContinuationsTable)
    conversations = tables(ConversationsTable)
    credentials = tables(CredentialsTable)
    deployments = tables(DeploymentsTable)
    events = tables(EventsTable)
    groups = tables(GroupsTable)
    interactions = tables(InteractionsTable)
    leases = tables(LeasesTable)
    mcp_rounds = tables(McpRoundsTable)
    messages = tables(MessagesTable)
    metrics = tables(MetricsTable)
    outbox = tables(OutboxTable)
    queues = tables(QueuesTable)
    roles = tables(RolesTable)
    sessions = tables(SessionsTable)
    sign_in = tables(SignInTable)
    turns = tables(TurnsTable)
    web_push = tables(WebPushTable)
    webhooks = tables(WebhooksTable)

"""One door into the store: a unit of work over one transaction.

``Store.unit()`` opens a transaction and yields a :class:`Unit`: the store's tables, each a
repository whose methods are the table's functions bound to that transaction
(``u.turns.enqueue(…)``, ``u.checkpoints.put(…)``, ``u.outbox.mark_sent(…)``), and the
store's clock (``u.now()``). What they do commits together when the block ends, or not at
all. Operations that compose several rules (ask, respond, cancel, post a message, deliver,
sweep) stay methods of the :class:`~pawflow.store.Store` itself.

The table modules are private to the store: packages above it reach them only through a
unit (an import contract in ``pyproject.toml`` holds them to it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from pawflow.store.engine import metrics as _metrics
from pawflow.store.engine.database import Tx
from pawflow.store.governance import administration as _administration
from pawflow.store.governance import approvals as _approvals
from pawflow.store.ledger import audit as _audit
from pawflow.store.ledger import conversations as _conversations
from pawflow.store.ledger import events as _events
from pawflow.store.ledger import messages as _messages
from pawflow.store.people import credentials as _credentials
from pawflow.store.people import groups as _groups
from pawflow.store.people import roles as _roles
from pawflow.store.people import sign_in as _sign_in
from pawflow.store.reach import a2a_push as _a2a_push
from pawflow.store.reach import a2a_tasks as _a2a_tasks
from pawflow.store.reach import answer_links as _answer_links
from pawflow.store.reach import outbox as _outbox
from pawflow.store.reach import web_push as _web_push
from pawflow.store.reach import webhooks as _webhooks
from pawflow.store.runtime import checkpoints as _checkpoints
from pawflow.store.runtime import continuations as _continuations
from pawflow.store.runtime import deployments as _deployments
from pawflow.store.runtime import interactions as _interactions
from pawflow.store.runtime import leases as _leases
from pawflow.store.runtime import mcp_rounds as _mcp_rounds
from pawflow.store.runtime import queues as _queues
from pawflow.store.runtime import sessions as _sessions
from pawflow.store.runtime import turns as _turns

P = ParamSpec("P")
R = TypeVar("R")

__all__ = ["A2APushTable", "Table", "Unit", "WebhooksTable"]


class bound(Generic[P, R]):
    """A table function ``fn(tx, …)`` as a method of a table bound to one transaction."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[Concatenate[Tx, P], R]) -> None:
        self.fn = fn

    @overload
    def __get__(self, table: None, owner: type[Any]) -> bound[P, R]: ...

    @overload
    def __get__(self, table: Table, owner: type[Any]) -> Callable[P, R]: ...

    def __get__(self, table: Table | None, owner: type[Any]) -> bound[P, R] | Callable[P, R]:
        if table is None:
            return self
        return functools.partial(self.fn, table.tx)


class Table:
    """A table's functions, bound to the transaction ``tx``."""

    __slots__ = ("tx",)

    def __init__(self, tx: Tx) -> None:
        self.tx = tx


T = TypeVar("T", bound=Table)


class _tables(Generic[T]):
    """A table of the unit, made on first use and kept for the rest of the unit."""

    def __init__(self, table: type[T]) -> None:
        self.table = table

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.name = name

    @overload
    def __get__(self, unit: None, owner: type[Any]) -> _tables[T]: ...

    @overload
    def __get__(self, unit: Unit, owner: type[Any]) -> T: ...

    def __get__(self, unit: Unit | None, owner: type[Any]) -> _tables[T] | T:
        if unit is None:
            return self
        made = unit.__dict__[self.name] = self.table(unit.tx)
        return made


class A2APushTable(Table):
    """Push notifications owed to A2A clients."""

    enqueue = bound(_a2a_push.enqueue)
    claim_due = bound(_a2a_push.claim_due)
    config_of = bound(_a2a_push.config_of)
    mark_sent = bound(_a2a_push.mark_sent)
    mark_failed = bound(_a2a_push.mark_failed)
    log = bound(_a2a_push.log)
    prune_settled = bound(_a2a_push.prune_settled)


class A2ATasksTable(Table):
    """A2A tasks and their push configurations."""

    save = bound(_a2a_tasks.save)
    get = bound(_a2a_tasks.get)
    list_for = bound(_a2a_tasks.list_for)
    delete = bound(_a2a_tasks.delete)
    set_push = bound(_a2a_tasks.set_push)
    push_configs = bound(_a2a_tasks.push_configs)
    push_config = bound(_a2a_tasks.push_config)
    delete_push = bound(_a2a_tasks.delete_push)
    prune_finished = bound(_a2a_tasks.prune_finished)


class AdministrationTable(Table):
    """The administrator's views across users (webhooks, rules, outbox)."""

    webhooks = bound(_administration.webhooks)
    remove_webhook = bound(_administration.remove_webhook)
    approval_rules = bound(_administration.approval_rules)
    revoke_rule = bound(_administration.revoke_rule)
    outbox_counts = bound(_administration.outbox_counts)


class AnswerLinksTable(Table):
    """One-use answer links sent in messages."""

    create = bound(_answer_links.create)
    find = bound(_answer_links.find)
    spend = bound(_answer_links.spend)
    revoke = bound(_answer_links.revoke)


class ApprovalsTable(Table):
    """Approval rules of tools and their recorded executions."""

    add_rule = bound(_approvals.add_rule)
    matching_rule = bound(_approvals.matching_rule)
    list_rules = bound(_approvals.list_rules)
    revoke_rule = bound(_approvals.revoke_rule)
    record_execution = bound(_approvals.record_execution)
    execution = bound(_approvals.execution)
    keep_rule = bound(_approvals.keep_rule)


class AuditTable(Table):
    """The audit trail."""

    trail = bound(_audit.trail)
    since = bound(_audit.since)


class CheckpointsTable(Table):
    """Checkpoints of agent runs."""

    put = bound(_checkpoints.put)
    get = bound(_checkpoints.get)
    latest = bound(_checkpoints.latest)
    of_run = bound(_checkpoints.of_run)
    by_session = bound(_checkpoints.by_session)
    pin = bound(_checkpoints.pin)
    delete = bound(_checkpoints.delete)
    remove_expired = bound(_checkpoints.remove_expired)


class ContinuationsTable(Table):
    """Parked continuations and their signals."""

    read_signal = bound(_continuations.read_signal)
    fire_signal = bound(_continuations.fire_signal)
    parked_for = bound(_continuations.parked_for)
    park = bound(_continuations.park)
    get_continuation = bound(_continuations.get_continuation)
    cancel_continuation = bound(_continuations.cancel_continuation)
    release_due = bound(_continuations.release_due)
    pending_for_target = bound(_continuations.pending_for_target)
    discard = bound(_continuations.discard)


class ConversationsTable(Table):
    """Users, conversations, their members and files."""

    ensure_user = bound(_conversations.ensure_user)
    user_exists = bound(_conversations.user_exists)
    has_users = bound(_conversations.has_users)
    create_conversation = bound(_conversations.create_conversation)
    conversation_access = bound(_conversations.conversation_access)
    may_write = bound(_conversations.may_write)
    require_write = bound(_conversations.require_write)
    find_conversation = bound(_conversations.find_conversation)
    get_conversation = bound(_conversations.get_conversation)
    list_conversations = bound(_conversations.list_conversations)
    share_conversation = bound(_conversations.share_conversation)
    conversation_members = bound(_conversations.conversation_members)
    conversation_audience = bound(_conversations.conversation_audience)
    add_file = bound(_conversations.add_file)
    discard_files = bound(_conversations.discard_files)
    get_file = bound(_conversations.get_file)
    file_content = bound(_conversations.file_content)


class CredentialsTable(Table):
    """API tokens, sign-in links and logins."""

    add_token = bound(_credentials.add_token)
    check_token = bound(_credentials.check_token)
    token_current = bound(_credentials.token_current)
    touch_token = bound(_credentials.touch_token)
    tokens = bound(_credentials.tokens)
    token_by_id = bound(_credentials.token_by_id)
    remove_token = bound(_credentials.remove_token)
    remove_tokens = bound(_credentials.remove_tokens)
    set_disabled = bound(_credentials.set_disabled)
    disabled_at = bound(_credentials.disabled_at)
    user_enabled = bound(_credentials.user_enabled)
    add_signin_link = bound(_credentials.add_signin_link)
    signin_link_user = bound(_credentials.signin_link_user)
    use_signin_link = bound(_credentials.use_signin_link)
    add_login = bound(_credentials.add_login)
    login = bound(_credentials.login)
    login_current = bound(_credentials.login_current)
    touch_login = bound(_credentials.touch_login)
    remove_login = bound(_credentials.remove_login)
    remove_logins = bound(_credentials.remove_logins)
    prune_expired = bound(_credentials.prune_expired)


class DeploymentsTable(Table):
    """Flow deployments."""

    get = bound(_deployments.get)
    all_deployments = bound(_deployments.all_deployments)
    set_status = bound(_deployments.set_status)
    record_error = bound(_deployments.record_error)
    save = bound(_deployments.save)
    wake_if_stopped = bound(_deployments.wake_if_stopped)


class EventsTable(Table):
    """Each user's event log."""

    last_seq = bound(_events.last_seq)
    events_after = bound(_events.events_after)
    prune_events = bound(_events.prune_events)


class GroupsTable(Table):
    """Groups and delegations."""

    check_kept_here = bound(_groups.check_kept_here)
    add_members = bound(_groups.add_members)
    remove_members = bound(_groups.remove_members)
    members = bound(_groups.members)
    all_groups = bound(_groups.all_groups)
    groups_of = bound(_groups.groups_of)
    expand = bound(_groups.expand)
    delegate = bound(_groups.delegate)
    revoke_delegation = bound(_groups.revoke_delegation)
    delegations = bound(_groups.delegations)
    principals_of = bound(_groups.principals_of)


class InteractionsTable(Table):
    """Durable requests, read (answers go through the facade)."""

    get = bound(_interactions.get)
    newest_pending = bound(_interactions.newest_pending)


class LeasesTable(Table):
    """Named leases (one owner at a time, until a deadline)."""

    acquire = bound(_leases.acquire)
    renew = bound(_leases.renew)
    release = bound(_leases.release)
    release_all = bound(_leases.release_all)
    get = bound(_leases.get)
    held = bound(_leases.held)


class McpRoundsTable(Table):
    """Rounds of MCP tools that ask."""

    record = bound(_mcp_rounds.record)
    actions = bound(_mcp_rounds.actions)


class MessagesTable(Table):
    """Conversation history and live clients."""

    append_message = bound(_messages.append_message)
    history = bound(_messages.history)
    recent = bound(_messages.recent)
    mark_live = bound(_messages.mark_live)
    drop_live = bound(_messages.drop_live)
    is_live = bound(_messages.is_live)
    notify_user = bound(_messages.notify_user)


class MetricsTable(Table):
    """Gauges read from the tables, counters staged with the transaction."""

    read = bound(_metrics.read)
    asked = bound(_metrics.asked)


class OutboxTable(Table):
    """Messages owed to channels, and each user's reach."""

    get_reach = bound(_outbox.get_reach)
    set_reach = bound(_outbox.set_reach)
    user_by_slack = bound(_outbox.user_by_slack)
    enqueue = bound(_outbox.enqueue)
    renotify = bound(_outbox.renotify)
    webhooks_on = bound(_outbox.webhooks_on)
    deliveries = bound(_outbox.deliveries)
    claim_due = bound(_outbox.claim_due)
    claim_settle = bound(_outbox.claim_settle)
    mark_sent = bound(_outbox.mark_sent)
    mark_failed = bound(_outbox.mark_failed)
    mark_settled = bound(_outbox.mark_settled)
    settle_request = bound(_outbox.settle_request)
    request_of = bound(_outbox.request_of)
    find_by_key = bound(_outbox.find_by_key)
    prune_settled = bound(_outbox.prune_settled)


class QueuesTable(Table):
    """Durable flow queues."""

    fence = bound(_queues.fence)
    enqueue = bound(_queues.enqueue)
    take = bound(_queues.take)
    move = bound(_queues.move)
    finish = bound(_queues.finish)
    recover = bound(_queues.recover)
    unpark = bound(_queues.unpark)
    counts = bound(_queues.counts)


class RolesTable(Table):
    """Users' roles, emails and server options."""

    role_of = bound(_roles.role_of)
    is_admin = bound(_roles.is_admin)
    set_role = bound(_roles.set_role)
    set_email = bound(_roles.set_email)
    user = bound(_roles.user)
    users = bound(_roles.users)
    admins = bound(_roles.admins)
    option = bound(_roles.option)
    set_option = bound(_roles.set_option)
    record = bound(_roles.record)
    trail = bound(_roles.trail)


class SessionsTable(Table):
    """Session continuations (what a conversation waits on)."""

    insert = bound(_sessions.insert)
    lock = bound(_sessions.lock)
    supersede_pending = bound(_sessions.supersede_pending)
    pending = bound(_sessions.pending)
    close = bound(_sessions.close)
    get = bound(_sessions.get)
    history = bound(_sessions.history)
    by_run = bound(_sessions.by_run)
    expire_due = bound(_sessions.expire_due)


class SignInTable(Table):
    """Single sign-on attempts, identities and provider groups."""

    add_attempt = bound(_sign_in.add_attempt)
    use_attempt = bound(_sign_in.use_attempt)
    prune_attempts = bound(_sign_in.prune_attempts)
    identity_user = bound(_sign_in.identity_user)
    link_identity = bound(_sign_in.link_identity)
    provider_groups = bound(_sign_in.provider_groups)
    is_provider_group = bound(_sign_in.is_provider_group)
    sync_groups = bound(_sign_in.sync_groups)


class TurnsTable(Table):
    """The turn queue of conversations."""

    assign_agent = bound(_turns.assign_agent)
    assigned_agent = bound(_turns.assigned_agent)
    enqueue = bound(_turns.enqueue)
    post_user_message = bound(_turns.post_user_message)
    get = bound(_turns.get)
    due = bound(_turns.due)
    claim = bound(_turns.claim)
    renew = bound(_turns.renew)
    complete = bound(_turns.complete)
    retry_later = bound(_turns.retry_later)
    message_of = bound(_turns.message_of)
    open_turns = bound(_turns.open_turns)
    for_conversation = bound(_turns.for_conversation)
    schedule_wakeup = bound(_turns.schedule_wakeup)
    wakeup = bound(_turns.wakeup)
    wakeup_by_source = bound(_turns.wakeup_by_source)
    wakeups_for_conversation = bound(_turns.wakeups_for_conversation)
    start_wakeup = bound(_turns.start_wakeup)
    mark_tool_started = bound(_turns.mark_tool_started)
    absorb = bound(_turns.absorb)


class WebPushTable(Table):
    """Web Push keys and subscriptions."""

    keys = bound(_web_push.keys)
    keep_keys = bound(_web_push.keep_keys)
    subscribe = bound(_web_push.subscribe)
    of_user = bound(_web_push.of_user)
    find = bound(_web_push.find)
    unsubscribe = bound(_web_push.unsubscribe)
    remove_gone = bound(_web_push.remove_gone)


class WebhooksTable(Table):
    """Webhooks and their deliveries."""

    create = bound(_webhooks.create)
    list_for = bound(_webhooks.list_for)
    get = bound(_webhooks.get)
    delete = bound(_webhooks.delete)
    count_for = bound(_webhooks.count_for)
    has_any = bound(_webhooks.has_any)
    log = bound(_webhooks.log)
    on_created = bound(_webhooks.on_created)
    on_settled = bound(_webhooks.on_settled)
    claim_due = bound(_webhooks.claim_due)
    claim_rows = bound(_webhooks.claim_rows)
    insert_capped = bound(_webhooks.insert_capped)
    webhook_of = bound(_webhooks.webhook_of)
    mark_sent = bound(_webhooks.mark_sent)
    record_sent = bound(_webhooks.record_sent)
    mark_failed = bound(_webhooks.mark_failed)
    record_failed = bound(_webhooks.record_failed)
    anything_due = bound(_webhooks.anything_due)
    prune_settled = bound(_webhooks.prune_settled)


class Unit:
    """The store's tables bound to one transaction (``tx``) and the store's clock.

    ``Store.unit()`` opens one; ``Unit(tx)`` binds the tables to a transaction a caller was
    handed (a delivery's), without the clock: its functions are given ``now``.
    """

    def __init__(self, tx: Tx, clock: Callable[[], datetime] | None = None) -> None:
        self.tx = tx
        self._clock = clock

    def now(self) -> datetime:
        """The store's clock (a ``FakeClock`` in tests)."""
        if self._clock is None:
            raise RuntimeError("this unit was made without the store's clock")
        return self._clock()

    a2a_push = _tables(A2APushTable)
    a2a_tasks = _tables(A2ATasksTable)
    administration = _tables(AdministrationTable)
    answer_links = _tables(AnswerLinksTable)
    approvals = _tables(ApprovalsTable)
    audit = _tables(AuditTable)
    checkpoints = _tables(CheckpointsTable)
    continuations = _tables(ContinuationsTable)
    conversations = _tables(ConversationsTable)
    credentials = _tables(CredentialsTable)
    deployments = _tables(DeploymentsTable)
    events = _tables(EventsTable)
    groups = _tables(GroupsTable)
    interactions = _tables(InteractionsTable)
    leases = _tables(LeasesTable)
    mcp_rounds = _tables(McpRoundsTable)
    messages = _tables(MessagesTable)
    metrics = _tables(MetricsTable)
    outbox = _tables(OutboxTable)
    queues = _tables(QueuesTable)
    roles = _tables(RolesTable)
    sessions = _tables(SessionsTable)
    sign_in = _tables(SignInTable)
    turns = _tables(TurnsTable)
    web_push = _tables(WebPushTable)
    webhooks = _tables(WebhooksTable)

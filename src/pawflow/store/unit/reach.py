"""The tables of what leaves PawFlow: the outbox, webhooks, A2A tasks and pushes, Web Push
and answer links."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pawflow.records import Interaction
from pawflow.store.reach import a2a_push as _a2a_push
from pawflow.store.reach import a2a_tasks as _a2a_tasks
from pawflow.store.reach import addresses as _addresses
from pawflow.store.reach import answer_links as _answer_links
from pawflow.store.reach import outbox as _outbox
from pawflow.store.reach import web_push as _web_push
from pawflow.store.reach import webhooks as _webhooks
from pawflow.store.reach.a2a_push import PushDelivery
from pawflow.store.reach.a2a_tasks import PushConfig
from pawflow.store.reach.addresses import Reach
from pawflow.store.reach.lanes import Busy
from pawflow.store.reach.outbox import OutboxRow
from pawflow.store.reach.web_push import Subscription, VapidKeys
from pawflow.store.reach.webhooks import Queue, Webhook, WebhookDelivery
from pawflow.store.unit.binding import Table, bound

__all__ = [
    "A2APushTable",
    "A2ATasksTable",
    "AnswerLinksTable",
    "OutboxTable",
    "WebPushTable",
    "WebhooksTable",
]


class A2APushTable(Table):
    """Push notifications owed to A2A clients."""

    def enqueue(self, task_id: str, event: str, payload: str) -> int:
        return _a2a_push.enqueue(self.tx, task_id, event, payload, self.now())

    def claim_due(self, limit: int, busy: Busy = ()) -> list[PushDelivery]:
        return _a2a_push.claim_due(self.tx, self.now(), limit, busy)

    config_of = bound(_a2a_push.config_of)

    def mark_sent(self, claimed: PushDelivery, response_status: int) -> bool:
        return _a2a_push.mark_sent(self.tx, claimed, response_status, self.now())

    mark_failed = bound(_a2a_push.mark_failed)
    log = bound(_a2a_push.log)
    prune_settled = bound(_a2a_push.prune_settled)


class A2ATasksTable(Table):
    """A2A tasks and their push configurations."""

    def save(
        self, task_id: str, *, user: str, agent: str, context_id: str, state: str, task: str
    ) -> bool:
        return _a2a_tasks.save(
            self.tx,
            task_id,
            user=user,
            agent=agent,
            context_id=context_id,
            state=state,
            task=task,
            now=self.now(),
        )

    get = bound(_a2a_tasks.get)
    list_for = bound(_a2a_tasks.list_for)
    delete = bound(_a2a_tasks.delete)

    def set_push(self, config: PushConfig) -> bool:
        return _a2a_tasks.set_push(self.tx, config, self.now())

    push_configs = bound(_a2a_tasks.push_configs)
    push_config = bound(_a2a_tasks.push_config)
    delete_push = bound(_a2a_tasks.delete_push)
    prune_finished = bound(_a2a_tasks.prune_finished)


class AnswerLinksTable(Table):
    """One-use answer links sent in messages."""

    def create(
        self,
        request_id: str,
        user: str,
        *,
        expires_at: datetime | None,
        outbox_id: str | None = None,
    ) -> str:
        return _answer_links.create(
            self.tx, request_id, user, now=self.now(), expires_at=expires_at, outbox_id=outbox_id
        )

    find = bound(_answer_links.find)

    def spend(self, secret: str) -> bool:
        return _answer_links.spend(self.tx, secret, self.now())

    def revoke(self, user: str) -> int:
        return _answer_links.revoke(self.tx, user, self.now())


class OutboxTable(Table):
    """Messages owed to channels, and each user's reach."""

    get_reach = bound(_addresses.get_reach)

    def set_reach(
        self,
        user: str,
        *,
        email: str | None = _addresses._UNSET,
        slack: str | None = _addresses._UNSET,
        notify_url: str | None = _addresses._UNSET,
        notify: Sequence[str] | None = _addresses._UNSET,
    ) -> Reach:
        return _addresses.set_reach(
            self.tx,
            user,
            now=self.now(),
            email=email,
            slack=slack,
            notify_url=notify_url,
            notify=notify,
        )

    user_by_slack = bound(_addresses.user_by_slack)

    def enqueue(
        self,
        record: Interaction,
        notify: Sequence[str] | None,
        deciders: Sequence[str] = (),
        owner_reach: Reach | None = None,
    ) -> list[OutboxRow]:
        return _outbox.enqueue(self.tx, record, notify, self.now(), deciders, owner_reach)

    def renotify(self, record: Interaction, recipients: Sequence[str]) -> int:
        return _outbox.renotify(self.tx, record, recipients, self.now())

    webhooks_on = bound(_outbox.webhooks_on)
    deliveries = bound(_outbox.deliveries)

    def claim_due(
        self, limit: int, busy: Busy = (), *, channel: str | None = None
    ) -> list[OutboxRow]:
        return _outbox.claim_due(self.tx, self.now(), limit, busy, channel=channel)

    def claim_settle(self, limit: int, busy: Busy = ()) -> list[OutboxRow]:
        return _outbox.claim_settle(self.tx, self.now(), limit, busy)

    def mark_sent(self, claimed: OutboxRow, external_ref: str | None) -> bool:
        return _outbox.mark_sent(self.tx, claimed, external_ref, self.now())

    def mark_failed(self, claimed: OutboxRow, reason: str, *, permanent: bool = False) -> bool:
        return _outbox.mark_failed(self.tx, claimed, reason, self.now(), permanent=permanent)

    mark_settled = bound(_outbox.mark_settled)

    def settle_request(self, record: Interaction) -> bool:
        return _outbox.settle_request(self.tx, record, self.now())

    request_of = bound(_outbox.request_of)
    find_by_key = bound(_outbox.find_by_key)
    prune_settled = bound(_outbox.prune_settled)


class WebPushTable(Table):
    """Web Push keys and subscriptions."""

    keys = bound(_web_push.keys)

    def keep_keys(self, private_pem: str, public_key: str) -> VapidKeys:
        return _web_push.keep_keys(self.tx, private_pem, public_key, self.now())

    def subscribe(
        self, user: str, endpoint: str, p256dh: str, auth: str, device: str
    ) -> Subscription:
        return _web_push.subscribe(self.tx, user, endpoint, p256dh, auth, device, self.now())

    of_user = bound(_web_push.of_user)
    find = bound(_web_push.find)
    unsubscribe = bound(_web_push.unsubscribe)
    remove_gone = bound(_web_push.remove_gone)


class WebhooksTable(Table):
    """Webhooks and their deliveries."""

    def create(
        self, user: str, url: str, events: tuple[str, ...], *, limit: int = _webhooks.MAX_WEBHOOKS
    ) -> Webhook:
        return _webhooks.create(self.tx, user, url, events, self.now(), limit=limit)

    list_for = bound(_webhooks.list_for)
    get = bound(_webhooks.get)
    delete = bound(_webhooks.delete)
    count_for = bound(_webhooks.count_for)
    has_any = bound(_webhooks.has_any)
    log = bound(_webhooks.log)

    def on_created(self, record: Interaction) -> int:
        return _webhooks.on_created(self.tx, record, self.now())

    def on_settled(self, record: Interaction) -> int:
        return _webhooks.on_settled(self.tx, record, self.now())

    def claim_due(self, limit: int, busy: Busy = ()) -> list[WebhookDelivery]:
        return _webhooks.claim_due(self.tx, self.now(), limit, busy)

    def claim_rows(self, table: Queue, limit: int, busy: Busy = ()) -> list[dict[str, Any]]:
        return _webhooks.claim_rows(self.tx, table, self.now(), limit, busy)

    def insert_capped(self, table: Queue, columns: dict[str, Any]) -> bool:
        return _webhooks.insert_capped(self.tx, table, columns, self.now())

    webhook_of = bound(_webhooks.webhook_of)

    def mark_sent(self, claimed: WebhookDelivery, response_status: int) -> bool:
        return _webhooks.mark_sent(self.tx, claimed, response_status, self.now())

    def record_sent(
        self, table: Queue, delivery_id: str, attempts: int, response_status: int
    ) -> bool:
        return _webhooks.record_sent(
            self.tx, table, delivery_id, attempts, response_status, self.now()
        )

    mark_failed = bound(_webhooks.mark_failed)
    record_failed = bound(_webhooks.record_failed)

    def anything_due(self) -> bool:
        return _webhooks.anything_due(self.tx, self.now())

    prune_settled = bound(_webhooks.prune_settled)

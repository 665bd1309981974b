"""Interactions in the store: publish, read within scope, and the one way out of ``pending``.

Answering, cancelling and expiring are conditional updates (``… WHERE status =
'pending'``): of any number of concurrent attempts exactly one changes the row, and in the
same transaction it fires the request's signal and logs the event.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, NamedTuple

from pawflow import durations, telemetry
from pawflow.clock import to_millis
from pawflow.errors import Conflict, FieldError, InvalidInput, NotFound, NotPending
from pawflow.ids import new_ordered_id
from pawflow.interactions import (
    CONFIRMATION_KINDS,
    normalize_options,
    parse_kind,
    prepare_request,
)
from pawflow.interactions.problems import invalid, unstorable_text
from pawflow.interactions.surfaces import check_surface
from pawflow.records import Interaction, Outcome, Requester
from pawflow.store.engine.database import Tx, sql
from pawflow.store.engine.metrics import count
from pawflow.store.engine.rows import decode_cursor, encode_cursor
from pawflow.store.governance import policies
from pawflow.store.ledger import audit
from pawflow.store.ledger.conversations import (
    conversation_audience,
    may_write,
    require_write,
)
from pawflow.store.ledger.events import append_interaction_event
from pawflow.store.reach import outbox, webhooks
from pawflow.store.reach.addresses import Reach
from pawflow.store.runtime import idempotency
from pawflow.store.runtime.continuations import Continuation, Payload, fire_signal

log = logging.getLogger("pawflow.requests")

MAX_MESSAGE = 20_000
SignalFamily = Literal["confirmation", "interaction"]
Ending = Literal["answered", "cancelled", "expired"]


def _row(tx: Tx, request_id: str) -> dict[str, Any] | None:
    if not isinstance(request_id, str) or not request_id:
        return None
    return sql(tx).one("SELECT * FROM interactions WHERE id = ?", (request_id,))


def may_answer(tx: Tx, row: dict[str, Any], user: str) -> bool:
    return row["owner"] == user or may_write(tx, row["conversation_id"], user)


@dataclass(frozen=True)
class Park:
    """What waits for a question's answer: a continuation for ``target`` (``kind:key``)
    carrying ``payload`` (bytes or a JSON value; or made from the new interaction, to carry
    its id), parked on the answer's signal in the question's transaction."""

    target: str
    payload: Payload | Callable[[Interaction], Payload] = b""


class Asked(NamedTuple):
    """A question published (or found again by its idempotency key), and the continuation
    waiting for its answer when one was parked."""

    interaction: Interaction
    continuation: Continuation | None


@dataclass(frozen=True)
class Question:
    """A question as a caller puts it (:meth:`pawflow.Store.ask`): for ``owner``, in a
    conversation they may write to, of a ``kind`` with its ``message``; a deadline as
    given (``expires_in`` or ``expires_at``), the requester maybe a dict; with an
    ``idempotency_key`` of the owner's asked again, the first request is found instead."""

    owner: str
    conversation_id: str
    kind: str
    message: str
    options: object = None
    title: str | None = None
    response_schema: dict[str, Any] | None = None
    expires_in: str | int | timedelta | None = None
    expires_at: str | datetime | None = None
    requester: Requester | dict[str, Any] | None = None
    signal_family: SignalFamily | None = None
    ui_surface: dict[str, Any] | None = None
    idempotency_key: str | None = None
    policy: Mapping[str, Any] | None = None
    notify: Sequence[str] | None = None
    """The channels to notify (``[]``: none); None: the owner's own."""

    def deadline(self, now: datetime) -> datetime | None:
        if self.expires_in is not None and self.expires_at is not None:
            raise InvalidInput("give expires_in or expires_at, not both")
        if self.expires_at is None:
            return durations.deadline_after(now, self.expires_in)
        deadline = durations.parse_deadline(self.expires_at)
        if deadline <= now:  # a question that could never be answered: now is too late
            raise Conflict("expires_at is already past")
        return deadline

    def publish(self, tx: Tx, now: datetime) -> Interaction:
        requester = self.requester
        if isinstance(requester, dict):
            try:
                requester = Requester.model_validate(requester)
            except ValueError as exc:
                raise InvalidInput(f"invalid requester: {exc}") from exc
        requester = requester or Requester()
        attributes = {"pawflow.kind": str(self.kind), "pawflow.requester": requester.type}
        with telemetry.span(
            "pawflow.ask", attributes, conversation_id=self.conversation_id
        ) as span:
            record = request(
                tx,
                owner=self.owner,
                conversation_id=self.conversation_id,
                kind=self.kind,
                message=self.message,
                options=self.options,
                title=self.title,
                response_schema=self.response_schema,
                deadline=self.deadline,
                requester=requester,
                signal_family=self.signal_family,
                ui_surface=self.ui_surface,
                idempotency_key=self.idempotency_key,
                notify=self.notify,
                now=now,
                policy=policies.read_policy(self.policy),
            )
            span.set_attribute("pawflow.request_id", record.id)
        return record


_ASKED = (
    "id",
    "contract_version",
    "kind",
    "title",
    "message",
    "options",
    "response_schema",
    "owner",
    "conversation_id",
    "requester",
    "signal_id",
    "status",
    "created_at",
    "expires_at",
    "ui_surface",
    "idempotency_key",
    "trace_context",
)
"""The columns a request is written with (the others start empty)."""
_INSERT = f"INSERT INTO interactions ({', '.join(_ASKED)}) VALUES ({', '.join('?' * len(_ASKED))})"
_INSERT_ONCE = _INSERT + (
    " ON CONFLICT (owner, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING *"
)


def request(
    tx: Tx,
    *,
    owner: str,
    conversation_id: str,
    kind: str,
    message: str,
    options: object,
    title: str | None,
    response_schema: dict[str, Any] | None,
    deadline: Callable[[datetime], datetime | None],
    requester: Requester,
    signal_family: SignalFamily | None,
    ui_surface: dict[str, Any] | None,
    now: datetime,
    idempotency_key: str | None = None,
    policy: policies.Policy | None = None,
    notify: Sequence[str] | None = None,
) -> Interaction:
    """Publish a request; with an ``idempotency_key`` the owner already used, find that one.

    The repeat must ask the same question (conversation, kind, message, title, options,
    schema and surface; the deadline and requester are not compared), else ``Conflict``.
    """
    # Who may not publish here learns nothing, not even what is wrong with the question.
    # The members, needed for the event anyway, settle it in the common case in one read.
    members, reach = _members_and_reach(tx, conversation_id, owner)
    if members.get(owner) not in ("owner", "write"):
        require_write(tx, conversation_id, owner)
    parsed_kind = parse_kind(kind)
    unstorable = [
        found
        for found in (
            unstorable_text(message, "message"),
            unstorable_text(title, "title"),
            unstorable_text(response_schema, "response_schema"),
            unstorable_text(ui_surface, "ui_surface"),
            unstorable_text(requester.model_dump(), "requester"),
        )
        if found is not None
    ]
    if unstorable:
        raise invalid("invalid request", unstorable)
    if not isinstance(message, str) or not message.strip():
        raise InvalidInput("message is required", [FieldError("message", "required")])
    if len(message) > MAX_MESSAGE:
        raise InvalidInput("message is too long", [FieldError("message", f"at most {MAX_MESSAGE}")])
    if title is not None and (not isinstance(title, str) or len(title) > 500):
        raise InvalidInput("title is invalid", [FieldError("title", "a string of at most 500")])
    if response_schema is not None and not isinstance(response_schema, dict):
        raise InvalidInput(
            "response_schema must be an object",
            [FieldError("response_schema", "expected an object")],
        )
    expires_at = deadline(now)  # read once access is settled, like every other field
    parsed_options = None if options is None else normalize_options(options)
    final_options, schema = prepare_request(parsed_kind, parsed_options, response_schema)
    if ui_surface is not None:
        ui_surface = check_surface(ui_surface, parsed_kind, final_options)
    family = signal_family or (
        "confirmation" if parsed_kind in CONFIRMATION_KINDS else "interaction"
    )
    options_json = None if final_options is None else [o.model_dump() for o in final_options]
    asked = {
        "conversation_id": conversation_id,
        "kind": parsed_kind.value,
        "message": message,
        "title": title,
        "options": options_json,
        "response_schema": schema,
        "ui_surface": ui_surface,
    }
    if idempotency_key is not None:
        idempotency.check_key(idempotency_key)
        first = idempotency.asked_before(tx, owner, idempotency_key, asked)
        if first is not None:
            return first
    request_id = new_ordered_id()  # requests made in one millisecond still show in order
    values = (
        request_id,
        1,
        parsed_kind.value,
        title,
        message,
        None if options_json is None else json.dumps(options_json),
        json.dumps(schema),
        owner,
        conversation_id,
        json.dumps(requester.model_dump()),
        f"{family}:{request_id}",
        "pending",
        to_millis(now),
        None if expires_at is None else to_millis(expires_at),
        None if ui_surface is None else json.dumps(ui_surface),
        idempotency_key,
        telemetry.traceparent(),  # the ask's: its answer and resume link to it
    )
    if idempotency_key is None:
        # A fresh id cannot conflict, so nothing is read back: where the backend pipelines,
        # the row travels with the ask's other writes and its commit, in one exchange.
        sql(tx).send(_INSERT, values)
        row: dict[str, Any] = dict(zip(_ASKED, values, strict=True))
    else:
        found = sql(tx).one(_INSERT_ONCE, values)
        if found is None:  # the same key, committed meanwhile by a concurrent request
            first = idempotency.asked_before(tx, owner, idempotency_key, asked)
            assert first is not None
            return first
        row = found
    record = Interaction.from_row(row)
    policies.attach(
        tx,
        record.id,
        kind=parsed_kind,
        schema=schema,
        owner=owner,
        requester=requester.type,
        policy=policy,
        created=now,
        deadline=expires_at,
    )
    count(tx, telemetry.REQUESTS_CREATED, kind=record.kind)
    log.debug("request %s (%s) asked", record.id, record.kind)
    writers = {user for user, access in members.items() if access != "read"}
    _announce(tx, record, "interaction_request", now, writers)
    deciders = []  # the policy just attached, as checked: no need to read it back
    if policy is not None and policy.assignees:
        kept = {"assignees": policy.assignees, "requester_may_answer": policy.requester_may_answer}
        deciders = policies.deciders(tx, row, kept)
    if isinstance(notify, list | tuple) and not notify:  # nobody is notified: no lookup
        sent = []
    else:
        sent = outbox.enqueue(tx, record, notify, now, deciders, reach)
    if any(r.channel == "webhook" and r.status == "sent" for r in sent):
        webhooks.on_created(tx, record, now)
    return record


def _members_and_reach(
    tx: Tx, conversation_id: str, owner: str
) -> tuple[dict[str, str], Reach | None]:
    """The conversation's members with their access, and the asker's reach (None when the
    asker is no member), in one statement: what a question needs to know before it is
    published, and to notify."""
    rows = sql(tx).all(
        "SELECT m.user_id, m.access, c.email, c.slack, c.notify_url, c.notify,"
        " c.user_id AS found, EXISTS (SELECT 1 FROM webhooks WHERE user_id = ?) AS hooks,"
        " EXISTS (SELECT 1 FROM push_subscriptions WHERE user_id = ?) AS devices FROM ("
        "SELECT owner AS user_id, 'owner' AS access FROM conversations WHERE id = ? UNION ALL"
        " SELECT user_id, access FROM conversation_members WHERE conversation_id = ?) AS m"
        " LEFT JOIN user_channels AS c ON c.user_id = m.user_id AND m.user_id = ?",
        (owner, owner, conversation_id, conversation_id, owner),
    )
    members = {row["user_id"]: row["access"] for row in rows}
    mine = next((row for row in rows if row["user_id"] == owner), None)
    if mine is None:
        return members, None
    hooks, devices = bool(mine["hooks"]), bool(mine["devices"])
    if mine["found"] is None:
        return members, Reach(owner, webhooks=hooks, devices=devices)
    notify = None if mine["notify"] is None else tuple(json.loads(mine["notify"]))
    reach = Reach(owner, mine["email"], mine["slack"], mine["notify_url"], notify, hooks, devices)
    return members, reach


def must_find(tx: Tx, request_id: str) -> dict[str, Any]:
    row = _row(tx, request_id)
    if row is None:
        raise NotFound()
    return row


def _announce(
    tx: Tx, record: Interaction, type_: str, now: datetime, writers: set[str] | None = None
) -> None:
    """Log the event for those who can act on the request: its owner and the writers."""
    if writers is None:
        writers = conversation_audience(tx, record.conversation_id, writers_only=True)
    append_interaction_event(tx, writers | {record.owner}, record, type_, now)


def get(tx: Tx, request_id: str, *, user: str) -> Interaction:
    row = _row(tx, request_id)
    if row is None or row["owner"] != user:
        raise NotFound()
    return Interaction.from_row(row)


def list_for(
    tx: Tx,
    *,
    user: str,
    status: str | None,
    conversation_id: str | None,
    kind: str | Sequence[str] | None,
    limit: int,
    cursor: str | None,
) -> tuple[list[Interaction], str | None]:
    """The user's interactions, oldest first, a page at a time."""
    clauses = ["owner = ?"]
    params: list[Any] = [user]
    if status is not None:
        if status not in ("pending", "answered", "cancelled", "expired"):
            raise InvalidInput(
                "unknown status",
                [FieldError("status", "one of pending, answered, cancelled, expired")],
            )
        clauses.append("status = ?")
        params.append(status)
    if conversation_id is not None:
        clauses.append("conversation_id = ?")
        params.append(conversation_id)
    if kind is not None:
        kinds = [parse_kind(k).value for k in ([kind] if isinstance(kind, str) else kind)]
        clauses.append(f"kind IN ({', '.join('?' for _ in kinds)})")
        params.extend(kinds)
    if cursor is not None:
        created, after_id = decode_cursor(cursor)
        clauses.append("(created_at > ? OR (created_at = ? AND id > ?))")
        params.extend([created, created, after_id])
    if not 1 <= limit <= 1000:
        raise InvalidInput("limit out of range", [FieldError("limit", "between 1 and 1000")])
    rows = sql(tx).all(
        f"SELECT * FROM interactions WHERE {' AND '.join(clauses)} ORDER BY created_at, id LIMIT ?",
        (*params, limit + 1),
    )
    page = [Interaction.from_row(row) for row in rows[:limit]]
    next_cursor = None
    if len(rows) > limit:
        last = rows[limit - 1]
        next_cursor = encode_cursor(last["created_at"], last["id"])
    return page, next_cursor


def newest_pending(tx: Tx, conversation_id: str, now: datetime) -> Interaction | None:
    """The newest request of the conversation still waiting for an answer (one past its
    deadline is not: it expires)."""
    row = sql(tx).one(
        "SELECT * FROM interactions WHERE conversation_id = ? AND status = 'pending'"
        " AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at DESC, id DESC LIMIT 1",
        (conversation_id, to_millis(now)),
    )
    return None if row is None else Interaction.from_row(row)


def leave_pending(
    tx: Tx,
    row: dict[str, Any],
    outcome: Ending,
    *,
    answer: Any,
    by: str | None,
    now: datetime,
    via: str | None = None,
    seq: int | None = None,
    note: dict[str, Any] | None = None,
    writers: set[str] | None = None,
    notified: bool | None = None,
    held: bool = False,
) -> Interaction | None:
    """Move one request out of ``pending``; None when another attempt won first.

    ``via`` (and a chat message's ``seq``) say where an answer came from; the audit trail
    records the step (``note``: more about it) in the same transaction. The event goes to
    the owner and the conversation's ``writers`` (read here unless given); ``notified``:
    whether it has outbox rows, if known. ``held``: ``row`` was read pending in this
    transaction, which holds it since (``answering.read_answering``): the change is sent
    without reading the row back.
    """
    at = to_millis(now)
    verb = {"answered": "answer", "cancelled": "cancel", "expired": "expire"}[outcome]
    with telemetry.span(
        f"pawflow.{verb}", request_id=row["id"], conversation_id=row["conversation_id"]
    ) as span:
        telemetry.link(span, row.get("trace_context"))
        left = _leave(
            tx,
            row,
            outcome,
            answer=answer,
            by=by,
            at=at,
            now=now,
            via=via,
            seq=seq,
            writers=writers,
            notified=notified,
            held=held,
        )
    if left is not None:
        action: audit.Action = "defaulted" if via == policies.POLICY_VIA else outcome
        audit.record(tx, left.id, action, now, actor=by, via=via, detail=note)
    return left


def _leave(
    tx: Tx,
    row: dict[str, Any],
    outcome: Ending,
    *,
    answer: Any,
    by: str | None,
    at: int,
    now: datetime,
    via: str | None,
    seq: int | None,
    writers: set[str] | None,
    notified: bool | None,
    held: bool,
) -> Interaction | None:
    answered = outcome == "answered"
    changes = {
        "status": outcome,
        "answer": json.dumps(answer) if answered else None,
        "answered_by": by,
        "answered_at": at,
        "answered_via": via if answered else None,
        "answered_seq": seq if answered else None,
    }
    change = (
        "UPDATE interactions SET status = ?, answer = ?, answered_by = ?, answered_at = ?,"
        " answered_via = ?, answered_seq = ? WHERE id = ? AND status = 'pending'"
    )
    updated: dict[str, Any] | None
    if held and row["status"] == "pending":
        sql(tx).send(change, (*changes.values(), row["id"]))
        updated = {**row, **changes}
    else:
        updated = sql(tx).one(change + " RETURNING *", (*changes.values(), row["id"]))
    if updated is None:
        return None
    record = Interaction.from_row(updated)
    count(tx, telemetry.REQUESTS_CLOSED, kind=record.kind, outcome=outcome, via=via or "")
    log.debug("request %s %s%s", record.id, outcome, f" via {via}" if via else "")
    fire_signal(tx, record.signal_id, outcome_of(record, row).to_value(), now)
    _announce(tx, record, "interaction_answered", now, writers)
    if notified is not False and outbox.settle_request(tx, record, now):
        webhooks.on_settled(tx, record, now)
    return record


def outcome_of(record: Interaction, row: dict[str, Any]) -> Outcome:
    """How the request ``record`` (no longer pending; ``row``: as it was read) ended, as
    what waited on it reads it: a policy's answer (requesters tell it from a person's) is
    ``defaulted``, with how long the request waited."""
    defaulted = record.answered_via == policies.POLICY_VIA
    return Outcome.model_construct(  # the record's fields are already checked
        status="defaulted" if defaulted else record.status,
        answer=record.answer,
        answered_by=record.answered_by,
        answered_via=record.answered_via,
        at=record.answered_at,
        waited=policies.waited(row) if defaulted else None,
    )


def is_past(row: dict[str, Any], now: datetime) -> bool:
    return row["expires_at"] is not None and row["expires_at"] <= to_millis(now)


def answerable(tx: Tx, request_id: str, user: str, kinds: Collection[str] | None) -> dict[str, Any]:
    """The row ``user`` may answer or cancel; of another kind than ``kinds``, not found."""
    row = _row(tx, request_id)
    if row is None or not may_answer(tx, row, user):
        raise NotFound()
    if kinds is not None and row["kind"] not in kinds:
        raise NotFound()
    return row


def cancel(
    tx: Tx, request_id: str, *, user: str, now: datetime, kinds: Collection[str] | None = None
) -> Interaction:
    row = answerable(tx, request_id, user, kinds)
    record = leave_pending(tx, row, "cancelled", answer=None, by=user, now=now)
    if record is None:
        raise NotPending(must_find(tx, request_id)["status"])
    return record


def expire_due(tx: Tx, now: datetime, limit: int) -> int:
    """Expire one leased batch of requests whose deadline has passed."""
    rows = sql(tx).all(
        "SELECT * FROM interactions WHERE status = 'pending' AND expires_at <= ?"
        " ORDER BY expires_at LIMIT ?" + sql(tx).skip_locked,
        (to_millis(now), limit),
    )
    return sum(1 for row in rows if settle_expired(tx, row, now) is not None)


def settle_expired(tx: Tx, row: dict[str, Any], now: datetime) -> Interaction | None:
    """Apply the request's ``on_expire`` policy at its deadline, or expire it: None when it
    stays pending (extended) or another attempt settled it first."""
    decision, value = policies.on_expire(tx, row, now)
    if decision == "extended":
        return None
    if decision == "answer":
        via = policies.POLICY_VIA
        return leave_pending(tx, row, "answered", answer=value, by=None, now=now, via=via)
    if decision == "cancel":
        note = {"policy": "on_expire"}
        return leave_pending(tx, row, "cancelled", answer=None, by=None, now=now, note=note)
    return leave_pending(tx, row, "expired", answer=None, by=None, now=now)

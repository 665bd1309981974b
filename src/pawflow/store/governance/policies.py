"""Who answers a request, and what happens when nobody does.

A request may carry a policy (docs/governance.md): ``assignees`` (users and ``group:NAME``),
``requester_may_answer``, ``reassign_to``, ``claim_for``, ``required_approvals`` and
``reject`` (a quorum of ``confirm`` votes), ``remind_every``, ``escalate`` steps and
``on_expire``. It is read and checked when the request is made (a default answer that does
not fit the request is refused then), kept in ``request_policies`` next to the request, and
consulted in the transactions that answer, vote, claim and expire it."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from pawflow import durations
from pawflow.clock import from_millis, iso, to_millis
from pawflow.errors import FieldError, Forbidden, InvalidInput, NotFound
from pawflow.interactions import Kind, normalize_answer
from pawflow.records import DEFAULTED_VIA, Interaction
from pawflow.store.engine.database import Tx, sql
from pawflow.store.governance.votes import cast
from pawflow.store.ledger import audit
from pawflow.store.ledger.conversations import conversation_access, may_write
from pawflow.store.ledger.events import append_event
from pawflow.store.people import groups
from pawflow.store.reach import outbox

POLICY_KEYS = (
    "assignees",
    "requester_may_answer",
    "reassign_to",
    "claim_for",
    "required_approvals",
    "reject",
    "remind_every",
    "escalate",
    "on_expire",
)
POLICY_VIA = DEFAULTED_VIA
"""``answered_via`` of an answer the ``on_expire`` policy gave."""
DEFAULT_CLAIM = timedelta(hours=1)
NOTICE_EVENT = "interaction_notice"
Reason = Literal["remind", "escalate", "reassign", "claim", "release"]

CHANNEL_REASONS = frozenset({"remind", "escalate", "reassign"})
"""The notices that also go out by the recipients' channels."""


def notify(
    tx: Tx, row: dict[str, Any], recipients: list[str], reason: Reason, now: datetime
) -> None:
    """Tell ``recipients`` about the request ``row`` (a reminder, an escalation, a
    reassignment, a claim), in the transaction of the step.

    Every recipient's event stream shows an ``interaction_notice``; a reminder, an
    escalation or a reassignment also goes out by their channels (the outbox, in this same
    transaction: a notice is sent if and only if the step committed). A claim or a release
    is told in the clients only.
    """
    data = {"request_id": row["id"], "reason": reason, "recipients": sorted(set(recipients))}
    append_event(tx, recipients, row["conversation_id"], NOTICE_EVENT, data, now)
    if reason in CHANNEL_REASONS:
        outbox.renotify(tx, Interaction.from_row(row), recipients, now)


def _span(value: object, name: str) -> timedelta:
    try:
        return durations.setting_duration(value)  # type: ignore[arg-type]
    except InvalidInput as exc:
        raise InvalidInput(f"{name} is invalid", [FieldError(name, exc.message)]) from exc


def _millis(span: timedelta) -> int:
    return int(span.total_seconds() * 1000)


@dataclass(frozen=True)
class Policy:
    """A request's policy as checked; durations as spans."""

    assignees: list[str] = field(default_factory=list)
    requester_may_answer: bool = True
    reassign_to: list[str] | None = None
    claim_for: timedelta = DEFAULT_CLAIM
    required_approvals: int | None = None
    reject: Literal["first", "majority"] = "first"
    remind_every: timedelta | None = None
    escalate: list[tuple[timedelta, list[str]]] = field(default_factory=list)
    on_expire: dict[str, Any] | None = None


def _steps(value: object, name: str) -> list[tuple[timedelta, list[str]]]:
    if not isinstance(value, list) or not value or len(value) > 20:
        raise InvalidInput(f"{name} is invalid", [FieldError(name, "a list of 1 to 20 steps")])
    steps: list[tuple[timedelta, list[str]]] = []
    for index, step in enumerate(value):
        where = f"{name}[{index}]"
        if not isinstance(step, Mapping) or set(step) - {"after", "to"} or "to" not in step:
            raise InvalidInput(f"{name} is invalid", [FieldError(where, "{after, to}")])
        after = _span(step.get("after", "0s" if name != "escalate" else None), f"{where}.after")
        steps.append((after, groups.check_assignees(step["to"], f"{where}.to")))
    return steps


def read_policy(raw: Mapping[str, Any] | None) -> Policy | None:
    """Check a policy as a caller gives it (unknown keys are refused); None when empty."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise InvalidInput("the policy must be an object")
    given = {key: value for key, value in raw.items() if value is not None}
    unknown = sorted(set(given) - set(POLICY_KEYS))
    if unknown:
        raise InvalidInput(
            f"unknown policy keys: {', '.join(unknown)}",
            [FieldError(key, f"one of {', '.join(POLICY_KEYS)}") for key in unknown],
        )
    if not given:
        return None
    assignees = groups.check_assignees(given["assignees"]) if "assignees" in given else []
    may = given.get("requester_may_answer", True)
    if not isinstance(may, bool):
        raise InvalidInput(
            "requester_may_answer is invalid", [FieldError("requester_may_answer", "a boolean")]
        )
    quorum = given.get("required_approvals")
    if quorum is not None and (
        isinstance(quorum, bool) or not isinstance(quorum, int) or not 1 <= quorum <= 100
    ):
        raise InvalidInput(
            "required_approvals is invalid", [FieldError("required_approvals", "1 to 100")]
        )
    if quorum is not None and not assignees:
        raise InvalidInput(
            "required_approvals needs assignees", [FieldError("assignees", "required")]
        )
    reject = given.get("reject", "first")
    if reject not in ("first", "majority"):
        raise InvalidInput("reject is invalid", [FieldError("reject", "first or majority")])
    return Policy(
        assignees=assignees,
        requester_may_answer=may,
        reassign_to=(
            groups.check_assignees(given["reassign_to"], "reassign_to")
            if "reassign_to" in given
            else None
        ),
        claim_for=_span(given["claim_for"], "claim_for") if "claim_for" in given else DEFAULT_CLAIM,
        required_approvals=quorum,
        reject=reject,
        remind_every=_span(given["remind_every"], "remind_every")
        if "remind_every" in given
        else None,
        escalate=_steps(given["escalate"], "escalate") if "escalate" in given else [],
        on_expire=_on_expire(given["on_expire"]) if "on_expire" in given else None,
    )


def _on_expire(value: object) -> dict[str, Any]:
    """``cancel``, ``{answer: V}`` or ``{escalate: [...], extend: DURATION}``."""
    problem = InvalidInput(
        "on_expire is invalid",
        [FieldError("on_expire", "cancel, {answer: VALUE} or {escalate: [...], extend: DURATION}")],
    )
    if value == "cancel" or value == {"cancel": True}:
        return {"cancel": True}
    if not isinstance(value, Mapping):
        raise problem
    if set(value) == {"answer"}:
        return {"answer": value["answer"]}
    if value and set(value) <= {"escalate", "extend"} and "extend" in value:
        extend = _span(value["extend"], "on_expire.extend")
        to = (
            groups.check_assignees(value["escalate"], "on_expire.escalate")
            if "escalate" in value
            else []
        )
        return {"escalate": to, "extend_ms": _millis(extend), "extend": value["extend"]}
    raise problem


def attach(
    tx: Tx,
    request_id: str,
    *,
    kind: Kind,
    schema: dict[str, Any],
    owner: str,
    requester: str,
    policy: Policy | None,
    created: datetime,
    deadline: datetime | None,
) -> None:
    """Keep a new request's policy (checked against its kind and schema) and audit it."""
    detail: dict[str, Any] = {"requester": requester}
    if policy is not None:
        if policy.required_approvals is not None and kind != Kind.CONFIRM:
            raise InvalidInput(
                "required_approvals is for confirm requests",
                [FieldError("required_approvals", "only for kind confirm")],
            )
        on_expire = policy.on_expire
        if on_expire is not None and "answer" in on_expire:
            if deadline is None:
                raise InvalidInput(
                    "on_expire needs a deadline",
                    [FieldError("on_expire", "an answer on expiry needs expires_in or expires_at")],
                )
            try:
                value = normalize_answer(
                    kind, schema, on_expire["answer"], resolve_file=lambda _: None
                )
            except InvalidInput as exc:
                raise InvalidInput(
                    f"on_expire answer does not fit the request: {exc.message}",
                    [FieldError("on_expire.answer", e.message) for e in exc.errors]
                    or [FieldError("on_expire.answer", exc.message)],
                ) from exc
            on_expire = {"answer": value}
        at = to_millis(created)
        first_step = policy.escalate[0][0] if policy.escalate else None
        sql(tx).execute(
            "INSERT INTO request_policies (request_id, assignees, reassign_to,"
            " requester_may_answer, required_approvals, reject_rule, on_expire, claim_ttl_ms,"
            " remind_every_ms,"
            " next_remind_at, escalate, next_escalation_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                request_id,
                json.dumps(policy.assignees),
                None if policy.reassign_to is None else json.dumps(policy.reassign_to),
                1 if policy.requester_may_answer else 0,
                policy.required_approvals,
                policy.reject,
                None if on_expire is None else json.dumps(on_expire),
                _millis(policy.claim_for),
                None if policy.remind_every is None else _millis(policy.remind_every),
                None if policy.remind_every is None else at + _millis(policy.remind_every),
                json.dumps([[_millis(after), to] for after, to in policy.escalate])
                if policy.escalate
                else None,
                None if first_step is None else at + _millis(first_step),
            ),
        )
        if policy.assignees:
            detail["assignees"] = policy.assignees
    audit.record(tx, request_id, "created", created, actor=owner, via=requester, detail=detail)


COLUMNS = (
    "request_id",
    "assignees",
    "reassign_to",
    "requester_may_answer",
    "required_approvals",
    "reject_rule",
    "on_expire",
    "extended",
    "claim_ttl_ms",
    "claimed_by",
    "claim_expires_at",
    "remind_every_ms",
    "next_remind_at",
    "escalate",
    "escalation_step",
    "next_escalation_at",
)
"""``request_policies``' columns, none named as one of ``interactions`` (:func:`split`)."""


def load(tx: Tx, request_id: str) -> dict[str, Any] | None:
    """The request's policy row, JSON decoded; None for a request without one."""
    row = sql(tx).one("SELECT * FROM request_policies WHERE request_id = ?", (request_id,))
    return None if row is None else decode(row)


def decode(row: dict[str, Any]) -> dict[str, Any]:
    """A policy row as read, with its JSON decoded (in place)."""
    for key in ("assignees", "reassign_to", "on_expire", "escalate"):
        row[key] = None if row[key] is None else json.loads(row[key])
    return row


def split(row: dict[str, Any]) -> dict[str, Any] | None:
    """Take a joined policy's columns out of a request's ``row``: the policy, decoded (None
    for a request without one)."""
    policy = {key: row.pop(key) for key in COLUMNS}
    return None if policy["request_id"] is None else decode(policy)


def extends_by(policy: dict[str, Any] | None) -> bool:
    """Whether ``policy`` moves the request's deadline on once it passes, rather than
    settling it."""
    rule = None if policy is None else policy["on_expire"]
    return rule is not None and "extend_ms" in rule and not policy["extended"]  # type: ignore[index]


class Unread:
    """A policy not read yet (None is a request without one)."""


UNREAD = Unread()


def claim_holder(policy: dict[str, Any], now: datetime) -> str | None:
    holder = policy["claimed_by"]
    if holder is None or (policy["claim_expires_at"] or 0) <= to_millis(now):
        return None
    return str(holder)


def deciders(tx: Tx, row: dict[str, Any], policy: dict[str, Any]) -> list[str]:
    """The people who may answer now (delegates aside), the requester left out if barred."""
    people = groups.expand(tx, policy["assignees"] or [])
    if not policy["requester_may_answer"]:
        people = [p for p in people if p != row["owner"]]
    return people


def acting_for(
    tx: Tx, row: dict[str, Any], policy: dict[str, Any], user: str, now: datetime
) -> str | None:
    """Whom ``user`` answers as: themselves, someone who delegated to them, or no one."""
    if user == row["owner"] and not policy["requester_may_answer"]:
        return None
    if not policy["assignees"]:
        return user
    people = deciders(tx, row, policy)
    if user in people:
        return user
    for principal in groups.principals_of(tx, user, now):
        if principal in people:
            return principal
    return None


def may_see(
    tx: Tx,
    row: dict[str, Any],
    user: str,
    now: datetime,
    policy: dict[str, Any] | Unread | None = UNREAD,
    members: Mapping[str, str] | None = None,
) -> bool:
    """The requester, any member of the conversation, and whoever may decide (``policy``
    and the conversation's ``members``: as read already, if they were)."""
    if row["owner"] == user:
        return True
    if members is not None:
        if user in members:
            return True
    elif conversation_access(tx, row["conversation_id"], user) is not None:
        return True
    if isinstance(policy, Unread):
        policy = load(tx, row["id"])
    return (
        policy is not None
        and bool(policy["assignees"])
        and acting_for(tx, row, policy, user, now) is not None
    )


def require_decider(
    tx: Tx, row: dict[str, Any], policy: dict[str, Any], user: str, now: datetime
) -> str:
    """Whom ``user`` answers as; ``Forbidden`` (saying whom it waits for) when they may not.

    The caller has checked that ``user`` may see the request at all.
    """
    principal = acting_for(tx, row, policy, user, now)
    waiting = list(policy["assignees"] or [])
    if principal is None:
        if user == row["owner"] and not policy["requester_may_answer"]:
            raise Forbidden(
                "the requester may not answer their own request: it waits for "
                + ", ".join(waiting),
                waiting,
            )
        raise Forbidden(f"this request waits for {', '.join(waiting)}", waiting)
    holder = claim_holder(policy, now)
    if holder is not None and holder not in (user, principal):
        raise Forbidden(f"this request is being handled by {holder}", [holder])
    return principal


ExpireDecision = Literal["expire", "answer", "cancel", "extended"]


def on_expire(tx: Tx, row: dict[str, Any], now: datetime) -> tuple[ExpireDecision, Any]:
    """What the request's ``on_expire`` policy does at its deadline, in the settling
    transaction: ``("answer", value)``, ``("cancel", None)``, ``("extended", None)`` (the
    request stays pending with more assignees and a later deadline: once), or
    ``("expire", None)``."""
    policy = load(tx, row["id"])
    rule = None if policy is None else policy["on_expire"]
    if policy is None or rule is None:
        return "expire", None
    if "answer" in rule:
        return "answer", rule["answer"]
    if rule.get("cancel"):
        return "cancel", None
    if policy["extended"]:
        return "expire", None
    later = to_millis(now) + int(rule["extend_ms"])
    moved = sql(tx).one(
        "UPDATE interactions SET expires_at = ? WHERE id = ? AND status = 'pending' RETURNING id",
        (later, row["id"]),
    )
    if moved is None:
        return "expire", None
    sql(tx).execute("UPDATE request_policies SET extended = 1 WHERE request_id = ?", (row["id"],))
    added = add_assignees(tx, row["id"], policy, rule.get("escalate") or [])
    detail = {"until": iso(from_millis(later)), "extend": rule.get("extend")}
    audit.record(tx, row["id"], "extended", now, via=POLICY_VIA, detail=detail)
    if added:
        audit.record(tx, row["id"], "escalated", now, via=POLICY_VIA, detail={"to": added})
        notify(tx, row, groups.expand(tx, added), "escalate", now)
    return "extended", added


def extends(tx: Tx, request_id: str) -> bool:
    """Whether the request's deadline, once past, is moved on rather than settled."""
    return extends_by(load(tx, request_id))


def add_assignees(tx: Tx, request_id: str, policy: dict[str, Any], more: list[str]) -> list[str]:
    """Add ``more`` to the request's assignees; returns those that were new."""
    current = list(policy["assignees"] or [])
    added = [entry for entry in more if entry not in current]
    if added:
        policy["assignees"] = current + added
        sql(tx).execute(
            "UPDATE request_policies SET assignees = ? WHERE request_id = ?",
            (json.dumps(policy["assignees"]), request_id),
        )
    return added


def waited(row: dict[str, Any]) -> str:
    """How long the request waited, in words (``3 days``)."""
    span = (int(row["expires_at"] or row["created_at"]) - int(row["created_at"])) // 1000
    for unit, seconds in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if (span >= seconds and span % seconds == 0) or span >= seconds * 2:
            count = span // seconds
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{span} second{'' if span == 1 else 's'}"


def summary(tx: Tx, row: dict[str, Any], now: datetime) -> dict[str, Any] | None:
    """The request's policy and its state, as clients show it; None without a policy."""
    policy = load(tx, row["id"])
    if policy is None:
        return None
    votes = list(cast(tx, row["id"]).values())
    yes = sum(1 for v in votes if v["vote"] is True)
    holder = claim_holder(policy, now)
    found: dict[str, Any] = {
        "assignees": policy["assignees"],
        "requester_may_answer": bool(policy["requester_may_answer"]),
        "claimed_by": holder,
        "claim_expires_at": None
        if holder is None
        else iso(from_millis(int(policy["claim_expires_at"]))),
        "on_expire": None
        if policy["on_expire"] is None
        else {k: v for k, v in policy["on_expire"].items() if k != "extend_ms"},
        "escalation_step": int(policy["escalation_step"]),
    }
    if policy["required_approvals"] is not None:
        needed = int(policy["required_approvals"])
        found["required_approvals"] = needed
        found["approvals"] = yes
        found["votes"] = votes
        found["progress"] = f"{yes} of {needed} approvals"
    return found


def decider(
    tx: Tx,
    row: dict[str, Any] | None,
    user: str,
    kinds: Collection[str] | None,
    now: datetime,
    policy: dict[str, Any] | Unread | None = UNREAD,
    members: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any] | None, str]:
    """Who may answer ``row``: its policy and whom ``user`` answers as.

    Without assignees the requester and the conversation's writers may (and no one else
    learns it exists: ``NotFound``); with assignees, those who may see the request but not
    decide it get ``Forbidden`` naming whom it waits for, while it is pending. The
    ``policy`` and the conversation's ``members`` are read here unless given (as read with
    the request).
    """
    if row is None or (kinds is not None and row["kind"] not in kinds):
        raise NotFound()
    if isinstance(policy, Unread):
        policy = load(tx, row["id"])
    if policy is None or not policy["assignees"]:
        if members is not None:
            writer = members.get(user) in ("owner", "write")
        else:
            writer = may_write(tx, row["conversation_id"], user)
        if row["owner"] != user and not writer:
            raise NotFound()
    elif not may_see(tx, row, user, now, policy, members):
        raise NotFound()
    if policy is None or row["status"] != "pending":
        return policy, user
    return policy, require_decider(tx, row, policy, user, now)


def policy_of(tx: Tx, request_id: str) -> dict[str, Any]:
    found = load(tx, request_id)
    if found is None:
        raise NotFound()
    return found

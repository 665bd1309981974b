"""Who answers and what happens when nobody does, through the HTTP API, on both backends,
with a fake clock: assignees, groups, delegates, claims, on_expire, quorum, reminders,
escalation and the audit trail (docs/governance.md)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pawflow.clock import FakeClock
from pawflow.durations import parse_deadline
from pawflow.server.testing import LiveServer, live_server
from pawflow.testing import temporary_store
from tests.conftest import require_postgres
from tests.logs import tracebacks
from tests.server.conftest import QUIET, Api, unique

ADMIN = "root"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def served(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[LiveServer, FakeClock]]:
    if request.param == "postgres":
        require_postgres()
    clock = FakeClock()
    with (
        temporary_store(str(request.param), tmp_path, clock=clock) as store,
        live_server(store, settings=QUIET.replace(admins=(ADMIN,))) as server,
    ):
        yield server, clock


class People:
    def __init__(self, server: LiveServer) -> None:
        self.server = server
        self.made: dict[str, Api] = {}
        self.suffix = unique("")

    def __getitem__(self, name: str) -> Api:
        if name not in self.made:
            self.made[name] = Api(self.server, name + self.suffix)
        return self.made[name]

    def name(self, name: str) -> str:
        return name + self.suffix


@pytest.fixture
def people(served: tuple[LiveServer, FakeClock]) -> Iterator[People]:
    found = People(served[0])
    yield found
    for api in found.made.values():
        api.close()


def _setup(people: People, **policy: Any) -> tuple[str, dict[str, Any]]:
    """A conversation of req shared for writing with carl, and a request in it."""
    req = people["req"]
    conversation = req.conversation()
    people.server.store.share_conversation(
        conversation, user=req.user, with_user=people.name("carl"), access="write"
    )
    asked = req.ask(conversation, **policy)
    return conversation, asked


def _answer(api: Api, request_id: str, answer: Any) -> Any:
    return api.call("respond_interaction", request_id=request_id, answer=answer)


def test_only_an_assignee_answers_and_others_learn_whom_it_waits_for(people: People) -> None:
    ada = people.name("ada")
    _, asked = _setup(people, assignees=[ada], requester_may_answer=False)
    refused = _answer(people["carl"], asked["id"], True)  # a collaborator, not an assignee
    assert refused.status_code == 403
    assert refused.json()["waiting_for"] == [ada]
    assert ada in refused.json()["error"]
    self_approval = _answer(people["req"], asked["id"], True)
    assert self_approval.status_code == 403
    stranger = _answer(people["zed"], asked["id"], True)
    unknown = _answer(people["zed"], "no-such-request", True)
    assert (stranger.status_code, stranger.json()) == (unknown.status_code, unknown.json())
    assert stranger.status_code == 404
    done = _answer(people["ada"], asked["id"], True)
    assert done.status_code == 200, done.text
    record = done.json()["interaction"]
    assert (record["answer"], record["answered_by"], record["answered_via"]) == (True, ada, "api")
    trail = people["req"].ok("get_interaction", request_id=asked["id"])["audit"]
    assert [(e["action"], e["actor"]) for e in trail] == [
        ("created", people.name("req")),
        ("answered", ada),
    ]


def test_a_group_member_answers_and_a_delegate_answers_for_alice(people: People) -> None:
    store = people.server.store
    with store.unit() as u:
        u.groups.add_members(people.name("leads"), [people.name("lee")])
    _, by_group = _setup(people, assignees=[f"group:{people.name('leads')}"])
    assert _answer(people["lee"], by_group["id"], True).status_code == 200

    alice, bob = people.name("alice"), people.name("bob")
    _, for_alice = _setup(people, assignees=[alice])
    assert _answer(people["bob"], for_alice["id"], True).status_code == 404
    with store.unit() as u:
        u.groups.delegate(alice, to=bob, until=store.now() + timedelta(days=2))
    inbox = people["bob"].ok("list_inbox", filter="mine")["items"]
    assert [item["interaction"]["id"] for item in inbox] == [for_alice["id"]]
    done = _answer(people["bob"], for_alice["id"], False)
    assert done.status_code == 200, done.text
    assert done.json()["interaction"]["answered_by"] == bob
    trail = people["req"].ok("get_interaction", request_id=for_alice["id"])["audit"]
    assert trail[-1]["detail"] == {"for": alice}


def test_claim_release_reassign_and_a_claim_that_runs_out(
    people: People, served: tuple[LiveServer, FakeClock]
) -> None:
    clock = served[1]
    ada, lee, cto = people.name("ada"), people.name("lee"), people.name("cto")
    _, asked = _setup(people, assignees=[ada, lee], reassign_to=[cto], claim_for="1h")
    claimed = people["ada"].ok("claim_interaction", request_id=asked["id"])
    assert claimed["policy"]["claimed_by"] == ada
    held = _answer(people["lee"], asked["id"], True)
    assert held.status_code == 403
    assert "being handled by" in held.json()["error"]
    assert people["lee"].call("release_interaction", request_id=asked["id"]).status_code == 403
    people["ada"].ok("release_interaction", request_id=asked["id"])
    people["lee"].ok("claim_interaction", request_id=asked["id"])
    clock.advance(timedelta(hours=2))  # the claim ran out: anyone assigned may answer again
    mine = people["ada"].ok("list_inbox", filter="all")["items"]
    assert [item["why"] for item in mine] == ["mine"]
    outside = people["ada"].call(
        "reassign_interaction", request_id=asked["id"], to=[people.name("zed")]
    )
    assert outside.status_code == 403
    moved = people["ada"].ok("reassign_interaction", request_id=asked["id"], to=[cto])
    assert moved["policy"]["assignees"] == [cto]
    assert _answer(people["carl"], asked["id"], True).status_code == 403
    assert _answer(people["ada"], asked["id"], True).status_code == 404  # no longer hers
    assert _answer(people["cto"], asked["id"], True).status_code == 200
    actions = [e["action"] for e in moved["audit"]]
    assert actions == ["created", "claimed", "released", "claimed", "reassigned"]


def test_on_expire_checks_its_default_when_asked(people: People) -> None:
    ada = people.name("ada")
    conversation = people["req"].conversation()
    bad = people["req"].call(
        "request_interaction",
        conversation_id=conversation,
        kind="confirm",
        message="Ship?",
        expires_in="3d",
        assignees=[ada],
        on_expire={"answer": "maybe"},
    )
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["path"].startswith("on_expire")
    assert people["req"].ok("list_interactions")["interactions"] == []


def test_on_expire_answers_once_when_an_answer_races_the_deadline(
    people: People, served: tuple[LiveServer, FakeClock]
) -> None:
    server, clock = served
    ada = people.name("ada")
    _, asked = _setup(people, assignees=[ada], expires_in="3d", on_expire={"answer": False})
    clock.advance(timedelta(days=3, seconds=1))
    late = _answer(people["ada"], asked["id"], True)  # the deadline passed: the policy wins
    assert late.status_code == 409
    assert late.json()["status"] == "answered"
    assert server.store.sweep()["expired"] == 0
    record = people["req"].ok("get_interaction", request_id=asked["id"])
    found = record["interaction"]
    assert (found["answer"], found["answered_by"], found["answered_via"]) == (
        False,
        None,
        "policy:on_expire",
    )
    assert [e["action"] for e in record["audit"]] == ["created", "defaulted"]
    fired = server.store.get_signal(found["signal_id"])
    assert fired is not None
    assert fired.value["answered_via"] == "policy:on_expire"
    assert fired.value["waited"] == "3 days"


def test_on_expire_cancel_and_escalate_then_extend(
    people: People, served: tuple[LiveServer, FakeClock]
) -> None:
    server, clock = served
    ada, cto = people.name("ada"), people.name("cto")
    _, cancelled = _setup(people, assignees=[ada], expires_in="1d", on_expire="cancel")
    _, extended = _setup(
        people, assignees=[ada], expires_in="1d", on_expire={"escalate": [cto], "extend": "1d"}
    )
    clock.advance(timedelta(days=1, seconds=1))
    server.store.sweep()
    first = people["req"].ok("get_interaction", request_id=cancelled["id"])["interaction"]
    assert first["status"] == "cancelled"
    second = people["req"].ok("get_interaction", request_id=extended["id"])
    assert second["interaction"]["status"] == "pending"
    assert second["policy"]["assignees"] == [ada, cto]
    assert [e["action"] for e in second["audit"]] == ["created", "extended", "escalated"]
    clock.advance(timedelta(days=1))
    server.store.sweep()  # extended once: now it expires
    last = people["req"].ok("get_interaction", request_id=extended["id"])["interaction"]
    assert last["status"] == "expired"


def test_a_two_of_three_quorum(people: People) -> None:
    names = [people.name(n) for n in ("ann", "ben", "cat")]
    _, asked = _setup(people, assignees=names, required_approvals=2)
    first = _answer(people["ann"], asked["id"], True)
    assert first.json()["interaction"]["status"] == "pending"
    again = _answer(people["ann"], asked["id"], False)  # a repeated vote changes nothing
    assert again.status_code == 409, again.text
    ann = people.name("ann")
    assert again.json()["vote"] == {**again.json()["vote"], "voter": ann, "by": ann, "vote": True}
    shown = people["req"].ok("get_interaction", request_id=asked["id"])["policy"]
    assert shown["progress"] == "1 of 2 approvals"
    done = _answer(people["ben"], asked["id"], True).json()["interaction"]
    assert (done["status"], done["answer"]) == ("answered", True)
    _, rejected = _setup(people, assignees=names, required_approvals=2)
    assert _answer(people["ann"], rejected["id"], True).status_code == 200
    no = _answer(people["cat"], rejected["id"], False).json()["interaction"]
    assert (no["status"], no["answer"]) == ("answered", False)
    majority = _setup(people, assignees=names, required_approvals=2, reject="majority")[1]
    assert (
        _answer(people["ann"], majority["id"], False).json()["interaction"]["status"] == "pending"
    )
    last = _answer(people["ben"], majority["id"], False).json()["interaction"]
    assert (last["status"], last["answer"]) == ("answered", False)
    not_confirm = people["req"].call(
        "request_interaction",
        conversation_id=people["req"].conversation(),
        kind="text",
        message="Why?",
        assignees=names,
        required_approvals=2,
    )
    assert not_confirm.status_code == 422


@pytest.mark.parametrize("alice_first", [True, False], ids=["alice-first", "bob-first"])
def test_an_assignee_and_her_delegate_meet_no_quorum(
    people: People, alice_first: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """With two approvals needed from alice and dave, alice and bob (her delegate) are one
    person: the second of them gets a 409 carrying the vote that stands, and dave decides.
    Neither refusal (nor carl's 403: he only writes in the conversation) logs a traceback."""
    caplog.set_level(logging.INFO)
    store = people.server.store
    alice, bob, dave = (people.name(n) for n in ("alice", "bob", "dave"))
    _, asked = _setup(people, assignees=[alice, dave], required_approvals=2)
    with store.unit() as u:
        u.groups.delegate(alice, to=bob, until=store.now() + timedelta(days=2))
    first, second = ("alice", "bob") if alice_first else ("bob", "alice")
    assert _answer(people[first], asked["id"], True).json()["interaction"]["status"] == "pending"
    refused = _answer(people[second], asked["id"], True)
    assert refused.status_code == 409, refused.text
    body = refused.json()
    assert (body["vote"]["voter"], body["vote"]["by"]) == (alice, people.name(first))
    assert alice in body["error"]
    shown = people["req"].ok("get_interaction", request_id=asked["id"])
    assert shown["interaction"]["status"] == "pending"
    assert shown["policy"]["progress"] == "1 of 2 approvals"
    voted = [s for s in shown["audit"] if s["action"] == "voted"]
    assert [(s["actor"], s["detail"].get("for")) for s in voted] == [
        (people.name(first), None if first == "alice" else alice)
    ]
    carl = _answer(people["carl"], asked["id"], True)
    assert carl.status_code == 403 and carl.json()["waiting_for"] == [alice, dave]
    done = _answer(people["dave"], asked["id"], True).json()["interaction"]
    assert (done["status"], done["answer"], done["answered_by"]) == ("answered", True, dave)
    assert tracebacks(caplog.records) == []


def test_reminders_and_escalation_fire_once_each(
    people: People, served: tuple[LiveServer, FakeClock]
) -> None:
    server, clock = served
    ada, lead, cto = people.name("ada"), people.name("lead"), people.name("cto")
    _, asked = _setup(
        people,
        assignees=[ada],
        remind_every="1d",
        escalate=[{"after": "4h", "to": [lead]}, {"after": "1d", "to": [cto]}],
    )
    for hours in (1, 4, 4, 12, 24, 24, 30):
        target = asked_at(asked) + timedelta(hours=hours)
        if target > clock.now():
            clock.advance(target - clock.now())
        server.store.sweep()
        server.store.sweep()
    trail = people["req"].ok("get_interaction", request_id=asked["id"])["audit"]
    steps = [(e["action"], e["detail"].get("to")) for e in trail]
    assert steps == [
        ("created", None),
        ("escalated", [lead]),
        ("escalated", [cto]),
        ("reminded", [ada, lead, cto]),
    ]
    notices = [e for e in server.store.events_after(cto) if e.type == "interaction_notice"]
    assert [e.data["reason"] for e in notices] == ["escalate", "remind"]


def asked_at(asked: dict[str, Any]) -> datetime:
    return parse_deadline(asked["created_at"])


def test_the_inbox_sorts_by_due_time_and_filters(people: People) -> None:
    ada = people.name("ada")
    with people.server.store.unit() as u:
        u.groups.add_members(people.name("ops"), [ada])
    _, later = _setup(people, assignees=[ada], expires_in="2d")
    _, sooner = _setup(people, assignees=[f"group:{people.name('ops')}"], expires_in="1d")
    _, never = _setup(people, assignees=[ada])
    everything = people["ada"].ok("list_inbox")["items"]
    assert [i["interaction"]["id"] for i in everything] == [sooner["id"], later["id"], never["id"]]
    assert [i["why"] for i in everything] == ["groups", "mine", "mine"]
    people["ada"].ok("claim_interaction", request_id=later["id"])
    claimed = people["ada"].ok("list_inbox", filter="claimed")["items"]
    assert [i["interaction"]["id"] for i in claimed] == [later["id"]]
    groups_only = people["ada"].ok("list_inbox", filter="groups")["items"]
    assert [i["interaction"]["id"] for i in groups_only] == [sooner["id"]]


def test_admins_manage_groups_and_users_delegate_for_themselves(people: People) -> None:
    admin = Api(people.server, ADMIN)
    try:
        lee, lou = people.name("lee"), people.name("lou")
        added = admin.ok("add_to_group", name="ops", users=[lee, lou])
        assert added["groups"]["ops"] == [lee, lou]
        left = admin.ok("remove_from_group", name="ops", users=[lou])
        assert left["groups"]["ops"] == [lee]
        assert admin.ok("list_groups")["groups"] == {"ops": [lee]}
        refused = people["lee"].call("add_to_group", name="ops", users=[people.name("me")])
        assert refused.status_code == 403
        assert people["lee"].call("list_groups").status_code == 403
        bob = people.name("bob")
        mine = people["alice"].ok("delegate", to=bob, until="2099-01-01T00:00:00Z")
        assert mine["delegations"] == [
            {
                "principal": people.name("alice"),
                "delegate": bob,
                "until": "2099-01-01T00:00:00.000Z",
            }
        ]
        other = people["lee"].call(
            "delegate", principal=people.name("alice"), to=lee, until="2099-01-01T00:00:00Z"
        )
        assert other.status_code == 403
        ok = admin.ok("delegate", principal=lou, to=lee, until="2099-01-01T00:00:00Z")
        assert ok["delegations"][0]["delegate"] == lee
    finally:
        admin.close()


def test_an_answer_after_the_deadline_of_a_request_that_extends_is_taken(
    people: People, served: tuple[LiveServer, FakeClock]
) -> None:
    clock = served[1]
    ada, cto = people.name("ada"), people.name("cto")
    _, asked = _setup(
        people, assignees=[ada], expires_in="1d", on_expire={"escalate": [cto], "extend": "1d"}
    )
    clock.advance(timedelta(days=1, seconds=1))  # no sweep yet: the answer finds it due
    done = _answer(people["ada"], asked["id"], True)
    assert done.status_code == 200, done.text
    trail = people["req"].ok("get_interaction", request_id=asked["id"])["audit"]
    assert [e["action"] for e in trail] == ["created", "extended", "escalated", "answered"]


def _documented_body() -> dict[str, Any]:
    """The request_interaction body docs/governance.md shows, as written there."""
    page = (Path(__file__).parents[2] / "docs" / "governance.md").read_text(encoding="utf-8")
    [body] = re.findall(r"^```json\n(.*?)^```", page, re.S | re.M)
    found: dict[str, Any] = json.loads(body)
    return found


def test_the_documented_body_asks_with_its_policy_and_a_nested_one_says_where_it_goes(
    people: People,
) -> None:
    req = people["req"]
    body = _documented_body()
    assert body["assignees"] == ["ada", "group:leads"]
    body["conversation_id"] = req.conversation()
    asked = req.call("request_interaction", **body)
    assert asked.status_code == 200, asked.text
    request_id = asked.json()["interaction"]["id"]
    policy = req.ok("get_interaction", request_id=request_id)["policy"]
    assert policy["assignees"] == ["ada", "group:leads"]
    assert policy["requester_may_answer"] is False

    nested = {key: body[key] for key in ("conversation_id", "kind", "message", "expires_in")}
    nested["policy"] = {key: body[key] for key in ("assignees", "on_expire")}
    refused = req.call("request_interaction", **nested)
    assert refused.status_code == 422
    [error] = refused.json()["errors"]
    assert error["path"] == "policy"
    assert error["message"].startswith(
        "the policy's fields go at the top of the body, beside kind and message, not under"
        " policy: assignees, requester_may_answer, reassign_to, claim_for,"
    )
    assert "Extra inputs" not in refused.text

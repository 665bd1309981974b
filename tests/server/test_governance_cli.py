"""The accountability commands: groups, delegation, the audit export (on a store) and the
assignees' inbox and claims (over HTTP)."""

from __future__ import annotations

import csv
import io
import json
import logging
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from pawflow.cli import app
from pawflow.clock import FakeClock
from pawflow.server.testing import live_server
from pawflow.store import Question, open_store
from pawflow.testing import temporary_store
from tests.logs import tracebacks
from tests.server.conftest import QUIET

runner = CliRunner()


def test_groups_delegation_inbox_claim_and_the_audit_export(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'p.db'}"
    added = runner.invoke(app, ["groups", "add", "leads", "lee", "lou", "--db", db])
    assert added.exit_code == 0, added.output
    assert "leads: lee, lou" in added.output
    listed = runner.invoke(app, ["groups", "list", "--json", "--db", db])
    assert json.loads(listed.output) == {"groups": {"leads": ["lee", "lou"]}}
    bad = runner.invoke(app, ["groups", "add", "no such", "x", "--db", db])
    assert bad.exit_code == 2
    delegated = runner.invoke(
        app, ["users", "delegate", "alice", "--to", "bob", "--until", "2099-01-01", "--db", db]
    )
    assert delegated.exit_code == 0, delegated.output
    assert "bob answers for alice until 2099-01-01" in delegated.output

    clock = FakeClock()
    with open_store(db, clock=clock) as store, live_server(store, settings=QUIET) as server:
        conversation = store.create_conversation("req")
        asked = store.ask(
            Question(
                "req",
                conversation.id,
                "confirm",
                "Ship?",
                policy={"assignees": ["alice", "group:leads"]},
            )
        ).interaction
        common = ["--server", server.url]
        bob = {"PAWFLOW_TOKEN": server.token("bob")}
        inbox = runner.invoke(app, ["inbox", "--assigned", "mine", "--json", *common], env=bob)
        assert inbox.exit_code == 0, inbox.output
        assert [i["id"] for i in json.loads(inbox.output)["interactions"]] == [asked.id]
        lou = {"PAWFLOW_TOKEN": server.token("lou")}
        claimed = runner.invoke(app, ["claim", asked.id, *common], env=lou)
        assert claimed.exit_code == 0, claimed.output
        assert "being handled by lou" in claimed.output
        held = runner.invoke(app, ["answer", asked.id, "yes", *common], env=bob)
        assert held.exit_code == 1
        assert "being handled by lou" in held.output
        done = runner.invoke(app, ["answer", asked.id, "yes", *common], env=lou)
        assert done.exit_code == 0, done.output

    exported = runner.invoke(app, ["audit", "export", "--since", "2000-01-01", "--db", db])
    assert exported.exit_code == 0, exported.output
    steps = [json.loads(line) for line in exported.output.splitlines()]
    assert [(s["action"], s["actor"], s["via"]) for s in steps] == [
        ("created", "req", "api"),
        ("claimed", "lou", "cli"),
        ("answered", "lou", "cli"),
    ]
    as_csv = runner.invoke(
        app, ["audit", "export", "--since", "2000-01-01", "--format", "csv", "--db", db]
    )
    rows = list(csv.DictReader(io.StringIO(as_csv.output)))
    assert [row["action"] for row in rows] == ["created", "claimed", "answered"]


def test_a_refused_answer_from_the_command_line_says_why(
    backend: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``pawflow answer`` by a requester who may not answer, and by a delegate whose principal
    voted already: exit 1 with the reason, nothing changed, no traceback."""
    caplog.set_level(logging.INFO)
    with (
        temporary_store(backend, tmp_path, clock=FakeClock()) as store,
        live_server(store, settings=QUIET) as server,
    ):
        tokens = {user: server.token(user) for user in ("req", "alice", "bob", "dave")}
        asked = store.ask(
            Question(
                "req",
                store.create_conversation("req").id,
                "confirm",
                "Ship?",
                policy={
                    "assignees": ["alice", "dave"],
                    "required_approvals": 2,
                    "requester_may_answer": False,
                },
            )
        ).interaction
        with store.unit() as u:
            u.groups.delegate("alice", to="bob", until=store.now() + timedelta(days=1))

        def answer(user: str, value: str) -> Result:
            common = ["--server", server.url]
            return runner.invoke(
                app, ["answer", asked.id, value, *common], env={"PAWFLOW_TOKEN": tokens[user]}
            )

        req = answer("req", "yes")
        said = " ".join(req.output.split())  # as printed, wrapped to the terminal
        assert req.exit_code == 1
        assert "Not yours to answer:" in said and "waits for alice, dave" in said
        alice = answer("alice", "yes")
        assert alice.exit_code == 0 and "waits for more approvals" in alice.output
        bob = answer("bob", "yes")  # alice's delegate: alice has voted
        assert bob.exit_code == 1
        assert "Already voted: alice has already voted yes" in " ".join(bob.output.split())
        with store.unit(write=False) as u:
            policy = u.accountability.details(asked.id, user="req")["policy"]
        assert policy["progress"] == "1 of 2 approvals"
        assert answer("dave", "yes").exit_code == 0
        assert store.get_interaction(asked.id, user="req").answer is True
    assert tracebacks(caplog.records) == []


def test_the_inbox_leads_with_what_waits_for_you_and_a_stranger_is_told_for_whom(
    backend: str, tmp_path: Path
) -> None:
    """``pawflow inbox`` lists what each may answer now; ``--all`` adds the requests that wait
    for others, saying for whom; ``pawflow answer`` by a member of the conversation who is
    not an assignee prints the 403's reason, not "Not found"."""
    with (
        temporary_store(backend, tmp_path, clock=FakeClock()) as store,
        live_server(store, settings=QUIET) as server,
    ):
        with store.unit() as u:
            u.groups.add_members("leads", ["lee"])
        conversation = store.create_conversation("req", title="Deploys").id
        store.share_conversation(conversation, user="req", with_user="carl", access="write")
        theirs = store.ask(
            Question(
                "req", conversation, "confirm", "Deploy?", policy={"assignees": ["group:leads"]}
            )
        ).interaction.id
        own = store.ask(Question("req", conversation, "confirm", "Lunch?")).interaction.id

        def run(user: str, *args: str) -> Result:
            common = ["--server", server.url]
            return runner.invoke(app, [*args, *common], env={"PAWFLOW_TOKEN": server.token(user)})

        def ids(user: str, *args: str) -> list[str]:
            done = run(user, "inbox", "--json", *args)
            assert done.exit_code == 0, done.output
            return [item["id"] for item in json.loads(done.output)["interactions"]]

        assert ids("lee") == [theirs]
        assert ids("req") == [own]
        assert ids("req", "--all") == [theirs, own]
        assert ids("req", "--mine") == [theirs, own]
        assert ids("lee", "--assigned", "groups") == [theirs]
        shown = " ".join(run("req", "inbox", "--all").output.split())
        assert "1 waiting for you · 1 for others" in shown
        assert "Waiting for group:leads" in shown
        refused = run("carl", "answer", theirs, "yes")
        said = " ".join(refused.output.split())
        assert refused.exit_code == 1
        assert "Not yours to answer: this request waits for group:leads" in said
        assert "Not found" in run("zed", "answer", theirs, "yes").output
        assert run("lee", "answer", theirs, "yes").exit_code == 0

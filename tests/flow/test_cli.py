"""``pawflow flow …``: run, deploy, list, stop, start, inject (docs/flows.md runs in test_docs)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from pawflow import FakeClock, open_store
from pawflow.cli import app
from pawflow.flow import FlowFile, FlowService
from pawflow.flow import deployments as deps
from pawflow.records import Interaction
from pawflow.testing import eventually

ROOT = Path(__file__).parents[2]
runner = CliRunner()


def test_run_reports_failures_and_json(tmp_path: Path) -> None:
    path = tmp_path / "wait.yaml"
    path.write_text("name: w\ntasks:\n  w: {type: durableWait, properties: {signal_id: s}}\n")
    result = runner.invoke(app, ["flow", "run", str(path), "-q"])
    assert result.exit_code == 1
    assert "at w by failure" in result.stdout
    assert "durableWait needs a deployed flow" in result.stdout
    result = runner.invoke(app, ["flow", "run", str(path), "-q", "--json", "-a", "x=1"])
    [ending] = json.loads(result.stdout)
    assert ending["attributes"]["x"] == "1"
    result = runner.invoke(app, ["flow", "run", str(path), "-a", "novalue"])
    assert result.exit_code == 1
    assert "--attr takes NAME=VALUE" in result.output


def test_run_with_a_conversation_publishes_there(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'p.db'}"
    with open_store(db) as store:
        conversation = store.create_conversation("alice").id
    path = tmp_path / "ask.yaml"
    path.write_text("tasks:\n  ask: {type: requestConfirmation, properties: {message: 'Go?'}}\n")
    result = runner.invoke(
        app, ["flow", "run", str(path), "-q", "--db", db, "--conversation", conversation]
    )
    assert result.exit_code == 0, result.output
    with open_store(db) as store:
        [question] = store.list_interactions(user="alice", status="pending")
        assert question.message == "Go?"


def test_deploy_list_stop_start_inject(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'p.db'}"
    with open_store(db) as store:
        conversation = store.create_conversation("alice").id
    flow = ROOT / "src" / "pawflow" / "demo" / "flows" / "expense_approval.yaml"

    result = runner.invoke(
        app, ["flow", "deploy", str(flow), "--conversation", conversation, "--db", db]
    )
    assert result.exit_code == 0, result.output
    deployment_id = result.stdout.splitlines()[-1]
    assert "expense-approval deployed for alice" in result.stdout

    result = runner.invoke(app, ["flow", "list", "--db", db])
    assert f"{deployment_id}  expense-approval  running  v1  user=alice" in result.stdout

    assert runner.invoke(app, ["flow", "stop", deployment_id, "--db", db]).exit_code == 0
    listed = json.loads(runner.invoke(app, ["flow", "list", "--db", db, "--json"]).stdout)
    assert listed[0]["status"] == "stopped"

    result = runner.invoke(app, ["flow", "inject", deployment_id, "--db", db, "-a", "who=al"])
    assert result.exit_code == 0, result.output
    assert "queued for task ask" in result.stdout

    # The CLI uses the real clock, and so does this server.
    with open_store(db) as store, FlowService(store, reconcile_interval=None) as svc:
        assert svc.instance(deployment_id) is None  # stopped: the FlowFile waits in the store
        assert runner.invoke(app, ["flow", "start", deployment_id, "--db", db]).exit_code == 0
        svc.reconcile()
        [form] = eventually(lambda: store.list_interactions(user="alice", status="pending"))
        assert form.kind == "form"
        assert form.requester.model_dump()["instance"] == deployment_id

    result = runner.invoke(app, ["flow", "deploy", str(flow), "--conversation", "nope", "--db", db])
    assert result.exit_code == 1
    assert "conversation not found" in result.output
    assert runner.invoke(app, ["flow", "stop", "nope", "--db", db]).exit_code == 1


def test_the_expense_example_end_to_end(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'p.db'}"
    clock = FakeClock()
    with open_store(db, clock=clock) as store, FlowService(store, reconcile_interval=None) as svc:
        conversation = store.create_conversation("alice").id
        text = (ROOT / "src" / "pawflow" / "demo" / "flows" / "expense_approval.yaml").read_text()
        deployment, _ = deps.deploy(store, text, conversation_id=conversation)
        svc.reconcile()
        for _ in range(2):
            deps.inject(store, deployment.id, FlowFile.create())

        def both_asked() -> list[Interaction] | None:
            found = store.list_interactions(user="alice", status="pending")
            return found if len(found) == 2 else None

        first, _second = eventually(both_asked)
        receipt = store.add_file("alice", "receipt.pdf", "application/pdf", b"%PDF-1.4")
        clock.advance("1d")
        store.respond_interaction(
            first.id,
            {"amount": "612.40", "reason": "Conference", "receipt": receipt.id},
            user="alice",
        )
        clock.advance("3d")
        store.sweep()  # the second expires unanswered

        def told() -> list[str]:
            with store.unit(write=False) as u:
                history = u.messages.history(conversation, user="alice")
            return sorted(m.content for m in history if m.role == "notification")

        messages = eventually(lambda: len(told()) == 2 and told())
        assert messages == [
            "The expense claim was not submitted (expired).",
            "Your expense of €612.40 is over €500.00, so a manager will review it.",
        ]

"""``pawflow inbox --json`` and ``pawflow answer --json``: the records as the API returns them."""

from __future__ import annotations

import json

from tests.tui.conftest import User
from typer.testing import CliRunner

from pawflow.cli import app

runner = CliRunner()


def test_inbox_and_answer_as_json(user: User) -> None:
    asked = user.ask("choice", "Format?", options=["pdf", "csv"])
    settings = ["--server", user.client.server]
    token = {"PAWFLOW_TOKEN": user.token}

    listed = runner.invoke(app, ["inbox", "--json", *settings], env=token)
    assert listed.exit_code == 0, listed.output
    records = json.loads(listed.output)["interactions"]
    assert [(r["id"], r["status"], r["kind"]) for r in records] == [(asked.id, "pending", "choice")]
    assert records[0]["contract"] == "pawflow.user-interaction.v1"

    answered = runner.invoke(app, ["answer", asked.id, "2", "--json", *settings], env=token)
    assert answered.exit_code == 0, answered.output
    record = json.loads(answered.output)["interaction"]
    assert (record["id"], record["status"], record["answer"]) == (asked.id, "answered", "csv")
    assert record["answered_via"] == "cli"

    empty = runner.invoke(app, ["inbox", "--json", *settings], env=token)
    assert json.loads(empty.output) == {"interactions": []}

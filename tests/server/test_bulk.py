"""Clearing a queue: one answer for several pending requests of one kind, each answered on
its own, the refused ones listed with why (``respond_each``, ``pawflow answer --each``)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from pawflow.cli import app
from pawflow.client import Client
from pawflow.clock import FakeClock
from pawflow.server.testing import live_server
from pawflow.store import Question
from pawflow.testing import temporary_store
from tests.server.conftest import QUIET

runner = CliRunner()


def test_twenty_confirms_in_one_go_with_the_refused_one_reported(
    backend: str, tmp_path: Path
) -> None:
    with (
        temporary_store(backend, tmp_path, clock=FakeClock()) as store,
        live_server(store, settings=QUIET) as server,
    ):
        conversation = store.create_conversation("ann", title="Deploys").id
        asked = [
            store.ask(Question("ann", conversation, "confirm", f"Deploy {n}?")).interaction.id
            for n in range(19)
        ]
        theirs = store.ask(
            Question("ann", conversation, "confirm", "Theirs?", policy={"assignees": ["lee"]})
        ).interaction.id
        done = store.ask(Question("ann", conversation, "confirm", "Done?")).interaction.id
        store.respond_interaction(done, False, user="ann")
        choice = store.ask(
            Question("ann", conversation, "choice", "Which?", options=["a", "b"])
        ).interaction.id
        ids = [*asked[:10], theirs, *asked[10:], done, choice]
        common = ["--server", server.url]
        ann = {"PAWFLOW_TOKEN": server.token("ann")}
        said = runner.invoke(
            app, ["answer", ids[0], "yse", "--each", ",".join(ids[1:]), *common], env=ann
        )
        assert said.exit_code == 1, said.output
        lines = " ".join(said.output.split())
        assert "Answered 19 of 22." in lines
        assert f"Not answered {theirs}: this request waits for lee." in lines
        assert f"Not answered {done}: already answered." in lines
        assert f"Not answered {choice}: not found, or not a confirm request." in lines
        for request_id in asked:
            record = store.get_interaction(request_id, user="ann")
            assert (record.answer, record.answered_via) == (True, "cli")
        assert store.get_interaction(theirs, user="ann").status == "pending"
        assert store.get_interaction(choice, user="ann").status == "pending"
        with store.unit(write=False) as u:
            trail = list(u.audit.since(store.now().replace(year=2000)))
        assert sum(1 for step in trail if step["action"] == "answered") == 20  # done's too

        with Client(server.url, server.token("lee")) as lee:
            answered, refused = lee.respond_each([theirs, asked[0]], False)
        assert [r.id for r in answered] == [theirs]
        assert [(r["request_id"], r["status"]) for r in refused] == [(asked[0], 404)]  # not hers
        again = runner.invoke(
            app, ["answer", asked[0], "no", "--each", asked[1], "--json", *common], env=ann
        )
        assert again.exit_code == 1
        assert [r["status"] for r in json.loads(again.output)["refused"]] == [409, 409]

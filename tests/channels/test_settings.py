"""Who gets what: ``pawflow users set`` and the signed-in user's own actions."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from pawflow.cli import app
from pawflow.server.testing import LiveServer, live_server
from pawflow.store import open_store, outbox
from pawflow.testing import temporary_store
from tests.channels.test_email import QUIET


def test_users_set_keeps_addresses_and_channels(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'p.db'}"
    runner = CliRunner()
    args = ["users", "set", "ada", "--db", db, "--email", "ada@example.org"]
    done = runner.invoke(app, [*args, "--slack", "U0123ABCD", "--notify", "email,slack"])
    assert done.exit_code == 0, done.output
    assert "notify: email, slack" in done.output
    refused = runner.invoke(app, ["users", "set", "ada", "--db", db, "--notify", "fax"])
    assert refused.exit_code != 0 and "unknown channel" in refused.output
    cleared = runner.invoke(app, ["users", "set", "ada", "--db", db, "--notify", "default"])
    assert cleared.exit_code == 0 and "notify: email, slack" in cleared.output
    with open_store(db) as store, store.transaction(write=False) as tx:
        reach = outbox.get_reach(tx, "ada")
    assert (reach.email, reach.slack, reach.notify) == ("ada@example.org", "U0123ABCD", None)


def test_the_signed_in_user_sets_their_own(tmp_path: Path) -> None:
    with temporary_store("sqlite", tmp_path) as store, live_server(store, settings=QUIET) as s:
        server: LiveServer = s
        with server.client("bo") as bo:
            empty = bo.post("/api/actions/get_notifications", json={}).json()
            assert empty["channels"] == [] and empty["email"] is None
            changed = bo.post(
                "/api/actions/set_notifications",
                json={"email": "bo@example.org", "notify": ["email", "webhook"]},
            ).json()
            assert changed["channels"] == ["email", "webhook"]
            bad = bo.post("/api/actions/set_notifications", json={"email": "not-mail"})
            assert bad.status_code == 400 or bad.status_code == 422
            kept = bo.post("/api/actions/set_notifications", json={"notify": None}).json()
            assert kept["email"] == "bo@example.org" and kept["channels"] == ["email"]


def test_a_request_names_its_own_channels_over_http(tmp_path: Path) -> None:
    with (
        temporary_store("sqlite", tmp_path) as store,
        live_server(store, settings=QUIET) as server,
        server.client("cy") as cy,
    ):
        cy.post("/api/actions/set_notifications", json={"email": "cy@example.org"})
        chat = cy.post("/api/actions/create_conversation", json={"title": "n"}).json()
        ask = {"conversation_id": chat["conversation"]["id"], "kind": "confirm"}
        quiet = cy.post(
            "/api/actions/request_interaction", json={**ask, "message": "Q?", "notify": []}
        ).json()["interaction"]
        loud = cy.post("/api/actions/request_interaction", json={**ask, "message": "L?"}).json()[
            "interaction"
        ]
        unknown = cy.post(
            "/api/actions/request_interaction", json={**ask, "message": "U?", "notify": ["fax"]}
        )
        assert unknown.status_code == 422
        shown = {
            r["id"]: cy.post("/api/actions/get_interaction", json={"request_id": r["id"]}).json()[
                "deliveries"
            ]
            for r in (quiet, loud)
        }
    assert shown[quiet["id"]] == []
    assert [(d["channel"], d["status"]) for d in shown[loud["id"]]] == [("email", "queued")]


def test_a_channel_named_twice_in_notify_is_refused(backend: str, tmp_path: Path) -> None:
    """The schema says each channel once: a list naming one twice is a 422 on ``notify``
    (set_notifications and a request's own list alike), and nothing changes."""
    with (
        temporary_store(backend, tmp_path) as store,
        live_server(store, settings=QUIET) as server,
        server.client("di") as di,
    ):
        di.post("/api/actions/set_notifications", json={"email": "di@example.org"})
        twice = di.post("/api/actions/set_notifications", json={"notify": ["email", "email"]})
        assert twice.status_code == 422, twice.text
        assert [e["path"] for e in twice.json()["errors"]] == ["notify"]
        assert "email" in twice.json()["error"]
        kept = di.post("/api/actions/get_notifications", json={}).json()
        assert kept["notify"] is None and kept["channels"] == ["email"]
        chat = di.post("/api/actions/create_conversation", json={"title": "n"}).json()
        asked = di.post(
            "/api/actions/request_interaction",
            json={
                "conversation_id": chat["conversation"]["id"],
                "kind": "confirm",
                "message": "Q?",
                "notify": ["email", "email"],
            },
        )
        assert asked.status_code == 422 and asked.json()["errors"][0]["path"] == "notify"

"""Who gets what: ``pawflow users set`` and the signed-in user's own actions."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from pawflow.cli import app
from pawflow.server.governance import delivery_text
from pawflow.server.testing import LiveServer, live_server
from pawflow.store import open_store
from pawflow.store.reach import addresses, outbox
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
        reach = addresses.get_reach(tx, "ada")
    assert (reach.email, reach.slack, reach.notify) == ("ada@example.org", "U0123ABCD", None)


MAILING = QUIET.replace(smtp_url="smtp://127.0.0.1:9")
"""A server that sends mail (nothing here sends any)."""


def test_the_signed_in_user_sets_their_own(tmp_path: Path) -> None:
    with temporary_store("sqlite", tmp_path) as store, live_server(store, settings=MAILING) as s:
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


def test_only_the_channels_this_server_sends_may_be_chosen(backend: str, tmp_path: Path) -> None:
    """get_notifications says which channels the server can send, and why the others are
    off; set_notifications refuses an off one with a 422 on ``notify``, and nothing changes."""
    settings = QUIET.replace(smtp_url="smtp://127.0.0.1:9", push=False)
    with (
        temporary_store(backend, tmp_path) as store,
        live_server(store, settings=settings) as server,
        server.client("ed") as ed,
    ):
        found = ed.post("/api/actions/get_notifications", json={}).json()
        assert found["server_channels"] == [
            {"channel": "email", "on": True, "reason": None},
            {"channel": "slack", "on": False, "reason": "no PAWFLOW_SLACK_BOT_TOKEN"},
            {"channel": "webhook", "on": True, "reason": None},
            {"channel": "apprise", "on": True, "reason": None},
            {"channel": "push", "on": False, "reason": "PAWFLOW_PUSH=off"},
        ]
        ok = ed.post("/api/actions/set_notifications", json={"notify": ["email"]})
        assert ok.status_code == 200 and ok.json()["channels"] == ["email"]
        assert [c["on"] for c in ok.json()["server_channels"]] == [True, False, True, True, False]
        refused = ed.post(
            "/api/actions/set_notifications",
            json={"slack": "U0123ABCD", "notify": ["email", "slack", "push"]},
        )
        assert refused.status_code == 422, refused.text
        assert [e["path"] for e in refused.json()["errors"]] == ["notify"]
        said = refused.json()["error"]
        assert "slack: no PAWFLOW_SLACK_BOT_TOKEN" in said and "push: PAWFLOW_PUSH=off" in said
        kept = ed.post("/api/actions/get_notifications", json={}).json()
        assert (kept["notify"], kept["slack"]) == (["email"], None)


def test_a_request_s_history_says_how_each_delivery_went(backend: str, tmp_path: Path) -> None:
    """get_interaction's deliveries say each outcome in words: a channel the server lacks
    failed as not configured; a sent Slack copy updated once the request was answered."""
    with (
        temporary_store(backend, tmp_path) as store,
        live_server(store, settings=QUIET) as server,
        server.client("lee") as lee,
    ):
        lee.post(
            "/api/actions/set_notifications",
            json={"email": "lee@example.org", "slack": "U0123ABCD"},
        )
        chat = lee.post("/api/actions/create_conversation", json={"title": "n"}).json()
        asked = lee.post(
            "/api/actions/request_interaction",
            json={
                "conversation_id": chat["conversation"]["id"],
                "kind": "confirm",
                "message": "Ship?",
                "notify": ["email", "slack"],
            },
        ).json()["interaction"]

        def history() -> list[str]:
            found = lee.post("/api/actions/get_interaction", json={"request_id": asked["id"]})
            return [d["text"] for d in found.json()["deliveries"]]

        assert history() == ["email to lee: queued", "slack to lee: queued"]
        with store.transaction() as tx:
            rows = {row.channel: row for row in outbox.claim_due(tx, store.now(), 10)}
            outbox.mark_failed(
                tx,
                rows["email"],
                "the email channel is not configured on this server",
                store.now(),
                permanent=True,
            )
            outbox.mark_sent(tx, rows["slack"], "C1/1.2", store.now())
        assert history() == ["email to lee: failed — not configured", "slack to lee: sent"]
        answered = lee.post(
            "/api/actions/respond_interaction",
            json={"request_id": asked["id"], "answer": True},
        )
        assert answered.status_code == 200, answered.text
        assert history()[1] == "slack to lee: sent"  # its update is on its way
        with store.transaction() as tx:
            (due,) = outbox.claim_settle(tx, store.now(), 10)
            outbox.mark_settled(tx, due)
        assert history() == [
            "email to lee: failed — not configured",
            "slack to lee: sent, updated after the answer",
        ]


def test_a_delivery_s_words() -> None:
    """What a retried, a skipped and a cancelled request's updated delivery say."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    row = outbox.OutboxRow(
        id="o1", request_id="r1", channel="push", recipient="ada", address="", status="queued",
        attempts=2, next_at=now, idempotency_key="k", external_ref=None,
        last_error="HTTP 503", settle="none", created_at=now, sent_at=None,
    )  # fmt: skip
    assert delivery_text(row, "pending") == "push to ada: queued (tried 2 times) — HTTP 503"
    skipped = replace(row, status="skipped", last_error="the request was cancelled before it")
    assert delivery_text(skipped, "cancelled") == (
        "push to ada: skipped — the request was cancelled before it"
    )
    updated = replace(row, status="sent", settle="done", last_error=None)
    assert (
        delivery_text(updated, "cancelled") == "push to ada: sent, updated after it was cancelled"
    )

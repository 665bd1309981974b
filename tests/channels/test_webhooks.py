"""Webhooks over a live server, signed the Standard Webhooks way and checked by its package,
and Apprise notifications received by a local server (both backends)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from standardwebhooks import Webhook
from typer.testing import CliRunner

from pawflow import serve
from pawflow.channels import AppriseChannel, Dispatcher
from pawflow.channels.webhooks import check_url
from pawflow.cli import app
from pawflow.clock import FakeClock
from pawflow.egress import EgressRule, Target
from pawflow.errors import InvalidInput
from pawflow.server.testing import LiveServer, live_server
from pawflow.store import open_store
from pawflow.store.reach import outbox, webhooks
from pawflow.testing import temporary_store
from tests.channels.receiver import Receiver, receiver
from tests.channels.test_email import QUIET
from tests.conftest import require_postgres

LOOPBACK = EgressRule.parse("127.0.0.1")
EVENTS = [
    "interaction.created",
    "interaction.answered",
    "interaction.expired",
    "interaction.cancelled",
]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def served(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[LiveServer, FakeClock]]:
    if request.param == "postgres":
        require_postgres()
    # Standard Webhooks receivers refuse a timestamp five minutes off their own clock.
    clock = FakeClock(datetime.now(UTC).replace(microsecond=0))
    settings = QUIET.replace(egress_allowed_hosts="127.0.0.1")
    with (
        temporary_store(request.param, tmp_path, clock=clock) as store,
        live_server(store, settings=settings) as server,
    ):
        yield server, clock


def _dispatcher(server: LiveServer) -> Dispatcher:
    """The dispatcher ``pawflow serve`` runs with the server's settings (loopback allowed)."""
    return serve.dispatcher(server.store, server.settings)


def _verified(inbox: Receiver, secret: str) -> list[dict[str, Any]]:
    """Every delivery received, each checked by ``standardwebhooks`` (raises if one is not)."""
    signer = Webhook(secret)
    return [signer.verify(got.body, got.headers) for got in inbox.received()]


def _ask(http: httpx.Client, conversation: str, message: str, **more: Any) -> str:
    body = {"conversation_id": conversation, "kind": "confirm", "message": message, **more}
    answer = http.post("/api/actions/request_interaction", json=body)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["interaction"]["id"])


def test_every_event_arrives_once_signed(served: tuple[LiveServer, FakeClock]) -> None:
    server, clock = served
    with receiver() as inbox, server.client("ada") as ada, server.client("bo") as bo:
        made = ada.post(
            "/api/actions/create_webhook", json={"url": f"{inbox.url}/hooks", "events": EVENTS}
        )
        assert made.status_code == 200, made.text
        secret, hook = made.json()["secret"], made.json()["webhook"]
        assert secret.startswith("whsec_") and hook["events"] == EVENTS
        listed = ada.post("/api/actions/list_webhooks", json={}).json()["webhooks"]
        assert listed == [hook]  # and never the secret again
        assert ada.post("/api/actions/get_notifications", json={}).json()["channels"] == ["webhook"]

        chat = ada.post("/api/actions/create_conversation", json={"title": "w"}).json()
        conversation = chat["conversation"]["id"]
        answered = _ask(ada, conversation, "Deploy?")
        cancelled = _ask(ada, conversation, "Restart?")
        expired = _ask(ada, conversation, "Wait?", expires_in="1m")
        pending = _ask(ada, conversation, "Later?")
        quiet = _ask(ada, conversation, "Nobody?", notify=[])
        ada.post("/api/actions/respond_interaction", json={"request_id": answered, "answer": True})
        ada.post("/api/actions/cancel_interaction", json={"request_id": cancelled})
        clock.advance("2m")
        server.store.sweep()
        dispatcher = _dispatcher(server)
        assert dispatcher.step() == 7
        assert dispatcher.step() == 0

        bodies = _verified(inbox, secret)
        seen = Counter((b["type"], b["data"]["interaction"]["id"]) for b in bodies)
        assert seen == Counter(
            [
                *[("interaction.created", r) for r in (answered, cancelled, expired, pending)],
                ("interaction.answered", answered),
                ("interaction.cancelled", cancelled),
                ("interaction.expired", expired),
            ]
        )
        assert all(n == 1 for n in seen.values()) and quiet not in {r for _, r in seen}
        done = next(b for b in bodies if b["type"] == "interaction.answered")
        assert done["data"]["interaction"]["answer"] is True
        assert {got.path for got in inbox.received()} == {"/hooks"}
        assert {got.headers["host"] for got in inbox.received()} == {inbox.url.split("//")[1]}
        ids = [got.headers["webhook-id"] for got in inbox.received()]
        assert len(set(ids)) == 7 and all(i.startswith("msg_") for i in ids)

        log = ada.post(
            "/api/actions/list_webhook_deliveries", json={"webhook_id": hook["id"]}
        ).json()["deliveries"]
        assert len(log) == 7 and {d["status"] for d in log} == {"sent"}
        assert {d["id"] for d in log} == set(ids) and {d["response_status"] for d in log} == {204}

        # Another user's webhook is as unknown as one that does not exist.
        for action in ("delete_webhook", "list_webhook_deliveries"):
            theirs = bo.post(f"/api/actions/{action}", json={"webhook_id": hook["id"]})
            unknown = bo.post(f"/api/actions/{action}", json={"webhook_id": "nope"})
            assert theirs.status_code == unknown.status_code == 404
            assert theirs.json() == unknown.json() == {"error": "webhook not found"}
        assert bo.post("/api/actions/list_webhooks", json={}).json()["webhooks"] == []
        gone = ada.post("/api/actions/delete_webhook", json={"webhook_id": hook["id"]})
        assert gone.json() == {"deleted": True}
        assert ada.post("/api/actions/list_webhooks", json={}).json()["webhooks"] == []


def test_an_event_says_who_asks_where_what_about_and_by_when(
    served: tuple[LiveServer, FakeClock],
) -> None:
    server, _ = served
    with receiver() as inbox, server.client("ada") as ada:
        hook = {"url": f"{inbox.url}/hooks", "events": ["interaction.created"]}
        made = ada.post("/api/actions/create_webhook", json=hook)
        assert made.status_code == 200, made.text
        secret = made.json()["secret"]
        chat = ada.post("/api/actions/create_conversation", json={"title": "Deploys"}).json()
        conversation = chat["conversation"]["id"]
        _ask(ada, conversation, "Ship 2.4 to production?", title="Ship", expires_in="2h")
        assert _dispatcher(server).step() == 1
        (event,) = _verified(inbox, secret)
    record = event["data"]["interaction"]
    deadline = datetime.fromisoformat(record["expires_at"])
    assert event["data"]["context"] == {
        "asked_by": "ada",
        "conversation": {
            "id": conversation,
            "title": "Deploys",
            "url": f"{server.settings.base_url}/?c={conversation}",
        },
        "about": "Ship",
        "expires_at": record["expires_at"],
        "text": "Asked by ada. In the conversation “Deploys”. "
        f"Answer by {deadline.strftime('%Y-%m-%d %H:%M UTC')}.",
    }


def test_a_failing_receiver_is_retried_with_backoff(served: tuple[LiveServer, FakeClock]) -> None:
    server, clock = served
    with receiver(statuses=[500, 503]) as inbox, server.client("cy") as cy:
        made = cy.post(
            "/api/actions/create_webhook",
            json={"url": f"{inbox.url}/h", "events": ["interaction.created"]},
        ).json()
        chat = cy.post("/api/actions/create_conversation", json={"title": "r"}).json()
        _ask(cy, chat["conversation"]["id"], "Retry me?")
        dispatcher = _dispatcher(server)

        def log() -> dict[str, Any]:
            body = {"webhook_id": made["webhook"]["id"]}
            (row,) = cy.post("/api/actions/list_webhook_deliveries", json=body).json()["deliveries"]
            return dict(row)

        assert dispatcher.step() == 1
        first = log()
        assert (first["status"], first["attempts"], first["error"]) == ("queued", 1, "HTTP 500")
        assert first["response_status"] == 500 and first["next_at"] is not None
        assert dispatcher.step() == 0  # not before its backoff
        clock.advance("5s")
        assert dispatcher.step() == 1
        assert (log()["attempts"], log()["error"]) == (2, "HTTP 503")
        clock.advance("6s")
        assert dispatcher.step() == 0  # the backoff doubled
        clock.advance("5s")
        assert dispatcher.step() == 1
        last = log()
        assert (last["status"], last["attempts"], last["error"]) == ("sent", 3, None)

        bodies = _verified(inbox, made["secret"])
        assert (
            len(bodies) == 3 and len({got.headers["webhook-id"] for got in inbox.received()}) == 1
        )
        stamps = [int(got.headers["webhook-timestamp"]) for got in inbox.received()]
        assert stamps == sorted(stamps) and len(set(stamps)) == 3


def test_webhook_urls_are_checked(served: tuple[LiveServer, FakeClock]) -> None:
    server, _ = served
    with server.client("di") as di:
        for url in ("ftp://127.0.0.1/x", "http://10.1.2.3/x", "http://user:pw@127.0.0.1/x"):
            body = {"url": url, "events": ["interaction.created"]}
            refused = di.post("/api/actions/create_webhook", json=body)
            assert refused.status_code in (400, 422), url
        none = di.post(
            "/api/actions/create_webhook", json={"url": "http://127.0.0.1/", "events": []}
        )
        assert none.status_code in (400, 422)
    # Without a list of allowed hosts, nothing inside the network may be called.
    for url in (
        "http://127.0.0.1:8080/",
        "http://localhost/",
        "http://169.254.169.254/",
        "http://[::1]/",
    ):
        with pytest.raises(InvalidInput):
            check_url(url, EgressRule())
    assert check_url("http://127.0.0.1:9/", LOOPBACK) == "http://127.0.0.1:9/"
    assert check_url("http://10.1.2.3/", EgressRule.parse("10.0.0.0/8"))


def test_an_attempt_connects_to_the_address_checked_under_the_urls_name() -> None:
    # A name no DNS knows: the client connects to the checked address without asking again,
    # and the receiver sees the URL's own name.
    with receiver() as inbox:
        port = int(inbox.url.rsplit(":", 1)[1])
        url = f"http://hooks.pawflow.invalid:{port}/p"
        target = Target(url, "hooks.pawflow.invalid", port, ("127.0.0.1",))
        with LOOPBACK.client(5.0, target) as http:
            assert http.post(url, content=b"{}").status_code == 204
        (got,) = inbox.received()
        assert got.headers["host"] == f"hooks.pawflow.invalid:{port}" and got.path == "/p"
        # Unpinned, the same client resolves (once) and refuses what it may not call.
        with EgressRule().client(5.0) as http, pytest.raises(InvalidInput, match="loopback"):
            http.post(f"{inbox.url}/q", content=b"{}")
        assert len(inbox.received()) == 1


def test_an_apprise_notification_carries_the_question_and_its_link(
    served: tuple[LiveServer, FakeClock],
) -> None:
    server, _ = served
    with receiver() as inbox, server.client("ed") as ed:
        url = inbox.url.replace("http://", "json://") + "/ntfy"
        settings = {"notify_url": url, "notify": ["apprise"]}
        assert ed.post("/api/actions/set_notifications", json=settings).status_code == 200
        chat = ed.post("/api/actions/create_conversation", json={"title": "a"}).json()
        asked = _ask(ed, chat["conversation"]["id"], "Ship the release?", title="Release")
        assert _dispatcher(server).step() == 1
        (got,) = inbox.received()
        body = got.json()
        assert got.path == "/ntfy" and body["title"] == "Release"
        assert "Ship the release?" in body["message"] and "Kind: confirm" in body["message"]
        link = next(
            line.split(": ", 1)[1]
            for line in body["message"].splitlines()
            if line.startswith("Answer: ")
        )
        assert link.startswith(f"{server.url}/a/pfa_")
        with httpx.Client() as http:
            page = http.get(link)
        assert page.status_code == 200 and "Ship the release?" in page.text
        with server.store.transaction(write=False) as tx:
            (row,) = outbox.deliveries(tx, asked)
        assert (row.channel, row.status) == ("apprise", "sent")


def test_an_apprise_url_inside_the_network_is_refused_unless_allowed(
    served: tuple[LiveServer, FakeClock],
) -> None:
    server, _ = served
    with receiver() as inbox, server.client("fi") as fi:
        url = inbox.url.replace("http://", "json://")
        fi.post("/api/actions/set_notifications", json={"notify_url": url})
        chat = fi.post("/api/actions/create_conversation", json={"title": "a"}).json()
        asked = _ask(fi, chat["conversation"]["id"], "Anyone?")
        Dispatcher(server.store, [AppriseChannel()], base_url=server.url, owner="t").step()
        assert inbox.received() == []
        with server.store.transaction(write=False) as tx:
            (row,) = outbox.deliveries(tx, asked)
        assert row.status == "failed" and "PAWFLOW_EGRESS_ALLOWED_HOSTS" in (row.last_error or "")


def test_set_notifications_refuses_an_inward_or_unreadable_url_naming_the_field(
    served: tuple[LiveServer, FakeClock],
) -> None:
    server, _ = served  # 127.0.0.1 alone is allowed
    with server.client("gu") as gu:
        for url in (
            "ntfy://127.0.0.2:9999/x",
            "gotify://10.0.0.1/token",
            "json://169.254.169.254/",
            "json://[::127.0.0.2]/",
            "json://[64:ff9b::7f00:2]/",
            "dbus://",
            "nosuchscheme://x",
        ):
            refused = gu.post("/api/actions/set_notifications", json={"notify_url": url})
            assert refused.status_code == 422, (url, refused.text)
            assert "notify_url" in refused.text, url
        shown = gu.post("/api/actions/get_notifications", json={}).json()
        assert shown["notify_url"] is None


def test_a_user_past_the_webhook_cap_is_refused_naming_url(
    served: tuple[LiveServer, FakeClock],
) -> None:
    server, _ = served
    with server.client("ha") as ha:
        body = {"url": "http://127.0.0.1:9/h", "events": ["interaction.created"]}
        made = [ha.post("/api/actions/create_webhook", json=body).status_code for _ in range(10)]
        assert made == [200] * 10
        refused = ha.post("/api/actions/create_webhook", json=body)
        assert refused.status_code == 422 and "at most 10 webhooks" in refused.text
        assert refused.json()["errors"][0]["path"] == "url"


def test_pawflow_webhooks_add_list_remove(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = f"sqlite:///{tmp_path / 'w.db'}"
    runner = CliRunner()
    monkeypatch.delenv("PAWFLOW_WEBHOOK_ALLOWED_HOSTS", raising=False)
    monkeypatch.delenv("PAWFLOW_EGRESS_ALLOWED_HOSTS", raising=False)
    inward = runner.invoke(app, ["webhooks", "add", "ada", "http://127.0.0.1:9/h", "--db", db])
    assert inward.exit_code != 0 and "PAWFLOW_EGRESS_ALLOWED_HOSTS" in inward.output
    monkeypatch.setenv("PAWFLOW_WEBHOOK_ALLOWED_HOSTS", "127.0.0.1")  # the older name, read
    events = ["--events", "interaction.answered"]
    added = runner.invoke(
        app, ["webhooks", "add", "ada", "http://127.0.0.1:9/h", *events, "--db", db]
    )
    assert added.exit_code == 0, added.output
    assert "secret (shown once): whsec_" in added.output
    with open_store(db) as store, store.transaction(write=False) as tx:
        (hook,) = webhooks.list_for(tx, "ada")
    assert hook.events == ("interaction.answered",) and hook.secret in added.output
    listed = runner.invoke(app, ["webhooks", "list", "ada", "--db", db])
    assert hook.id in listed.output and hook.secret not in listed.output
    assert runner.invoke(app, ["webhooks", "remove", "bo", hook.id, "--db", db]).exit_code == 1
    removed = runner.invoke(app, ["webhooks", "remove", "ada", hook.id, "--db", db])
    assert removed.exit_code == 0
    assert (
        "ada has no webhook" in runner.invoke(app, ["webhooks", "list", "ada", "--db", db]).output
    )


def test_pawflow_users_set_holds_a_notify_url_to_the_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = f"sqlite:///{tmp_path / 'u.db'}"
    monkeypatch.delenv("PAWFLOW_WEBHOOK_ALLOWED_HOSTS", raising=False)
    monkeypatch.delenv("PAWFLOW_EGRESS_ALLOWED_HOSTS", raising=False)
    url = "ntfy://127.0.0.1:9/x"
    refused = CliRunner().invoke(app, ["users", "set", "ada", "--notify-url", url, "--db", db])
    assert refused.exit_code != 0 and "loopback" in refused.output
    monkeypatch.setenv("PAWFLOW_EGRESS_ALLOWED_HOSTS", "127.0.0.1")
    allowed = CliRunner().invoke(app, ["users", "set", "ada", "--notify-url", url, "--db", db])
    assert allowed.exit_code == 0 and f"notify_url: {url}" in allowed.output

"""Email over a real SMTP server, and the answer links its mail carries (both backends)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from pawflow.channels import Dispatcher, EmailChannel, SmtpConfig
from pawflow.channels.email import message_id
from pawflow.clock import FakeClock
from pawflow.redaction import redact
from pawflow.server.credentials import revoke_tokens
from pawflow.server.settings import ServerSettings
from pawflow.server.testing import LiveServer, live_server
from pawflow.store import Question, Store
from pawflow.store.engine.database import sql
from pawflow.store.reach import addresses, outbox
from pawflow.testing import temporary_store
from tests.channels.smtp import Inbox, html_of, smtp_server, text_of
from tests.conftest import require_postgres
from tests.logs import tracebacks

QUIET = ServerSettings(sweep_interval=3600, rate_limit=100_000, rate_burst=100_000)
LINK = re.compile(r"http://127\.0\.0\.1:\d+/a/pfa_[A-Za-z0-9_\-]+(?:/confirm\?pick=\d+)?")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def served(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[LiveServer, Inbox, Dispatcher]]:
    if request.param == "postgres":
        require_postgres()
    with (
        temporary_store(request.param, tmp_path, clock=FakeClock()) as store,
        live_server(store, settings=QUIET) as server,
        smtp_server() as (inbox, url),
    ):
        channel = EmailChannel(SmtpConfig.from_url(url, "PawFlow <pawflow@example.org>"))
        yield server, inbox, Dispatcher(store, [channel], base_url=server.url, owner="test")


def _ask(store: Store, kind: str, message: str, **kwargs: object) -> str:
    store.ensure_user("ada")
    with store.transaction() as tx:
        addresses.set_reach(tx, "ada", email="ada@example.org", now=store.now())
    conversation = store.create_conversation("ada", "mail")
    return store.ask(Question("ada", conversation.id, kind, message, **kwargs)).interaction.id  # type: ignore[arg-type]


def _links(mail_text: str) -> list[str]:
    return LINK.findall(mail_text)


def test_a_mail_is_sent_and_its_link_answers_only_on_post(
    served: tuple[LiveServer, Inbox, Dispatcher],
) -> None:
    server, inbox, dispatcher = served
    store = server.store
    first = _ask(store, "confirm", "Deploy to production?", title="Deploy")
    second = _ask(store, "integer", "How many replicas?")
    assert dispatcher.step() == 2
    mails = {str(m["X-PawFlow-Request"]): m for m in inbox.received()}
    assert set(mails) == {first, second}
    mail = mails[first]
    assert mail["To"] == "ada@example.org" and mail["Subject"] == "Deploy"
    with store.transaction(write=False) as tx:
        rows = {row.request_id: row for row in outbox.deliveries(tx, first)}
    assert mail["Message-ID"] == message_id(rows[first], "pawflow@example.org")
    yes, no, page = _links(text_of(mail))
    assert yes.endswith("/confirm?pick=0") and no.endswith("/confirm?pick=1")
    assert yes in html_of(mail) and ">Yes<" in html_of(mail)

    with httpx.Client(timeout=60) as http:
        # Opening the page and the one-click confirm page answers nothing (mail scanners).
        shown = http.get(page)
        assert shown.status_code == 200 and "Deploy to production?" in shown.text
        assert ">Yes</button>" in shown.text and ">No</button>" in shown.text
        assert "Answer “Yes”" in http.get(yes).text
        assert store.get_interaction(first, user="ada").status == "pending"

        # The other request's link answers the other request only.
        (other,) = _links(text_of(mails[second]))
        refused = http.post(other, data={"answer": "many", "pick": "0"})
        assert refused.status_code == 422 and "expected an integer" in refused.text
        assert store.get_interaction(second, user="ada").status == "pending"
        assert store.get_interaction(first, user="ada").status == "pending"
        assert http.post(other, data={"answer": "3"}).status_code == 200
        assert store.get_interaction(second, user="ada").answer == 3
        assert store.get_interaction(first, user="ada").status == "pending"

        answered = http.post(yes.split("/confirm")[0], data={"pick": "0"})
        assert answered.status_code == 200 and "Answered by ada via link" in answered.text
        record = store.get_interaction(first, user="ada")
        assert (record.status, record.answer, record.answered_via) == ("answered", True, "link")

        # Spent: the page tells what happened, and another answer is refused.
        again = http.post(page, data={"pick": "1"})
        assert again.status_code == 409 and "Answered by ada via link" in again.text
        assert store.get_interaction(first, user="ada").answer is True
        assert "Answered by ada via link" in http.get(no).text
        assert http.get(page.replace("pfa_", "pfa_x")).status_code == 404

        # get_interaction shows the deliveries.
        token = server.token("ada")
        detail = http.post(
            f"{server.url}/api/actions/get_interaction",
            json={"request_id": first},
            headers={"Authorization": f"Bearer {token}"},
        ).json()
    assert [(d["channel"], d["status"]) for d in detail["deliveries"]] == [("email", "sent")]
    # The answered request's sent copy is settled by the next pass (a mail stays as it is).
    assert dispatcher.step() >= 1
    with store.transaction(write=False) as tx:
        assert [row.settle for row in outbox.deliveries(tx, first)] == ["done"]


def test_every_kind_has_controls_and_a_refusal_keeps_the_link(
    served: tuple[LiveServer, Inbox, Dispatcher],
) -> None:
    server, inbox, dispatcher = served
    store = server.store
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name"},
            "count": {"type": "integer", "title": "Count", "description": "How many to send"},
            "size": {"type": "string", "enum": ["s", "l"], "enumNames": ["Small", "Large"]},
        },
        "required": ["name", "count"],
    }
    asked = {
        "choice": _ask(store, "choice", "Which?", options=["red", "blue"]),
        "multi": _ask(store, "multi", "Which ones?", options=["red", "blue"]),
        "date": _ask(store, "date", "When?"),
        "form": _ask(store, "form", "Details?", response_schema=schema),
        "file": _ask(store, "file", "The report?"),
    }
    dispatcher.step()
    links = {str(m["X-PawFlow-Request"]): _links(text_of(m)) for m in inbox.received()}
    with httpx.Client(timeout=60) as http:
        choice = links[asked["choice"]]
        assert len(choice) == 3  # the page and one button per option
        assert ">red</button>" in http.get(choice[-1]).text
        assert http.post(choice[-1], data={"answer": "blue"}).status_code == 200
        assert store.get_interaction(asked["choice"], user="ada").answer == "blue"

        (multi,) = links[asked["multi"]]
        assert "Choose any that apply" in http.get(multi).text
        http.post(multi, data={"answer": ["blue", "red"]})
        assert store.get_interaction(asked["multi"], user="ada").answer == ["red", "blue"]

        (date,) = links[asked["date"]]
        assert 'type="date"' in http.get(date).text
        assert http.post(date, data={"answer": "2026-12-24"}).status_code == 200

        (form,) = links[asked["form"]]
        shown = http.get(form).text
        assert "Name" in shown and "Count" in shown
        assert shown.count('<span class="required" aria-hidden="true">*</span>') == 2
        assert '<span class="hint" id="f-f.count-hint">How many to send</span>' in shown
        assert 'value="s"> Small</label>' in shown  # titles, as in the web chat
        assert ">Submit</button>" in shown and "Validate" not in shown
        refused = http.post(form, data={"f.name": "Ada"})
        assert refused.status_code == 422
        error = r'<span class="field-error" id="f-f\.count-error">([^<]+)</span>'
        beside = re.search(error, refused.text)
        assert beside is not None and "count" not in beside.group(1).split(":")[0]
        assert 'aria-invalid="true"' in refused.text and "Not answered:" not in refused.text
        assert 'value="Ada"' in refused.text  # what was typed stays
        assert store.get_interaction(asked["form"], user="ada").status == "pending"
        assert http.post(form, data={"f.name": "Ada", "f.count": "2"}).status_code == 200
        (upload,) = links[asked["file"]]
        assert 'type="file"' in http.get(upload).text
        sent = http.post(upload, files={"answer": ("report.txt", b"all good", "text/plain")})
        assert sent.status_code == 200
        assert "Answer" in http.get(choice[0].replace("pick=0", "pick=x")).text
    assert store.get_interaction(asked["form"], user="ada").answer == {"name": "Ada", "count": 2}
    assert store.get_interaction(asked["file"], user="ada").answer["name"] == "report.txt"


def test_notify_lists_choose_the_rows(store: Store) -> None:
    store.ensure_user("bo")
    conversation = store.create_conversation("bo", "n")
    none = store.ask(Question("bo", conversation.id, "text", "Quiet?", notify=[])).interaction
    default = store.ask(Question("bo", conversation.id, "text", "Anyone?")).interaction
    missing = store.ask(
        Question("bo", conversation.id, "text", "Mail?", notify=["email"])
    ).interaction
    with store.transaction() as tx:
        assert outbox.deliveries(tx, none.id) == outbox.deliveries(tx, default.id) == []
        (row,) = outbox.deliveries(tx, missing.id)
        assert (row.status, row.last_error) == ("failed", "bo has no email address")
        addresses.set_reach(
            tx, "bo", email="bo@example.org", notify=["email", "slack"], now=store.now()
        )
    asked = store.ask(Question("bo", conversation.id, "text", "Now?")).interaction
    with store.transaction() as tx:
        channels = {(r.channel, r.status) for r in outbox.deliveries(tx, asked.id)}
    assert channels == {("email", "queued"), ("slack", "failed")}
    # Settled before it was sent: the queued copy is never sent.
    store.cancel_interaction(asked.id, user="bo")
    with store.transaction() as tx:
        assert {r.status for r in outbox.deliveries(tx, asked.id)} == {"skipped", "failed"}


def test_an_unreachable_mail_server_is_retried_with_backoff(store: Store, clock: FakeClock) -> None:
    store.ensure_user("cy")
    with store.transaction() as tx:
        addresses.set_reach(tx, "cy", email="cy@example.org", now=store.now())
    conversation = store.create_conversation("cy", "r")
    asked = store.ask(Question("cy", conversation.id, "confirm", "Retry?")).interaction
    with smtp_server() as (_, url):
        closed = SmtpConfig.from_url(url, None)  # the server stops: its port is closed
    dispatcher = Dispatcher(store, [EmailChannel(closed)], base_url="http://x", owner="t")
    dispatcher.step()
    with store.transaction() as tx:
        (row,) = outbox.deliveries(tx, asked.id)
    assert (row.status, row.attempts) == ("queued", 1) and row.last_error
    dispatcher.step()  # not due yet
    clock.advance("6s")
    dispatcher.step()
    with store.transaction() as tx:
        (row,) = outbox.deliveries(tx, asked.id)
    assert (row.status, row.attempts) == ("queued", 2)


def test_an_answer_link_never_reaches_a_log() -> None:
    line = '127.0.0.1 - "GET /a/pfa_Q2xpY2sgaGVyZSB0byBhbnN3ZXItX2FiYw/confirm?pick=0 HTTP/1.1"'
    assert "pfa_" not in redact(line)


def test_a_link_expires_with_its_request_and_tells_an_answer_from_elsewhere(
    served: tuple[LiveServer, Inbox, Dispatcher],
) -> None:
    server, inbox, dispatcher = served
    store = server.store
    clock = store.clock
    assert isinstance(clock, FakeClock)
    soon = _ask(store, "text", "Quick?", expires_in="1h")
    elsewhere = _ask(store, "text", "Anywhere?")
    dispatcher.step()
    links = {str(m["X-PawFlow-Request"]): _links(text_of(m))[0] for m in inbox.received()}
    store.respond_interaction(elsewhere, "from the chat", user="ada", via="chat")
    clock.advance("2h")
    with httpx.Client(timeout=60) as http:
        assert "expired" in http.get(links[soon]).text
        refused = http.post(links[soon], data={"answer": "late"})
        assert refused.status_code == 409
        assert store.get_interaction(soon, user="ada").status == "expired"
        told = http.get(links[elsewhere]).text
        assert "Answered by ada via chat" in told and "<form" not in told


def _files(store: Store) -> int:
    with store.transaction(write=False) as tx:
        found = sql(tx).one("SELECT COUNT(*) AS n FROM files")
    return int(found["n"]) if found else 0


def _share_and_ask(store: Store, **policy: object) -> str:
    """A request of req's, in a conversation ada writes in, sent to its assignees."""
    for user in ("ada", "bea"):
        store.ensure_user(user)
        with store.transaction() as tx:
            addresses.set_reach(tx, user, email=f"{user}@example.org", now=store.now())
    room = store.create_conversation("req", "mail")
    store.share_conversation(room.id, user="req", with_user="ada", access="write")
    return store.ask(Question("req", room.id, "confirm", "Ship?", policy=policy)).interaction.id


def test_a_refused_or_invalid_post_keeps_no_upload(
    served: tuple[LiveServer, Inbox, Dispatcher], caplog: pytest.LogCaptureFixture
) -> None:
    server, inbox, dispatcher = served
    store = server.store
    caplog.set_level(logging.INFO)
    schema = {
        "type": "object",
        "properties": {
            "report": {"type": "object", "x-pawflow-kind": "file", "title": "Report"},
            "count": {"type": "integer", "title": "Count"},
        },
        "required": ["report", "count"],
    }
    form = _ask(store, "form", "Details?", response_schema=schema)
    text = _ask(store, "text", "Why?")
    dispatcher.step()
    links = {str(m["X-PawFlow-Request"]): _links(text_of(m))[0] for m in inbox.received()}
    report = {"f.report": ("report.txt", b"all good", "text/plain")}
    with httpx.Client(timeout=60) as http:
        invalid = http.post(links[form], files=report, data={"f.count": "many"})
        assert invalid.status_code == 422 and "count" in invalid.text
        assert _files(store) == 0  # the file of a refused answer is not kept
        # A file where none is asked is not kept either.
        posted = http.post(links[text], files={"answer": ("x.bin", b"\0\1", "application/x")})
        assert posted.status_code == 422
        assert _files(store) == 0
        done = http.post(links[form], files=report, data={"f.count": "2"})
        assert done.status_code == 200, done.text
    assert _files(store) == 1
    assert store.get_interaction(form, user="ada").answer["report"]["name"] == "report.txt"
    assert tracebacks(caplog.records) == []


def test_a_link_not_its_users_to_use_says_whom_it_waits_for_and_keeps_nothing(
    served: tuple[LiveServer, Inbox, Dispatcher], caplog: pytest.LogCaptureFixture
) -> None:
    """Ada's link to a request handed on to bea, and her link to a quorum she voted on
    elsewhere: each POST is refused with why, the link stays as it was."""
    server, inbox, dispatcher = served
    store = server.store
    caplog.set_level(logging.INFO)
    handed_on = _share_and_ask(store, assignees=["ada"], reassign_to=["bea"])
    quorum = _share_and_ask(store, assignees=["ada", "bea", "cy"], required_approvals=3)
    dispatcher.step()
    links = {
        str(m["X-PawFlow-Request"]): _links(text_of(m))[-1]
        for m in inbox.received()
        if "ada@" in str(m["To"])
    }
    bea = next(m for m in inbox.received() if "bea@" in str(m["To"]) and quorum in str(m))
    with store.unit() as u:
        u.accountability.reassign(handed_on, ["bea"], user="ada")
    store.respond_interaction(quorum, True, user="ada", via="chat")
    with httpx.Client(timeout=60) as http:
        refused = http.post(links[handed_on], data={"answer": "yes"})
        assert refused.status_code == 403
        assert "this request waits for bea" in refused.text
        voted = http.post(links[quorum], data={"answer": "no"})
        assert voted.status_code == 409
        assert "ada has already voted yes" in voted.text
        assert "<form" in http.get(links[quorum]).text  # not spent: nothing was taken
        counted = http.post(_links(text_of(bea))[-1], data={"answer": "yes"})  # bea's own
        assert counted.status_code == 200
        assert "Your vote was counted; the request waits for more approvals." in counted.text
    assert store.get_interaction(handed_on, user="req").status == "pending"
    with store.unit(write=False) as u:
        policy = u.accountability.details(quorum, user="req")["policy"]
    assert [(v["voter"], v["vote"], v["via"]) for v in policy["votes"]] == [
        ("ada", True, "chat"),
        ("bea", True, "link"),
    ]
    assert tracebacks(caplog.records) == []


def test_revoking_a_users_tokens_ends_their_answer_links(
    served: tuple[LiveServer, Inbox, Dispatcher],
) -> None:
    server, inbox, dispatcher = served
    store = server.store
    first = _ask(store, "text", "Why?")
    dispatcher.step()
    (link,) = _links(text_of(inbox.received()[0]))
    with store.transaction() as tx:
        revoke_tokens(tx, "ada", now=store.now())  # as `pawflow users revoke ada` does
    later = _ask(store, "text", "And now?")  # a link made after the revocation answers
    dispatcher.step()
    (fresh,) = _links(text_of(next(m for m in inbox.received() if later in str(m))))
    with httpx.Client(timeout=60) as http:
        shown = http.get(link)
        assert "access was revoked" in shown.text and "<form" not in shown.text
        refused = http.post(link, data={"answer": "because"})
        assert refused.status_code == 409 and "access was revoked" in refused.text
        assert http.post(fresh, data={"answer": "now"}).status_code == 200
    assert store.get_interaction(first, user="ada").status == "pending"
    assert store.get_interaction(later, user="ada").answer == "now"


def test_a_mail_says_who_asks_where_and_by_when_in_both_parts(
    served: tuple[LiveServer, Inbox, Dispatcher],
) -> None:
    server, inbox, dispatcher = served
    store = server.store
    store.ensure_user("ada")
    with store.transaction() as tx:
        addresses.set_reach(tx, "ada", email="ada@example.org", now=store.now())
    conversation = store.create_conversation("ada", "deploys")
    asked = store.ask(
        Question(
            "ada",
            conversation.id,
            "confirm",
            "Deploy to production?",
            title="Deploy",
            requester={"type": "agent", "name": "deployer"},
            expires_in="2h",
        )
    ).interaction
    assert dispatcher.step() == 1
    (mail,) = inbox.received()
    assert mail["Subject"] == "Deploy — the agent deployer asks"
    deadline = asked.expires_at.strftime("%Y-%m-%d %H:%M UTC")  # type: ignore[union-attr]
    link = f"{server.url}/?c={conversation.id}"
    for part in (text_of(mail), html_of(mail)):
        assert "Asked by the agent deployer for ada." in part
        assert "In the conversation “deploys”." in part
        assert f"Answer by {deadline}." in part
        assert link in part
        assert f"It expires {deadline}." in part

"""The pages around the chat (API reference offline, favicon, sign-in) and Markdown messages."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest

from pawflow.records import Event
from pawflow.server.credentials import issue_signin_link, issue_token
from pawflow.server.events import frames
from pawflow.server.markdown import render, with_html
from pawflow.server.testing import LiveServer, live_server
from pawflow.testing import temporary_store
from tests.server.conftest import QUIET


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with (
        temporary_store("sqlite", tmp_path_factory.mktemp("pages")) as store,
        live_server(store, settings=QUIET) as served,
    ):
        yield served


def _client(server: LiveServer, user: str) -> httpx.Client:
    token = issue_token(server.store, user)
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"})


# -- Markdown ---------------------------------------------------------------------------


def test_markdown_renders_lists_emphasis_code_and_links() -> None:
    html = render("Plan:\n\n1. **Draft** the *note*\n2. Run `make`\n\n[docs](https://x.test)")
    assert "<ol>" in html and "<li><strong>Draft</strong> the <em>note</em></li>" in html
    assert "<code>make</code>" in html
    assert '<a href="https://x.test" rel="noopener noreferrer nofollow">docs</a>' in html


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "<b>bold</b>",
        '<a href="javascript:alert(1)">x</a>',
    ],
)
def test_raw_html_in_a_message_shows_as_text(text: str) -> None:
    html = render(text)
    assert "<script" not in html and "<img" not in html and "<b>" not in html
    assert "&lt;" in html  # shown, escaped
    assert "<a " not in html


def test_markdown_reads_as_chat_text() -> None:
    closing = render("Reports:\n\n- Alpha\n- Gamma\nWhich one should I open?")
    assert "<li>Gamma</li>" in closing and "<p>Which one should I open?</p>" in closing
    quoted = render("> the plan\nsounds good")
    assert "<blockquote>\n<p>the plan</p>\n</blockquote>\n<p>sounds good</p>" in quoted
    assert render("From: a@x.test\nTo: b@x.test") == "<p>From: a@x.test<br>\nTo: b@x.test</p>"
    item = render("1. one\n   more of one\n2. two")
    assert "<li>one<br>\nmore of one</li>" in item
    fenced = render("```\n- a\nb\n```")
    assert fenced == "<pre><code>- a\nb\n</code></pre>"


def test_a_markdown_link_to_a_script_is_not_a_link() -> None:
    assert "<a " not in render("[click](javascript:alert(1))")
    assert "<a " not in render("[click](data:text/html,x)")


def test_only_agents_and_notices_get_html() -> None:
    base = {"content": "**hi**", "role": "user"}
    assert "html" not in with_html(base)
    assert with_html({**base, "role": "assistant"})["html"] == "<p><strong>hi</strong></p>"


def test_history_sent_messages_and_live_events_carry_the_html(server: LiveServer) -> None:
    store = server.store
    made = store.create_conversation("mia", "Notes")
    with store.unit() as u:
        u.messages.append_message(
            made.id, content="- one\n- **two**", role="assistant", author="planner"
        )
    with _client(server, "mia") as client:
        sent = client.post(
            "/api/actions/send_message", json={"conversation_id": made.id, "content": "*me*"}
        ).json()["message"]
        assert "html" not in sent or sent["html"] is None
        history = client.post("/api/actions/get_history", json={"conversation_id": made.id}).json()[
            "messages"
        ]
    assert history[0]["html"] == "<ul>\n<li>one</li>\n<li><strong>two</strong></li>\n</ul>"
    assert history[0]["content"] == "- one\n- **two**"
    event = Event(
        seq=7,
        conversation_id=made.id,
        type="message",
        data={**history[0]},
        created_at=store.now(),
    )
    framed = frames(event)
    assert '"html":"<ul>' in framed


# -- /docs, /favicon.ico ----------------------------------------------------------------


def test_the_api_reference_is_served_from_this_server(server: LiveServer) -> None:
    with _client(server, "doc") as client:
        page = client.get("/docs")
        assert page.status_code == 200
        sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
        assert sources and all(s.startswith("/") for s in sources), sources  # nothing remote
        assert "<script>" not in page.text and "style=" not in page.text  # files only
        for source in sources:
            assert client.get(source).status_code == 200, source
        assert "SwaggerUIBundle" in client.get("/docs/assets/swagger-ui-bundle.js").text
    assert httpx.get(f"{server.url}/docs").status_code == 401


def test_the_favicon_is_an_icon(server: LiveServer) -> None:
    icon = httpx.get(f"{server.url}/favicon.ico")
    assert icon.status_code == 200
    assert icon.headers["content-type"] == "image/vnd.microsoft.icon"
    assert icon.content[:4] == b"\x00\x00\x01\x00"  # an ICO header


# -- sign-in ----------------------------------------------------------------------------


def test_the_signin_page_says_who_signs_in_and_is_styled(server: LiveServer) -> None:
    link = issue_signin_link(server.store, "zoé", base_url=server.url, ttl=timedelta(minutes=5))
    page = httpx.get(link)
    assert page.status_code == 200
    assert '<h1>Sign in as <span class="user">zoé</span></h1>' in page.text
    assert '<link rel="stylesheet" href="/static/signin.css">' in page.text
    assert "style=" not in page.text and "<script" not in page.text
    assert httpx.get(f"{server.url}/static/signin.css").status_code == 200


def test_an_unusable_link_says_so_before_anything_is_pressed(server: LiveServer) -> None:
    page = httpx.get(f"{server.url}/signin?token=not-a-real-secret")
    assert page.status_code == 400
    assert "This link cannot sign you in" in page.text
    assert "<form" not in page.text

"""Live behaviour: two tabs, reloads, server restarts, a cut stream, the pending panel and
its badge across conversations, notifications, sign-in, conversations and messages."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta

import pytest
from playwright.sync_api import APIResponse, Browser, Route, expect

from pawflow.server.credentials import issue_signin_link
from pawflow.store import Question
from pawflow.store.ledger.events import prune_events
from tests.served import Served
from tests.webchat.conftest import TIMEZONE, Person, block, sign_in

pytestmark = pytest.mark.slow


def test_an_answer_in_one_tab_closes_the_block_in_the_other(
    person: Callable[..., Person],
) -> None:
    ann = person()
    chat = ann.conversation("Two tabs")
    first = ann.open_conversation(chat)
    second = ann.open_conversation(chat)
    asked = ann.ask(chat, "choice", "Which colour?", options=["red", "blue"])
    for tab in (first, second):  # arrived live, without a reload
        expect(block(tab, asked.id).get_by_role("button", name="blue")).to_be_visible()
        expect(tab.locator("#pending-badge")).to_have_text("1")

    block(first, asked.id).get_by_role("button", name="blue").click()

    for tab in (first, second):
        expect(block(tab, asked.id)).to_have_attribute("data-status", "answered")
        expect(block(tab, asked.id)).to_contain_text("blue")
        expect(block(tab, asked.id).get_by_role("button")).to_have_count(0)
        expect(tab.locator("#pending-badge")).to_have_text("0")
    assert ann.record(asked.id).answer == "blue"


def test_a_pending_block_stays_answerable_across_reloads_and_a_server_restart(
    person: Callable[..., Person], served: Served
) -> None:
    ann = person()
    chat = ann.conversation("Restart")
    asked = ann.ask(chat, "text", "What changed?")
    page = ann.open_conversation(chat)
    page.reload()
    expect(block(page, asked.id).get_by_label("Your answer")).to_be_editable()

    served.kill()
    expect(page.locator("#connection")).to_have_text("Reconnecting…")
    served.start()
    expect(page.locator("#connection")).to_have_text("Live")
    field = block(page, asked.id).get_by_label("Your answer")
    field.fill("the server restarted")
    block(page, asked.id).get_by_role("button", name="Send").click()
    expect(block(page, asked.id)).to_have_attribute("data-status", "answered")
    assert ann.record(asked.id).answer == "the server restarted"

    later = ann.ask(chat, "confirm", "Again?")
    served.kill()
    served.start()
    page.reload()
    block(page, later.id).get_by_role("button", name="No").click()
    expect(block(page, later.id)).to_have_attribute("data-status", "answered")
    assert ann.record(later.id).answer is False


def test_nothing_is_missed_while_the_stream_is_cut(
    person: Callable[..., Person], served: Served
) -> None:
    ann = person()
    chat = ann.conversation("Cut")
    other = ann.conversation("Elsewhere")
    page = ann.open_conversation(chat)
    expect(page.locator("#connection")).to_have_text("Live")

    served.kill()  # the stream is cut mid-flight; meanwhile another process writes
    store = ann.store
    with store.unit() as u:
        u.messages.append_message(
            chat, content="Written while you were away", role="assistant", author="bot"
        )
    asked = store.ask(Question(ann.name, chat, "confirm", "Still there?")).interaction
    elsewhere = store.ask(Question(ann.name, other, "text", "And here?")).interaction
    with store.unit() as u:
        u.messages.notify_user(ann.name, "The backup failed", title="Backup", urgency="high")
    served.start()

    expect(page.locator(".message-content", has_text="Written while you were away")).to_be_visible()
    expect(block(page, asked.id).get_by_role("button", name="Yes")).to_be_visible()
    toast = page.locator(".toast", has_text="The backup failed")
    expect(toast).to_be_visible()
    expect(toast).to_contain_text("Urgent")
    expect(toast).to_have_attribute("role", "alert")
    expect(page.locator("#pending-badge")).to_have_text("2")
    expect(page.locator(f'a[data-conversation-id="{other}"] .count')).to_contain_text("1")
    block(page, asked.id).get_by_role("button", name="Yes").click()
    expect(page.locator("#pending-badge")).to_have_text("1")
    assert ann.record(asked.id).answer is True
    assert ann.record(elsewhere.id).status == "pending"


def test_a_gap_in_the_log_makes_the_page_reload_what_it_could_not_replay(
    person: Callable[..., Person], served: Served
) -> None:
    ann = person()
    chat = ann.conversation("Gap")
    page = ann.open_conversation(chat)
    expect(page.locator("#connection")).to_have_text("Live")

    served.kill()
    store = ann.store
    with store.unit() as u:
        u.messages.append_message(
            chat, content="Logged, then pruned", role="assistant", author="bot"
        )
    asked = store.ask(Question(ann.name, chat, "integer", "How many?")).interaction
    with store.transaction() as tx:  # the retention sweep drops everything logged so far
        prune_events(tx, store.now() + timedelta(days=1))
    served.start()

    expect(block(page, asked.id).get_by_label("Whole number")).to_be_editable()
    expect(page.locator(".message-content", has_text="Logged, then pruned")).to_be_visible()
    expect(page.locator("#pending-badge")).to_have_text("1")
    block(page, asked.id).get_by_label("Whole number").fill("3")
    block(page, asked.id).get_by_role("button", name="Send").click()
    expect(page.locator("#pending-badge")).to_have_text("0")
    assert ann.record(asked.id).answer == 3


def test_the_pending_panel_lists_every_conversation_and_answers_in_place(
    person: Callable[..., Person],
) -> None:
    ann = person()
    titles = ["Travel", "Hiring", "Budget"]
    chats = [ann.conversation(title) for title in titles]
    asked = [
        ann.ask(chats[0], "confirm", "Book the train?", expires_in="3d"),
        ann.ask(chats[1], "choice", "Which candidate?", options=["kim", "lee"]),
        ann.ask(chats[2], "decimal", "Ceiling?"),
    ]
    conversation = ann.open_conversation(chats[1])
    expect(conversation.locator("#pending-badge")).to_have_text("3")
    conversation.get_by_role("link", name="Pending requests: 3").click()
    expect(conversation).to_have_url(re.compile(r"/confirmations$"))
    panel = ann.open("/confirmations")

    for tab in (conversation, panel):
        items = tab.locator(".inbox-item")
        expect(items).to_have_count(3)
        for index, title in enumerate(titles):  # oldest first, each with its conversation
            expect(items.nth(index).locator(".inbox-where")).to_have_text(f"In {title}")
            expect(items.nth(index).locator("article")).to_have_attribute(
                "data-request-id", asked[index].id
            )
        expect(items.nth(0)).to_contain_text("expires in 3 days")
        expect(items.nth(1)).to_contain_text("no deadline")
    tab_in_chat = ann.open_conversation(chats[1])

    block(panel, asked[1].id).get_by_role("button", name="lee").click()
    expect(block(panel, asked[1].id)).to_have_attribute("data-status", "answered")
    for tab in (panel, tab_in_chat, conversation):
        expect(tab.locator("#pending-badge")).to_have_text("2")
    expect(block(tab_in_chat, asked[1].id)).to_have_attribute("data-status", "answered")
    expect(block(tab_in_chat, asked[1].id)).to_contain_text("lee")

    item = panel.locator(".inbox-item").nth(2)
    item.get_by_label("Number").fill("1500.00")
    item.get_by_role("button", name="Send").click()
    expect(panel.locator("#pending-badge")).to_have_text("1")
    assert ann.record(asked[2].id).answer == "1500"
    panel.locator(".inbox-where").nth(0).get_by_role("link", name="Travel").click()
    expect(panel).to_have_url(re.compile(re.escape(f"/?c={chats[0]}")))
    expect(panel.get_by_role("heading", name="Travel")).to_be_visible()
    expect(block(panel, asked[0].id).get_by_role("button", name="Yes")).to_be_visible()


def test_notifications_show_as_a_toast_and_in_the_conversation(
    person: Callable[..., Person],
) -> None:
    ann = person()
    chat = ann.conversation("Ops")
    page = ann.open_conversation(chat)
    with ann.store.unit() as u:
        assert (
            u.messages.notify_user(
                ann.name, "Disk almost full", urgency="high", title="Storage", conversation_id=chat
            )
            == "sent"
        )
        u.messages.notify_user(ann.name, "Nightly report ready", urgency="low")
    expect(page.locator(".toast", has_text="Nightly report ready")).to_contain_text("Low")
    urgent = page.locator(".toast", has_text="Disk almost full")
    expect(urgent).to_contain_text("Urgent")
    expect(urgent).to_contain_text("Storage")
    note = page.locator(".message--notification", has_text="Disk almost full")
    expect(note).to_have_class(re.compile("urgency--high"))
    expect(note.locator(".urgency-tag")).to_have_text("Urgent")
    urgent.get_by_role("button", name="Dismiss notification").click()
    expect(urgent).to_have_count(0)


def test_conversations_are_created_and_messages_arrive_live(
    person: Callable[..., Person],
) -> None:
    ann = person()
    page = ann.open("/")
    page.get_by_role("button", name="New conversation").click()
    page.get_by_label("Title of the new conversation").fill("Weekend plans")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_role("heading", name="Weekend plans")).to_be_visible()
    composer = page.get_by_label("Message", exact=True)
    composer.fill("Shall we hike?")
    composer.press("Enter")
    expect(page.locator(".message--mine")).to_have_text(re.compile("Shall we hike?"))
    chat = next(c.id for c in ann.api.list_conversations() if c.title == "Weekend plans")
    assert [m.content for m in ann.api.get_history(chat)] == ["Shall we hike?"]

    with ann.store.unit() as u:
        u.messages.append_message(
            chat, content="Saturday looks sunny.", role="assistant", author="helper"
        )
    expect(page.locator(".message--assistant")).to_contain_text("Saturday looks sunny.")
    other = ann.conversation("Elsewhere")
    with ann.store.unit() as u:
        u.messages.append_message(other, content="psst", role="assistant", author="helper")
    expect(page.locator(f'a[data-conversation-id="{other}"] .dot')).to_be_attached()
    page.reload()
    expect(page.locator(".message")).to_have_count(2)
    expect(page.get_by_role("link", name=re.compile("Weekend plans"))).to_have_attribute(
        "aria-current", "page"
    )


def test_a_conversation_made_while_the_list_is_still_on_its_way_stays_listed(
    person: Callable[..., Person],
) -> None:
    """The list of conversations the page reads on start arrives only after the person has
    made a new one (a slow network): that list, read before, does not take the new one away."""
    ann = person()
    ann.conversation("Older")
    held: list[tuple[Route, APIResponse]] = []
    made = False

    def hold_early_lists(route: Route) -> None:
        if made:
            route.continue_()
        else:  # read now, delivered later: what the server said before the new one existed
            held.append((route, route.fetch()))

    ann.context.route("**/api/actions/list_conversations", hold_early_lists)
    with ann.context.expect_event("request", lambda r: "list_conversations" in r.url):
        page = ann.open("/")
    page.get_by_role("button", name="New conversation").click()
    page.get_by_label("Title of the new conversation").fill("Weekend plans")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_role("heading", name="Weekend plans")).to_be_visible()
    made = True
    assert held, "the page read its conversations on start"
    for route, response in held:
        route.fulfill(response=response)

    expect(page.locator("section.conversation")).to_have_attribute("data-loaded", "true")
    listed = page.get_by_role("navigation", name="Conversations").get_by_role("link")
    expect(listed).to_have_text([re.compile("Weekend plans"), re.compile("Older")])
    expect(page.get_by_role("heading", name="Weekend plans")).to_be_visible()


def test_the_link_serve_printed_signs_in_and_signing_out_ends_the_session(
    served: Served, browser: Browser
) -> None:
    context = browser.new_context(timezone_id=TIMEZONE)
    try:
        sign_in(context, served.printed_link())
        page = context.new_page()
        page.goto(served.url)
        expect(page.locator("#who")).to_have_text("local")
        page.get_by_role("button", name="Sign out", exact=True).click()
        expect(page.get_by_role("heading", name="Sign in to PawFlow")).to_be_visible()
        expect(page.locator("#pending-button")).to_be_hidden()
    finally:
        context.close()


def test_signing_out_everywhere_ends_the_persons_other_browser_sessions(
    person: Callable[..., Person], browser: Browser
) -> None:
    ann = person("ann")
    elsewhere = browser.new_context(timezone_id=TIMEZONE)
    try:
        sign_in(elsewhere, ann.served.url + "/signin?token=" + _link_secret(ann))
        other = elsewhere.new_page()
        other.goto(ann.served.url)
        expect(other.locator("#who")).to_have_text(ann.name)
        page = ann.open("/")
        page.get_by_text("Account", exact=True).click()
        page.get_by_role("button", name="Sign out everywhere").click()
        expect(page.get_by_role("heading", name="Sign in to PawFlow")).to_be_visible()
        other.reload()
        expect(other.get_by_role("heading", name="Sign in to PawFlow")).to_be_visible()
        # The person's API token is not a browser session: it still works.
        assert ann.api.whoami() == ann.name
    finally:
        elsewhere.close()


def _link_secret(who: Person) -> str:
    link = issue_signin_link(who.store, who.name, base_url=who.served.url, ttl=timedelta(minutes=5))
    return link.split("token=", 1)[1]

"""Take the web chat's screenshots for the manual (docs/web-chat.md) from the real page.

Serves a fresh store on a loopback port, fills it with a few conversations, signs in with a
one-time link in Debian's chromium (driven by Playwright) and writes PNG files to
``docs/screenshots/``::

    .venv/bin/python scripts/screenshots.py [--out docs/screenshots]
"""

from __future__ import annotations

import argparse
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect, sync_playwright

from pawflow.demo.tour import EXAMPLES
from pawflow.server.auth import issue_signin_link
from pawflow.server.settings import ServerSettings
from pawflow.server.testing import CHROMIUM, CHROMIUM_ARGS, live_server
from pawflow.store import Store, open_store

USER = "ada"
AGENT = {"type": "agent", "name": "planner"}
FLOW = {"type": "flow", "name": "release"}


def example(kind: str, title: str | None = None) -> dict[str, Any]:
    found = next(
        e for e in EXAMPLES if e["kind"] == kind and (title is None or e.get("title") == title)
    )
    return {k: v for k, v in found.items() if k not in ("kind", "message")}


def seed(store: Store) -> dict[str, str]:
    """Three conversations with messages, answered and pending requests."""
    say = store.messages.append
    ask = store.request_interaction
    hiring = store.create_conversation(USER, "Hiring: platform team").id
    say(hiring, "Kim accepted the offer and starts in January.", role="assistant", author="planner")
    ask(
        USER,
        hiring,
        "form",
        "Tell me about the new teammate so I can set up their accounts.",
        title="New teammate",
        requester=AGENT,
        response_schema=example("form")["response_schema"],
        expires_in="2w",
    )
    release = store.create_conversation(USER, "Release 2.4").id
    say(
        release,
        "Release 2.4 is built: 14 changes, every check green.",
        role="assistant",
        author="release",
    )
    ask(
        USER,
        release,
        "confirm",
        "Merge the dependency update?",
        requester=FLOW,
        **example("confirm", "Merge"),
    )
    ask(
        USER,
        release,
        "decimal",
        "What is the budget ceiling for the launch, in euros?",
        requester=FLOW,
        response_schema={"type": "number", "minimum": 0},
        expires_in="3d",
    )
    offsite = store.create_conversation(USER, "Berlin offsite").id
    say(offsite, "Can you book the travel for the Berlin offsite?", role="user", author=USER)
    hotel = ask(
        USER,
        offsite,
        "confirm",
        "Also book the hotel by the venue (3 nights, €420)?",
        title="Hotel",
        requester=AGENT,
    )
    store.respond_interaction(hotel.id, True, user=USER)
    room = ask(
        USER,
        offsite,
        "choice",
        "Which room would you like?",
        title="Room",
        requester=AGENT,
        options=[
            {"value": "r-204", "label": "Room 204 · quiet, courtyard side"},
            {"value": "r-512", "label": "Room 512 · city view"},
        ],
    )
    store.respond_interaction(room.id, "r-204", user=USER)
    # The agent asks first and then says what it asked: the page shows its message first.
    flight = ask(
        USER,
        offsite,
        "choice",
        "Which flight should I book for Tuesday?",
        title="Flight",
        requester=AGENT,
        **{k: v for k, v in example("choice", "Flight").items() if k != "title"},
    )
    say(
        offsite,
        "Hotel booked. For the flights I found **three morning options** on Tuesday:\n\n"
        "- all of them land before *10:00*\n"
        "- prices include one checked bag\n\n"
        "Pick the one you prefer below.",
        role="assistant",
        author="planner",
        data={"request_id": flight.id},
    )
    ask(
        USER,
        offsite,
        "multi",
        "Which team dinners should I reserve?",
        title="Dinners",
        requester=AGENT,
        options=["Monday", "Tuesday", "Wednesday"],
        expires_in="5d",
    )
    return {"hiring": hiring, "release": release, "offsite": offsite}


def sign_in(page: Page, link: str) -> None:
    page.goto(link)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#who")).to_have_text(USER)


def open_conversation(page: Page, base: str, conversation_id: str) -> None:
    page.goto(f"{base}/?c={conversation_id}")
    expect(page.locator("section.conversation")).to_have_attribute("data-loaded", "true")


def take(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as directory:
        store = open_store(f"sqlite:///{Path(directory) / 'pawflow.db'}")
        settings = ServerSettings(sweep_interval=3600)
        try:
            with live_server(store, settings=settings) as server, sync_playwright() as playwright:
                chats = seed(store)
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, "--hide-scrollbars"]
                )
                desktop = browser.new_context(
                    viewport={"width": 1280, "height": 1000},
                    device_scale_factor=1,
                    timezone_id="Europe/Paris",
                    locale="en-GB",
                )
                page = desktop.new_page()
                link = issue_signin_link(store, USER, base_url=server.url, ttl=timedelta(hours=1))
                sign_in(page, link)
                expect(page.locator("#connection")).to_have_text("Live")

                open_conversation(page, server.url, chats["offsite"])
                store.messages.notify_user(
                    USER,
                    "LH 981 went up by €20 in the last hour.",
                    title="Price alert",
                    urgency="high",
                )
                expect(page.locator(".toast")).to_be_visible()
                page.locator(".timeline-scroll").evaluate("el => { el.scrollTop = 0; }")
                written.append(out / "conversation.png")
                page.screenshot(path=written[-1])
                page.locator(".toast button").click()

                page.get_by_role("link", name="Pending requests: 5").click()
                expect(page.locator(".inbox-item")).to_have_count(5)
                written.append(out / "pending.png")
                page.screenshot(path=written[-1])

                open_conversation(page, server.url, chats["hiring"])
                form = page.locator('article.block[data-kind="form"]')
                form.get_by_label("Full name").fill("K")
                form.get_by_label("Email").fill("kim@")
                form.get_by_label("Desk number").fill("0")
                form.get_by_role("button", name="Submit").click()
                expect(form.locator(".field-error:not([hidden])")).to_have_count(4)
                written.append(out / "form-errors.png")
                form.screenshot(path=written[-1])

                phone = browser.new_context(
                    viewport={"width": 360, "height": 760},
                    device_scale_factor=2,
                    is_mobile=True,
                    has_touch=True,
                    timezone_id="Europe/Paris",
                    locale="en-GB",
                )
                mobile = phone.new_page()
                sign_in(
                    mobile,
                    issue_signin_link(store, USER, base_url=server.url, ttl=timedelta(hours=1)),
                )
                open_conversation(mobile, server.url, chats["offsite"])
                mobile.locator(
                    'article.block[data-kind="choice"][data-status="pending"]'
                ).scroll_into_view_if_needed()
                written.append(out / "mobile.png")
                mobile.screenshot(path=written[-1])
                browser.close()
        finally:
            store.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    for path in take(parser.parse_args().out):
        print(path)


if __name__ == "__main__":
    main()

"""Single sign-on in Chromium: a person signs in at the provider's page and lands in the web
chat; an admin adds a member to a group on the admin page, and the member then sees the
group's request. One test (the rest run in-process): a real server on loopback, the real
provider, Debian's chromium."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from pawflow.server.credentials import issue_token
from pawflow.server.testing import LiveServer, live_server
from pawflow.testing import temporary_store
from tests.oidc.conftest import Provider, sso_settings
from tests.webchat.conftest import TIMEZONE, launch, require_chromium

playwright_api = pytest.importorskip("playwright.sync_api")
from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402


@pytest.fixture
def browser() -> Iterator[Browser]:
    require_chromium()
    with sync_playwright() as playwright:
        launched = launch(playwright)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def server(tmp_path: Path, idp: Provider) -> Iterator[tuple[LiveServer, str]]:
    with temporary_store("sqlite", tmp_path) as store:
        root = issue_token(store, "root")  # the first user, who asks
        settings = sso_settings(idp.issuer, public_url=None)
        with live_server(store, settings=settings) as served:
            yield served, root


def signed_in(browser: Browser, url: str, login: str) -> Page:
    page = browser.new_context(timezone_id=TIMEZONE, locale="en-GB").new_page()
    page.set_default_timeout(15_000)
    page.goto(url)  # signed out: the chat points to the sign-in page, which offers the provider
    page.get_by_role("link", name="the sign-in page").click()
    page.get_by_role("link", name="Sign in with Example ID").click()
    page.locator("input[name=login]").fill(login)  # the provider's own page
    page.locator("input[name=password]").fill("any password")
    page.locator("button[type=submit]").first.click()
    expect(page.locator("#who")).to_have_text(f"{login}@example.org")
    return page


def test_sign_in_at_the_provider_then_an_admin_puts_a_member_in_a_group(
    browser: Browser, server: tuple[LiveServer, str]
) -> None:
    served, root = server
    with httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {root}"}) as api:
        conversation = api.post("/api/actions/create_conversation", json={"title": "t"}).json()
        asked = api.post(
            "/api/actions/request_interaction",
            json={
                "conversation_id": conversation["conversation"]["id"],
                "kind": "confirm",
                "message": "Ship the reviewers' release?",
                "assignees": ["group:reviewers"],
            },
        )
        assert asked.status_code == 200, asked.text
    bob = signed_in(browser, served.url, "bob")
    expect(bob.locator("#admin-link")).to_be_hidden()  # a member never sees the way in
    bob.goto(f"{served.url}/confirmations")
    expect(bob.get_by_text("Ship the reviewers' release?")).to_have_count(0)

    ann = signed_in(browser, served.url, "ann")  # in the provider's admin group
    ann.set_viewport_size({"width": 390, "height": 844})
    ann.locator("#admin-link").click()
    expect(ann.get_by_role("heading", name="Admin")).to_be_visible()
    form = ann.get_by_role("form", name="Add to group")
    form.get_by_label("Group").fill("reviewers")
    form.get_by_label("User").fill("bob@example.org")
    form.get_by_label("User").press("Enter")  # the keyboard is enough
    expect(ann.get_by_role("region", name="Groups").get_by_text("reviewers")).to_be_visible()
    trail = ann.get_by_role("region", name="Audit trail")
    expect(trail.get_by_role("cell", name="group.add")).to_be_visible()  # who, what, from where
    wide = ann.evaluate(
        "[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right"
        " > 391).map(e => e.tagName + '.' + e.className).slice(0, 5)"
    )
    assert wide == [], f"the admin page is wider than 390 px: {wide}"

    bob.goto(f"{served.url}/confirmations")
    expect(bob.get_by_text("Ship the reviewers' release?")).to_be_visible()

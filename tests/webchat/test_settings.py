"""The web chat's settings: where the signed-in user is notified, saved through the actions;
and its about: the server's version."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import expect

import pawflow
from pawflow.store.reach import addresses
from tests.webchat.conftest import Person

pytestmark = pytest.mark.slow


def test_notifications_are_shown_and_saved(person: Callable[..., Person]) -> None:
    """The page offers only the channels this server sends (the demo: no mail, no Slack),
    says why the others are off, and saves what is chosen without touching the rest."""
    ann = person()
    with ann.store.transaction() as tx:
        addresses.set_reach(tx, ann.name, email="ann@example.org", now=ann.store.now())
    page = ann.open("/")
    page.get_by_text("Notifications", exact=True).click()
    expect(page.locator(".channels-off")).to_have_text(
        "This server does not send email (no PAWFLOW_SMTP_URL), slack (no PAWFLOW_SLACK_BOT_TOKEN)."
    )
    expect(page.get_by_label("every channel with an address")).to_be_checked()
    expect(page.get_by_label("Email address")).to_be_hidden()
    expect(page.get_by_label("Slack user id")).to_be_hidden()
    expect(page.get_by_label("Email", exact=True)).to_be_hidden()
    expect(page.get_by_label("Slack", exact=True)).to_be_hidden()

    page.get_by_label("every channel with an address").uncheck()
    page.get_by_label("Webhooks", exact=True).check()
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status").filter(has_text="Saved.")).to_be_visible()
    with ann.store.transaction(write=False) as tx:
        reach = addresses.get_reach(tx, ann.name)
    assert (reach.email, reach.slack, reach.notify) == ("ann@example.org", None, ("webhook",))

    page.get_by_label("Notification URL (Apprise)").fill("nope://example.org")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".notify-settings .note[role=status]")).to_contain_text("notify_url")
    assert not ann.script_errors


def test_the_about_names_the_server_s_version(person: Callable[..., Person]) -> None:
    ann = person()
    page = ann.open("/")
    page.get_by_text("About", exact=True).click()
    expect(page.locator(".about")).to_contain_text(f"PawFlow {pawflow.__version__} —")
    expect(page.get_by_role("link", name="API reference")).to_have_attribute("href", "/docs")
    assert not ann.script_errors

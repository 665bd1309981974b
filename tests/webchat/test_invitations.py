"""A shared conversation reaches the web chat as an invitation: accept joins it, decline
drops it, and until then nothing of the conversation shows. The page runs under the
strict Content-Security-Policy without a single violation."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page, expect

from tests.webchat.conftest import Person


def _watch_policy(page: Page) -> list[str]:
    violations: list[str] = []
    page.on(
        "console",
        lambda message: (
            violations.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    return violations


def test_an_invitation_is_accepted_from_the_conversation_list(
    person: Callable[..., Person],
) -> None:
    ann, ben = person("ann"), person("ben")
    page = ben.open("/")
    violations = _watch_policy(page)
    page.reload()
    expect(page.locator("#connection")).to_have_text("Live")
    chat = ann.conversation("Budget review")
    ann.api.share_conversation(chat, ben.name, "write")

    invitation = page.locator(f'li.invitation[data-conversation-id="{chat}"]')
    expect(invitation).to_contain_text("Budget review")
    expect(invitation).to_contain_text(f"{ann.name} invites you to read and answer")
    expect(page.locator(f'.conversation-list a[data-conversation-id="{chat}"]')).to_have_count(0)

    invitation.get_by_role("button", name="Accept invitation to Budget review").click()
    expect(page.locator("section.conversation")).to_have_attribute("data-loaded", "true")
    expect(page.locator(f'.conversation-list a[data-conversation-id="{chat}"]')).to_have_count(1)
    expect(page.locator("section.invitations")).to_be_hidden()
    assert violations == []


def test_a_declined_invitation_leaves_nothing(person: Callable[..., Person]) -> None:
    ann, ben = person("ann"), person("ben")
    chat = ann.conversation("Not for ben")
    ann.api.share_conversation(chat, ben.name, "read")
    page = ben.open("/")
    invitation = page.locator(f'li.invitation[data-conversation-id="{chat}"]')
    expect(invitation).to_contain_text(f"{ann.name} invites you to read")
    invitation.get_by_role("button", name="Decline invitation to Not for ben").click()
    expect(page.locator("section.invitations")).to_be_hidden()
    page.reload()
    expect(page.locator("#connection")).to_have_text("Live")
    expect(page.locator("li.invitation")).to_have_count(0)
    expect(page.locator(f'.conversation-list a[data-conversation-id="{chat}"]')).to_have_count(0)

"""Web Push in Chromium: the chat is an installable app whose service worker shows a pushed
request, and whose action answers it, once.

The push goes the whole way but for one hop: the settings page subscribes the browser, the
dispatcher encrypts and signs a push to the subscription's endpoint, a local push service
(``tests/channels/push_service.py``) checks the VAPID token and decrypts it, and the DevTools
protocol delivers what it decrypted to the real service worker
(``ServiceWorker.deliverPushMessage``), as the browser's push service would. Headless
Chromium cannot register at Google's push service, so the page's
``PushManager.subscribe`` is the one thing stood in for: it answers with the local push
service's subscription.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from pawflow.channels import Dispatcher, PushChannel
from pawflow.channels.push import server_keys
from pawflow.egress import EgressRule
from pawflow.server.credentials import issue_signin_link
from pawflow.server.settings import ServerSettings
from pawflow.server.testing import LiveServer, live_server
from pawflow.store import Question, Store
from pawflow.store.reach import web_push
from pawflow.testing import temporary_store
from tests.channels.push_service import PushService, push_service
from tests.webchat.conftest import sign_in

playwright_api = pytest.importorskip("playwright.sync_api")
from playwright.sync_api import Browser, BrowserContext, Page, Worker, expect  # noqa: E402

LOOPBACK = EgressRule.parse("127.0.0.1")
SETTINGS = ServerSettings(sweep_interval=3600, egress_allowed_hosts="127.0.0.1")
STAND_IN = """
(subscription) => {
  const made = {
    endpoint: subscription.endpoint,
    options: { userVisibleOnly: true },
    toJSON: () => subscription,
    unsubscribe: async () => { current = null; return true; },
  };
  let current = null;
  PushManager.prototype.getSubscription = async function () { return current; };
  PushManager.prototype.subscribe = async function (options) {
    if (!options || !options.applicationServerKey) throw new Error("no applicationServerKey");
    current = made;
    return made;
  };
}
"""


def eventually(page: Page, check: Callable[[], Any], what: str, timeout: float = 15) -> Any:
    """``check()``'s first true value, polled until ``timeout`` (the page's loop runs
    between polls, so the DevTools session's events arrive)."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        page.wait_for_timeout(50)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    with (
        temporary_store("sqlite", tmp_path) as store,
        live_server(store, settings=SETTINGS) as running,
    ):
        server_keys(store)  # what serve does on its first start
        yield running


@pytest.fixture
def service(server: LiveServer) -> Iterator[PushService]:
    with push_service(server.store.now) as running:
        yield running


def _signed_in(browser: Browser, server: LiveServer, user: str) -> BrowserContext:
    server.store.ensure_user(user)
    context = browser.new_context(locale="en-GB")
    context.grant_permissions(["notifications"], origin=server.url)
    sign_in(context, issue_signin_link(server.store, user, base_url=server.url, ttl=timedelta(1)))
    return context


def _worker(context: BrowserContext, page: Page) -> Worker:
    page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    found: Worker = eventually(page, lambda: context.service_workers, "the worker")[0]
    return found


def _notifications(worker: Worker) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = worker.evaluate(
        "self.registration.getNotifications().then((all) => all.map((n) =>"
        " ({title: n.title, body: n.body, tag: n.tag, actions: n.actions.map((a) => a.title)})))"
    )
    return found


def _press(worker: Worker, tag: str, action: str) -> None:
    """What the system does when the notification's button ``action`` is pressed."""
    worker.evaluate(
        """async ([tag, action]) => {
          const [shown] = await self.registration.getNotifications({ tag });
          self.dispatchEvent(new NotificationEvent("notificationclick",
            { notification: shown, action }));
        }""",
        [tag, action],
    )


def test_a_pushed_confirm_is_answered_once_from_its_notification(
    browser: Browser, server: LiveServer, service: PushService
) -> None:
    store: Store = server.store
    device = service.device("phone")
    context = _signed_in(browser, server, "ada")
    context.add_init_script(f"({STAND_IN})({json.dumps(device.subscription())})")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(server.url + "/")
    # The installable app: its manifest and its service worker.
    manifest = page.evaluate(
        "fetch(document.querySelector('link[rel=manifest]').href).then((r) => r.json())"
    )
    assert manifest["display"] == "standalone"
    assert {icon["sizes"] for icon in manifest["icons"]} == {"192x192", "512x512"}
    worker = _worker(context, page)

    page.get_by_text("Notifications", exact=True).click()
    switch = page.get_by_label("Notify this device")
    switch.check()
    expect(page.get_by_text("This device will be notified.")).to_be_visible()
    with store.transaction(write=False) as tx:
        assert [d.endpoint for d in web_push.of_user(tx, "ada")] == [device.endpoint]
    devices = page.get_by_role("list", name="Devices notified")
    expect(devices.get_by_role("listitem")).to_have_count(1)
    expect(devices).to_contain_text("Chrome on Linux, since")

    conversation = store.create_conversation("ada", "Releases")
    request = store.ask(
        Question("ada", conversation.id, "confirm", "Ship 2.4?", expires_in="2h")
    ).interaction
    channel = PushChannel(
        store, server_keys(store), subject="mailto:ops@example.org", rule=LOOPBACK
    )
    Dispatcher(store, [channel], base_url=server.url, owner="test").step()
    (push,) = service.received()
    assert service.refused == []

    cdp = context.new_cdp_session(page)
    registrations: list[str] = []
    cdp.on(
        "ServiceWorker.workerRegistrationUpdated",
        lambda event: registrations.extend(r["registrationId"] for r in event["registrations"]),
    )
    cdp.send("ServiceWorker.enable")
    registration = eventually(page, lambda: registrations and registrations[0], "the registration")

    def deliver() -> None:
        cdp.send(
            "ServiceWorker.deliverPushMessage",
            {
                "origin": server.url,
                "registrationId": registration,
                "data": json.dumps(push.payload),
            },
        )

    deliver()
    (shown,) = eventually(page, lambda: _notifications(worker), "the notification")
    body = shown.pop("body")
    assert shown == {
        "title": "Ship 2.4?",
        "tag": f"pawflow:{request.id}",
        "actions": ["Yes", "No"],
    }
    *said, by = body.split("\n")
    assert said == ["Ship 2.4?", "", "Asked by ada.", "In the conversation “Releases”."]
    # The deadline as the device says a time, in its own time zone, not the push's UTC.
    local = worker.evaluate(
        "(at) => new Intl.DateTimeFormat(undefined, {dateStyle: 'medium', timeStyle: 'short'})"
        ".format(new Date(at))",
        push.payload["deadline"]["at"],
    )
    assert by == f"Answer by {local}." and "UTC" not in by
    assert store.get_interaction(request.id, user="ada").status == "pending"  # shown: nothing

    _press(worker, shown["tag"], "0")
    answered = eventually(
        page,
        lambda: (
            (found := store.get_interaction(request.id, user="ada")).status == "answered" and found
        ),
        "the answer",
    )
    assert (answered.answer, answered.answered_by, answered.answered_via) == (True, "ada", "link")
    eventually(
        page,
        lambda: [n for n in _notifications(worker) if n["title"] == "Answered “Yes”"],
        "the notification saying so",
    )

    # The same push again (another device of hers, or a resend): its "No" answers nothing.
    deliver()
    eventually(page, lambda: [n for n in _notifications(worker) if n["actions"]], "the second one")
    _press(worker, shown["tag"], "1")
    (refused,) = eventually(
        page,
        lambda: [n for n in _notifications(worker) if n["title"] == "Not answered"],
        "the refusal",
    )
    assert refused["body"].startswith("Ship 2.4?: it was answered already")
    later = store.get_interaction(request.id, user="ada")
    assert (later.answer, later.answered_at) == (True, answered.answered_at)

    # Her devices are listed under the switch; removing this one unticks it.
    devices.get_by_role("button", name="Remove Chrome on Linux").click()
    expect(devices.get_by_role("listitem")).to_have_count(0)
    expect(switch).not_to_be_checked()
    with store.transaction(write=False) as tx:
        assert web_push.of_user(tx, "ada") == []
    assert errors == []
    page.close()
    context.close()

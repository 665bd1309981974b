"""The Web Push actions: subscribing a browser, learning whether it is, removing devices."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from pawflow.channels.push import server_keys
from pawflow.clock import FakeClock
from pawflow.server.settings import ServerSettings
from pawflow.server.testing import LiveServer, live_server
from pawflow.store import Store
from tests.channels.push_service import PushService, push_service

QUIET = ServerSettings(sweep_interval=3600, egress_allowed_hosts="127.0.0.1")


@pytest.fixture
def server(store: Store) -> Iterator[LiveServer]:
    server_keys(store)
    with live_server(store, settings=QUIET) as running:
        yield running


@pytest.fixture
def service(clock: FakeClock) -> Iterator[PushService]:
    with push_service(clock.now) as running:
        yield running


def _call(server: LiveServer, user: str, name: str, body: dict[str, Any]) -> httpx.Response:
    server.store.ensure_user(user)
    with server.client(user) as http:
        return http.post(f"/api/actions/{name}", json=body)


def test_a_browser_subscribes_and_learns_that_it_is(
    server: LiveServer, service: PushService
) -> None:
    phone = service.device("phone")
    before = _call(server, "ada", "get_push", {"endpoint": phone.endpoint}).json()
    assert before == {
        "enabled": True,
        "public_key": server_keys(server.store).public_key,
        "subscribed": False,
        "devices": [],
    }
    added = _call(server, "ada", "subscribe_push", {**phone.subscription(), "device": "Phone"})
    assert added.status_code == 200, added.text
    after = _call(server, "ada", "get_push", {"endpoint": phone.endpoint}).json()
    assert after["subscribed"] is True
    assert [d["device"] for d in after["devices"]] == ["Phone"]
    # Bo cannot see it, nor remove it: to him it does not exist.
    seen_by_bo = _call(server, "bo", "get_push", {"endpoint": phone.endpoint}).json()
    assert seen_by_bo["subscribed"] is False
    refused = _call(server, "bo", "remove_push_device", {"device_id": added.json()["id"]})
    assert refused.status_code == 404
    gone = _call(server, "ada", "unsubscribe_push", {"endpoint": phone.endpoint})
    assert gone.json() == {"deleted": True}
    assert _call(server, "ada", "get_push", {}).json()["devices"] == []


def test_a_shared_browser_belongs_to_whoever_subscribed_it_last(
    server: LiveServer, service: PushService
) -> None:
    kiosk = service.device("kiosk").subscription()
    _call(server, "ada", "subscribe_push", kiosk)
    _call(server, "bo", "subscribe_push", kiosk)
    assert _call(server, "ada", "get_push", {}).json()["devices"] == []
    assert len(_call(server, "bo", "get_push", {}).json()["devices"]) == 1


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"keys": {"p256dh": "AAAA", "auth": "c2VjcmV0c2VjcmV0c2VjcmV0"}}, "keys.p256dh"),
        ({"keys": {"p256dh": None, "auth": "x"}}, "keys.p256dh"),
        ({"endpoint": "ftp://push.example/x"}, "endpoint"),
        ({"endpoint": "http://10.1.2.3/push/x"}, "endpoint"),
        ({"endpoint": "https://[::ffff:127.0.0.1]/push/x"}, "endpoint"),  # wrapped
    ],
)
def test_a_bad_subscription_is_a_422_naming_its_field(
    server: LiveServer, service: PushService, change: dict[str, Any], field: str
) -> None:
    body = {**service.device("phone").subscription(), **change}
    refused = _call(server, "ada", "subscribe_push", body)
    assert refused.status_code == 422, refused.text
    assert field in {e["path"] for e in refused.json()["errors"]}


def test_auth_must_be_sixteen_bytes(server: LiveServer, service: PushService) -> None:
    body = service.device("phone").subscription()
    body["keys"]["auth"] = "c2hvcnQ"
    refused = _call(server, "ada", "subscribe_push", body)
    assert refused.status_code == 422
    assert [e["path"] for e in refused.json()["errors"]] == ["keys.auth"]


def test_a_device_is_removed_by_its_id(server: LiveServer, service: PushService) -> None:
    added = _call(server, "ada", "subscribe_push", service.device("old").subscription()).json()
    removed = _call(server, "ada", "remove_push_device", {"device_id": added["id"]})
    assert removed.json() == {"deleted": True}
    assert _call(server, "ada", "remove_push_device", {"device_id": added["id"]}).status_code == 404


def test_push_off_says_so(store: Store) -> None:
    server_keys(store)
    with live_server(store, settings=QUIET.replace(push=False)) as off:
        found = _call(off, "ada", "get_push", {}).json()
    assert (found["enabled"], found["public_key"]) == (False, None)

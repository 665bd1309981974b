"""Web Push: pushes reach a local push service that checks their VAPID token and decrypts
them with the device's keys; their actions answer through the answer link, once."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest

from pawflow import serve
from pawflow.channels import Dispatcher, PushChannel
from pawflow.channels.push import default_subject, server_keys
from pawflow.clock import FakeClock
from pawflow.egress import EgressRule
from pawflow.errors import ConfigError
from pawflow.server.settings import ServerSettings
from pawflow.server.testing import live_server
from pawflow.store import Question, Store
from pawflow.store.reach import addresses, lanes, outbox, web_push
from pawflow.testing import eventually
from tests.channels.push_service import Device, PushService, b64, push_service

LOOPBACK = EgressRule.parse("127.0.0.1")
QUIET = ServerSettings(sweep_interval=3600, egress_allowed_hosts="127.0.0.1")


@pytest.fixture
def service(clock: FakeClock) -> Iterator[PushService]:
    with push_service(clock.now) as running:
        yield running


def _subscribe(store: Store, user: str, device: Device) -> None:
    store.ensure_user(user)
    with store.transaction() as tx:
        web_push.subscribe(
            tx, user, device.endpoint, device.p256dh, b64(device.auth), device.name, store.now()
        )


def _dispatcher(store: Store, base_url: str = "http://pawflow.test") -> Dispatcher:
    channel = PushChannel(
        store, server_keys(store), subject="mailto:ops@example.org", rule=LOOPBACK
    )
    return Dispatcher(store, [channel], base_url=base_url, owner="test")


def _ask(store: Store, user: str, kind: str = "confirm", **extra: object) -> str:
    conversation = store.create_conversation(user, "phone")
    return store.ask(Question(user, conversation.id, kind, "Deploy?", **extra)).interaction.id  # type: ignore[arg-type]


def _rows(store: Store, request_id: str) -> list[outbox.OutboxRow]:
    with store.transaction(write=False) as tx:
        return outbox.deliveries(tx, request_id)


def test_the_key_pair_is_made_once_and_kept(store: Store) -> None:
    first = server_keys(store)
    assert server_keys(store) == first
    with store.transaction() as tx:  # a second server starting at once keeps the first's
        assert web_push.keep_keys(tx, "other", "other", store.now()) == first
    assert len(first.public_key) == 87  # 65 bytes, base64url


def test_a_confirm_reaches_every_device_encrypted_and_signed(
    store: Store, service: PushService
) -> None:
    phone, laptop = service.device("phone"), service.device("laptop")
    _subscribe(store, "ada", phone)
    _subscribe(store, "ada", laptop)
    with store.transaction(write=False) as tx:
        assert "push" in addresses.get_reach(tx, "ada").channels()
    request_id = _ask(store, "ada", expires_in="2h")
    assert _dispatcher(store).step() == 1
    pushes = service.received()
    assert service.refused == []
    assert sorted(p.device for p in pushes) == ["laptop", "phone"]
    push = pushes[0]
    assert push.vapid_key == server_keys(store).public_key
    assert push.claims["sub"] == "mailto:ops@example.org"
    assert push.headers["urgency"] == "high"
    assert int(push.headers["ttl"]) == 7200  # until the request expires
    assert push.payload["request_id"] == request_id
    assert push.payload["title"] == "Deploy?"
    assert push.payload["actions"] == [
        {"action": "0", "title": "Yes"},
        {"action": "1", "title": "No"},
    ]
    assert push.payload["answer_url"].startswith("http://pawflow.test/a/pfa_")
    assert pushes[1].payload["answer_url"] == push.payload["answer_url"]  # one link per person
    (row,) = _rows(store, request_id)
    assert (row.status, row.channel) == ("sent", "push")


def test_a_long_choice_opens_its_page_instead_of_offering_actions(
    store: Store, service: PushService
) -> None:
    _subscribe(store, "ada", service.device("phone"))
    _ask(store, "ada", "choice", options=["a", "b", "c", "d"])
    _ask(store, "ada", "choice", options=["red", "blue"])
    _dispatcher(store).step()
    actions = sorted(len(p.payload["actions"]) for p in service.received())
    assert actions == [0, 2]


def test_a_gone_device_is_forgotten_and_the_others_still_reached(
    store: Store, service: PushService
) -> None:
    old, new = service.device("old"), service.device("new")
    _subscribe(store, "ada", old)
    _subscribe(store, "ada", new)
    service.answer("old", 410)
    request_id = _ask(store, "ada")
    _dispatcher(store).step()
    with store.transaction(write=False) as tx:
        assert [d.device for d in web_push.of_user(tx, "ada")] == ["new"]
    assert _rows(store, request_id)[0].status == "sent"
    service.answer("new", 404)
    second = _ask(store, "ada")
    _dispatcher(store).step()
    (row,) = _rows(store, second)
    assert row.status == "failed"
    assert row.last_error == "push: the push service says every subscribed device is gone"
    with store.transaction(write=False) as tx:
        assert not addresses.get_reach(tx, "ada").reachable("push")


def test_a_person_s_devices_are_pushed_to_at_once(store: Store, service: PushService) -> None:
    """One attempt, one deadline: the service answers only once all three pushes are in."""
    for name in ("phone", "laptop", "tablet"):
        _subscribe(store, "ada", service.device(name))
    service.gather = threading.Barrier(3, timeout=10)
    request_id = _ask(store, "ada")
    _dispatcher(store).step()
    (row,) = _rows(store, request_id)
    assert (row.status, row.last_error) == ("sent", None)
    assert sorted(p.device for p in service.received()) == ["laptop", "phone", "tablet"]


def _pushing(before: set[threading.Thread]) -> set[threading.Thread]:
    return {
        t for t in threading.enumerate() if t.name.startswith("pawflow-push") and t not in before
    }


def test_every_attempt_pushes_on_one_pool_closed_with_the_dispatcher(
    store: Store, service: PushService
) -> None:
    """No pool (nor its threads) is made per attempt: the channel's threads push every
    attempt, and end when the dispatcher stops."""
    before = _pushing(set())
    for name in ("phone", "laptop"):
        _subscribe(store, "ada", service.device(name))
    dispatcher = _dispatcher(store)
    threads: set[threading.Thread] = set()
    for n in range(4):
        request_id = _ask(store, "ada")
        dispatcher.step()
        assert [row.status for row in _rows(store, request_id)] == ["sent"]
        threads |= _pushing(before)
        assert len(threads) == 2, n  # the first attempt's two, kept and used again
        assert all(t.is_alive() for t in threads)
    assert len(service.received()) == 8
    dispatcher.stop()
    eventually(lambda: not any(t.is_alive() for t in threads))


def test_a_busy_push_service_is_tried_again_after_the_backoff(
    store: Store, service: PushService, clock: FakeClock
) -> None:
    _subscribe(store, "ada", service.device("phone"))
    service.answer("phone", 503)
    request_id = _ask(store, "ada")
    dispatcher = _dispatcher(store)
    dispatcher.step()
    (row,) = _rows(store, request_id)
    assert (row.status, row.last_error) == ("queued", "push: the push service answered 503")
    clock.advance("6s")
    dispatcher.step()
    assert _rows(store, request_id)[0].status == "sent"
    assert len(service.received()) == 2
    first, second = service.received()
    assert first.headers["topic"] == second.headers["topic"]  # the second replaces the first


def test_an_endpoint_inside_the_network_is_called_only_if_allowed(
    store: Store, service: PushService
) -> None:
    _subscribe(store, "ada", service.device("phone"))
    request_id = _ask(store, "ada")
    channel = PushChannel(store, server_keys(store), subject="mailto:ops@example.org")
    Dispatcher(store, [channel], base_url="http://x", owner="test").step()
    (row,) = _rows(store, request_id)
    assert row.status == "failed"
    assert "PAWFLOW_EGRESS_ALLOWED_HOSTS" in (row.last_error or "")
    assert service.received() == []


def test_a_person_without_devices_is_told_so(store: Store) -> None:
    store.ensure_user("bo")
    request_id = _ask(store, "bo", notify=["push"])
    (row,) = _rows(store, request_id)
    assert (row.status, row.last_error) == ("failed", "bo has no device subscribed to push")


def test_an_action_answers_through_the_link_exactly_once(
    store: Store, service: PushService
) -> None:
    _subscribe(store, "ada", service.device("phone"))
    _subscribe(store, "ada", service.device("tablet"))
    request_id = _ask(store, "ada")
    with live_server(store, settings=QUIET) as server:
        _dispatcher(store, server.url).step()
        phone, tablet = service.received()
        # What the service worker does when "No" is pressed, on each device.
        answer = httpx.post(phone.payload["answer_url"], data={"pick": "1"}, timeout=10)
        again = httpx.post(tablet.payload["answer_url"], data={"pick": "0"}, timeout=10)
    assert answer.status_code == 200
    assert again.status_code == 409
    record = store.get_interaction(request_id, user="ada")
    assert (record.status, record.answer, record.answered_via) == ("answered", False, "link")


def test_serve_makes_the_keys_on_start_and_push_can_be_turned_off(store: Store) -> None:
    with store.transaction(write=False) as tx:
        assert web_push.keys(tx) is None
    off = serve.dispatcher(store, ServerSettings(push=False))
    assert "push" not in off.channels
    with store.transaction(write=False) as tx:
        assert web_push.keys(tx) is None
    on = serve.dispatcher(store, ServerSettings(mail_from="ops@example.org"))
    channel = on.channels["push"]
    assert isinstance(channel, PushChannel)
    assert channel.subject == "mailto:ops@example.org"
    with store.transaction(write=False) as tx:
        assert web_push.keys(tx) == channel.keys


def test_the_vapid_contact_is_the_setting_else_the_mail_sender_else_the_https_address() -> None:
    assert default_subject("http://127.0.0.1:8765", "ops@example.org") == "mailto:ops@example.org"
    assert default_subject("https://pawflow.example/", None) == "https://pawflow.example"
    assert default_subject("http://127.0.0.1:8765", None) == "mailto:pawflow@localhost"
    with pytest.raises(ConfigError, match="push_subject must start with mailto: or https://"):
        ServerSettings.from_env({"PAWFLOW_PUSH_SUBJECT": "ops@example.org"})
    assert ServerSettings.from_env({"PAWFLOW_PUSH": "off"}).push is False


def test_a_long_question_in_any_script_fits_a_push(store: Store, service: PushService) -> None:
    _subscribe(store, "ada", service.device("phone"))
    conversation = store.create_conversation("ada", "phone")
    words = "発送してよろしいですか" * 400
    store.ask(Question("ada", conversation.id, "confirm", words, title="確認" * 200))
    _dispatcher(store).step()
    (push,) = service.received()
    assert service.refused == []
    question, _, context = push.payload["body"].partition("\n\n")
    assert len(push.payload["body"]) == 1000 and question.endswith("…")
    assert context == "Asked by ada.\nIn the conversation “phone”."
    assert len(push.payload["title"]) == 120


def test_each_person_s_pushes_are_a_destination_of_their_own(
    store: Store, service: PushService
) -> None:
    for user in ("ada", "bo"):
        _subscribe(store, user, service.device(user))
    asked = {user: _ask(store, user) for user in ("ada", "bo")}
    with store.transaction() as tx:  # both due at once: one in flight each, side by side
        claimed = outbox.claim_due(tx, store.now(), 8, channel="push")
    assert sorted(row.recipient for row in claimed) == ["ada", "bo"]
    ada = next(row for row in claimed if row.recipient == "ada")
    where = lanes.destination(ada.channel, ada.address, ada.recipient)
    _ask(store, "ada")  # ada's next push waits while hers is in flight; bo's does not
    _ask(store, "bo")
    with store.transaction() as tx:
        later = outbox.claim_due(tx, store.now(), 8, {where}, channel="push")
    assert [(row.recipient, row.request_id in asked.values()) for row in later] == [("bo", False)]


def test_a_push_says_who_asks_where_and_by_when(store: Store, service: PushService) -> None:
    _subscribe(store, "ada", service.device("phone"))
    conversation = store.create_conversation("ada", "Releases")
    asked = store.ask(
        Question(
            "ada",
            conversation.id,
            "text",
            "Release notes?",
            requester={"type": "flow", "name": "nightly"},
            expires_in="2h",
        )
    ).interaction
    _dispatcher(store).step()
    (push,) = service.received()
    expires = asked.expires_at
    assert expires is not None
    deadline = expires.strftime("%Y-%m-%d %H:%M UTC")
    assert push.payload["title"] == "Release notes? — the flow nightly asks"
    assert push.payload["body"] == (
        "Release notes?\n\nAsked by the flow nightly for ada.\n"
        f"In the conversation “Releases”.\nAnswer by {deadline}."
    )
    # The device says the deadline in its own time zone: the words to replace, and the moment.
    assert push.payload["deadline"] == {"at": expires.isoformat(), "text": deadline}
    assert push.payload["conversation_url"] == f"http://pawflow.test/?c={conversation.id}"
    assert push.payload["answer_url"].startswith("http://pawflow.test/a/pfa_")

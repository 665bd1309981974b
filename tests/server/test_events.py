"""Server-sent events: durable, replayable by id, aliased, kept alive, reset past retention,
delivered by every server on one database."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator

import httpx
import pytest

from pawflow.client import ServerEvent
from pawflow.clock import FakeClock
from pawflow.server.testing import LiveServer, live_server
from pawflow.store import Store, open_store
from pawflow.store.ledger.events import user_key
from pawflow.testing import eventually
from tests.server.conftest import QUIET, Api, unique
from tests.server.sse import stream, take, until


def test_requests_and_answers_stream_with_aliases_and_replay(live: LiveServer) -> None:
    alice = Api(live, unique("alice"))
    token = live.token(alice.user)
    conversation = alice.conversation()
    with stream(live.url, token) as events:
        ready = next(events)
        assert ready.type == "ready" and ready.id is not None
        confirm = alice.ask(conversation, "confirm")
        text = alice.ask(conversation, "text")
        alice.ok("respond_interaction", request_id=confirm["id"], answer=True)
        alice.ok("cancel_interaction", request_id=text["id"])
        alice.ok("send_message", conversation_id=conversation, content="hello")
        with live.store.unit() as u:
            u.messages.notify_user(alice.user, "build finished", title="CI")
        got = take(events, 8)
    assert [(e.type, e.data.get("id")) for e in got[:6]] == [
        ("interaction_request", confirm["id"]),
        ("confirmation_request", confirm["id"]),
        ("interaction_request", text["id"]),
        ("interaction_answered", confirm["id"]),
        ("confirmation_answered", confirm["id"]),
        ("interaction_answered", text["id"]),
    ]
    assert got[0].id == got[1].id and got[3].id == got[4].id  # an alias shares its event's id
    assert got[0].data == confirm
    assert got[3].data["status"] == "answered" and got[3].data["answer"] is True
    assert got[5].data["status"] == "cancelled"
    assert got[6].type == "message" and got[6].data["content"] == "hello"
    assert got[7].type == "notification"
    assert got[7].data == {
        "message": "build finished",
        "title": "CI",
        "urgency": "normal",
        "conversation_id": None,
    }
    ids = [e.id for e in got]
    assert None not in ids and ids == sorted(i for i in ids if i is not None)

    # Reconnecting with the id of the first answer replays exactly what followed it (its
    # alias shares that id, so it is not sent again).
    with stream(live.url, token, last_event_id=got[3].id) as events:
        replay = take(events, 3)
    assert [(e.type, e.id, e.data) for e in replay] == [(e.type, e.id, e.data) for e in got[5:]]
    with stream(live.url, token, after=got[6].id) as events:
        assert next(events).id == got[7].id
    alice.close()


def test_a_thousand_events_through_fifty_disconnects(live: LiveServer) -> None:
    user = unique("zoe")
    token = live.token(user)
    total, hangups = 1000, 50
    with stream(live.url, token) as events:
        position = next(events).id

    def produce() -> None:
        for i in range(total):
            with live.store.unit() as u:
                u.messages.notify_user(user, f"n{i}")

    produced = threading.Thread(target=produce, name="producer")
    produced.start()
    rng = random.Random(7)
    received: list[tuple[int, str]] = []
    connections = 0
    try:
        while len(received) < total:
            want = total - len(received)
            if connections < hangups:
                want = min(want, rng.randint(1, 2 * total // hangups - 1))
            with stream(live.url, token, last_event_id=position) as events:
                connections += 1
                for event in take(events, want):
                    assert event.type == "notification"
                    assert event.id is not None
                    received.append((event.id, event.data["message"]))
                    position = event.id
    finally:
        produced.join()
    assert connections > hangups
    assert [message for _, message in received] == [f"n{i}" for i in range(total)]
    seqs = [seq for seq, _ in received]
    assert seqs == sorted(set(seqs))


def test_an_event_logged_once_the_headers_arrive_is_on_the_stream(live: LiveServer) -> None:
    """A client that reads state as soon as its stream answers (as the editor and the TUI do)
    must find on the stream whatever was logged after that: the stream's position is fixed
    before its headers go out, never after."""
    user = unique("hana")
    token = live.token(user)
    for round_ in range(20):
        with stream(live.url, token) as events:
            with live.store.unit() as u:
                u.messages.notify_user(user, f"right after the headers {round_}")
                u.messages.notify_user(user, f"marker {round_}")
            seen = [e.data.get("message") for e in until_message(events, f"marker {round_}")]
        assert f"right after the headers {round_}" in seen, (round_, seen)


def until_message(events: Iterator[ServerEvent], message: str) -> list[ServerEvent]:
    seen = []
    for event in events:
        if event.type == "notification":
            seen.append(event)
            if event.data.get("message") == message:
                return seen
    raise AssertionError(f"the stream ended before {message!r}")


def test_live_clients_make_notifications_sent_not_queued(live: LiveServer) -> None:
    user = unique("yan")
    token = live.token(user)
    with live.store.unit() as u:
        assert u.messages.notify_user(user, "before") == "queued"
    connected = threading.Event()
    hang_up = threading.Event()

    def listen() -> None:
        with stream(live.url, token) as events:
            next(events)
            connected.set()
            hang_up.wait(10)

    listener = threading.Thread(target=listen)
    listener.start()
    assert connected.wait(10)
    with live.store.unit() as u:
        assert u.messages.notify_user(user, "during") == "sent"
    hang_up.set()
    listener.join()
    # The server notices the hang-up at once (not after the live mark's time to live).

    def queued() -> bool:
        with live.store.unit() as u:
            return u.messages.notify_user(user, "after") == "queued"

    eventually(queued, timeout=10)


def test_keepalives_flow_on_a_quiet_stream(make_server: Callable[..., LiveServer]) -> None:
    server = make_server(keepalive=0.05)
    token = server.token("quiet")
    with (
        httpx.Client(base_url=server.url, timeout=10) as client,
        client.stream("GET", "/api/events", headers={"Authorization": f"Bearer {token}"}) as resp,
    ):
        lines = resp.iter_lines()
        seen = [next(lines) for _ in range(10)]
    assert seen.count(": keep-alive") >= 2


def test_ids_outside_the_retained_log_get_a_reset(make_server: Callable[..., LiveServer]) -> None:
    clock = FakeClock()
    server = make_server(clock=clock, event_retention="1d")
    user = "old-timer"
    token = server.token(user)
    for i in range(5):
        with server.store.unit() as u:
            u.messages.notify_user(user, f"old {i}")
    with stream(server.url, token, after=0) as events:
        old = take(events, 5)
    clock.advance("2d")
    with server.store.unit() as u:
        u.messages.notify_user(user, "new")
    report = server.store.sweep()
    assert report["events_pruned"] == 5
    with stream(server.url, token, last_event_id=old[1].id) as events:
        reset = next(events)
        assert reset.type == "reset"
        # the reset's id is where to go on from: nothing after it is missed
        with server.store.unit() as u:
            u.messages.notify_user(user, "newer")
        assert next(events).data["message"] == "newer"
    with stream(server.url, token, last_event_id=old[4].id) as events:
        assert next(events).data["message"] == "new"  # still inside the log: no reset
    with stream(server.url, token, last_event_id=10**12) as events:
        assert next(events).type == "reset"  # an id this log never had
    with httpx.Client(base_url=server.url) as client:
        bad = client.get(
            "/api/events", headers={"Authorization": f"Bearer {token}", "Last-Event-ID": "abc"}
        )
        assert bad.status_code == 400


def test_expiry_is_announced_like_an_answer(make_server: Callable[..., LiveServer]) -> None:
    clock = FakeClock()
    server = make_server(clock=clock)
    alice = Api(server, "alice")
    asked = alice.ask(alice.conversation(), "choice", options=["a", "b"], expires_in="1h")
    with stream(server.url, server.token("alice"), after=0) as events:
        until(events, "confirmation_request")
        clock.advance("2h")
        server.store.sweep()
        answered = until(events, "confirmation_answered")
    assert [e.type for e in answered] == ["interaction_answered", "confirmation_answered"]
    assert answered[0].data["id"] == asked["id"] and answered[0].data["status"] == "expired"
    alice.close()


@pytest.fixture
def second_server(live: LiveServer) -> Iterator[LiveServer]:
    """Another server (its own store, connections and listener) on the same database."""
    db = live.store.db
    url = f"sqlite:///{db.path}" if live.store.dialect == "sqlite" else db.url  # type: ignore[attr-defined]
    other: Store = open_store(url)
    try:
        with live_server(other, settings=QUIET) as server:
            yield server
    finally:
        other.close()


def test_every_server_on_one_database_delivers_every_event(
    live: LiveServer, second_server: LiveServer
) -> None:
    alice = Api(second_server, unique("alice"))
    token = live.token(alice.user)
    conversation = alice.conversation()
    with stream(live.url, token) as on_first, stream(second_server.url, token) as on_second:
        next(on_first), next(on_second)
        asked = alice.ask(conversation, "confirm")  # through the second server
        on_live = Api(live, alice.user)
        on_live.ok("respond_interaction", request_id=asked["id"], answer=False)
        on_live.close()
        for events in (on_first, on_second):
            got = take(events, 4)
            assert [e.type for e in got] == [
                "interaction_request",
                "confirmation_request",
                "interaction_answered",
                "confirmation_answered",
            ]
    alice.close()


def test_the_streams_of_one_user_share_one_read_per_event(live: LiveServer) -> None:
    """Twenty streams of one user, one event: every stream gets it, from one shared read
    (rendered once), not twenty reads of the same rows."""
    user = unique("una")
    token = live.token(user)
    streams = 20
    ready = threading.Barrier(streams + 1, timeout=30)
    hang_up = threading.Event()
    got: list[str] = []
    lock = threading.Lock()

    def listen() -> None:
        with stream(live.url, token) as events:
            assert next(events).type == "ready"
            ready.wait()
            event = next(events)
            with lock:
                got.append(str(event.data.get("message")))
            hang_up.wait(30)

    listeners = [threading.Thread(target=listen) for _ in range(streams)]
    for listener in listeners:
        listener.start()
    try:
        ready.wait()
        hub = live.server.app.state.pawflow.hub
        feed = eventually(lambda: hub._feeds.get(user_key(user)))
        before = feed.reads
        with live.store.unit() as u:
            u.messages.notify_user(user, "one for all")
        eventually(lambda: len(got) == streams, timeout=20)
        assert got == ["one for all"] * streams
        assert feed.reads - before < streams / 2
    finally:
        hang_up.set()
        for listener in listeners:
            listener.join()
    # The last stream gone, the user's feed is forgotten.
    eventually(lambda: user_key(user) not in hub._feeds)

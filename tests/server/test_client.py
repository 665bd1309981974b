"""The HTTP client: records back, the store's errors back, events with resumption."""

from __future__ import annotations

import contextlib
import socket
import ssl
import subprocess
import threading
from pathlib import Path

import pytest

from pawflow.client import ApiError, Client, parse_sse
from pawflow.errors import InvalidInput, NotFound, NotPending, ServerUnreachable
from pawflow.server.running import server_config
from pawflow.server.settings import ServerSettings
from pawflow.server.testing import LiveServer
from tests.server.conftest import unique


def test_client_round_trip_and_errors(live: LiveServer) -> None:
    user = unique("cli")
    with Client(live.url, live.token(user)) as client:
        assert client.whoami() == user
        conversation = client.create_conversation("Ops")
        assert [c.id for c in client.list_conversations()] == [conversation.id]
        asked = client.request_interaction(conversation.id, "multi", "Which?", options=["a", "b"])
        assert asked.pending and asked.options == [
            {"value": "a", "label": "a"},
            {"value": "b", "label": "b"},
        ]
        assert [i.id for i in client.iter_interactions(status="pending")] == [asked.id]
        with pytest.raises(InvalidInput) as invalid:
            client.respond_interaction(asked.id, ["c"])
        assert invalid.value.errors[0].path == "[0]"
        done = client.respond_interaction(asked.id, ["b", "a"])
        assert done.answer == ["a", "b"] and done.answered_by == user
        with pytest.raises(NotPending) as late:
            client.cancel_interaction(asked.id)
        assert late.value.status == "answered"
        with pytest.raises(NotFound):
            client.get_interaction("nope")
        sent = client.send_message(conversation.id, "hi")
        assert [m.id for m in client.get_history(conversation.id)] == [sent.id]
        ref = client.upload(b"data", name="d.txt")
        assert ref.size == 4 and ref.media_type == "text/plain"

        events = client.events(last_event_id=0)
        seen = [next(events) for _ in range(4)]
        events.close()
        assert [e.type for e in seen] == [
            "interaction_request",
            "confirmation_request",
            "interaction_answered",
            "confirmation_answered",
        ]
        resumed = client.events(last_event_id=seen[-1].id)
        assert next(resumed).type == "message"
        resumed.close()
    with Client(live.url, "pf_bad") as anonymous, pytest.raises(ApiError) as refused:
        anonymous.whoami()
    assert refused.value.status == 401


def test_parse_sse_reads_ids_types_and_multiline_data() -> None:
    lines = iter(
        [
            "retry: 10",
            "",
            ": comment",
            "id: 3",
            "event: x",
            'data: {"a":',
            "data: 1}",
            "",
            "data: plain",
            "",
        ]
    )
    parsed = list(parse_sse(lines))
    assert [(e.id, e.type, e.data) for e in parsed] == [(3, "x", {"a": 1}), (3, "message", "plain")]


def test_an_https_server_is_verified_though_a_plain_one_needs_no_certificates(
    tmp_path: Path,
) -> None:
    """A server whose certificate nobody vouches for is refused: a plain-HTTP server skips
    the certificate store, an https:// one never does."""
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        def accept() -> None:
            conn, _ = listener.accept()
            with (
                contextlib.suppress(ssl.SSLError, OSError),
                context.wrap_socket(conn, server_side=True),
            ):
                pass

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        with (
            Client(f"https://127.0.0.1:{port}", "pf_x") as client,
            pytest.raises(ServerUnreachable, match="CERTIFICATE_VERIFY_FAILED"),
        ):
            client.whoami()
        thread.join(timeout=30)


def test_an_idle_connection_is_let_go_of_before_the_server_would_close_it() -> None:
    """A request sent on a kept-alive connection just as the server closes it for idling is
    cut ("connection reset by peer"), so the client must stop reusing one first."""
    served = server_config(lambda: None, ServerSettings.from_env({}))  # type: ignore[arg-type,return-value]
    with Client("http://127.0.0.1:9") as client:
        pool = client.http._transport._pool  # type: ignore[attr-defined]
        assert 0 < pool._keepalive_expiry <= served.timeout_keep_alive / 2

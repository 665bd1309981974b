"""Hypothesis against real ids: malformed cursors, event ids, headers, bodies and answers
are always a 4xx with a message, never a server error."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pawflow.server.testing import LiveServer
from tests.server.conftest import Api, unique

FUZZ = settings(
    max_examples=30,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)

_digits = st.integers(min_value=-(2**70), max_value=2**70).map(str)
_cursor_text = st.one_of(
    st.text(max_size=60),
    st.builds(lambda a, b: a + "." + b, _digits, st.text(max_size=40)),
    st.builds(
        lambda a, b: a + "." + b,
        st.text(alphabet="0123456789\u00b2\u00b3\u0660\u0661", max_size=25),
        _digits,
    ),
)
CURSORS = st.one_of(
    st.text(max_size=80),
    _cursor_text,
    _cursor_text.map(lambda raw: base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")),
)
# Any value HTTP/1.1 can carry (RFC 9110 field-value): what a client could send at all.
FIELD_VALUE = re.compile(
    rb"[\x21-\x7e\x80-\xff]([\x20\x09\x21-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?"
)
HEADER_VALUES = st.binary(min_size=1, max_size=40).filter(lambda b: FIELD_VALUE.fullmatch(b))
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
NUMBER_TEXTS = st.from_regex(
    r"-?[0-9]{1,30}(\.[0-9]{0,30})?([eE][+-]?[0-9]{1,12})?", fullmatch=True
)


def _assert_clear_refusal(response: httpx.Response, allowed: tuple[int, ...]) -> None:
    assert response.status_code in allowed, (response.status_code, response.text)
    if response.status_code >= 400:
        assert response.json()["error"], response.text


@pytest.fixture(scope="module")
def fuzzer(live: LiveServer) -> Any:
    api = Api(live, unique("fuzzer"))
    conversation = api.conversation()
    requests = {
        "decimal": api.ask(conversation, "decimal")["id"],
        "integer": api.ask(conversation, "integer")["id"],
        "text": api.ask(
            conversation, "text", response_schema={"type": "string", "pattern": "^(a+)+$"}
        )["id"],
        "file": api.ask(conversation, "file")["id"],
        "form": api.ask(
            conversation,
            "form",
            response_schema={
                "type": "object",
                "properties": {
                    "amount": {"type": "number"},
                    "scan": {"type": "object", "x-pawflow-kind": "file"},
                },
            },
        )["id"],
    }
    yield api, requests
    api.close()


def test_cursors(fuzzer: Any) -> None:
    api, _ = fuzzer

    @FUZZ
    @given(cursor=CURSORS)
    @example(cursor="\x00")
    @example(cursor="1.\x00")
    def check(cursor: str) -> None:
        response = api.call("list_interactions", cursor=cursor)
        # Text with NUL is refused in any body with a 400 (docs/security.md), a cursor too;
        # any other malformed cursor is a 422 naming the field.
        _assert_clear_refusal(response, (400,) if "\x00" in cursor else (200, 422))

    check()


def test_last_event_ids_and_credentials(fuzzer: Any, live: LiveServer) -> None:
    api, _ = fuzzer
    token = live.token(api.user).encode()

    @FUZZ
    @given(value=HEADER_VALUES, where=st.sampled_from(["Last-Event-ID", "Authorization", "Cookie"]))
    def check(value: bytes, where: str) -> None:
        headers = [(b"Authorization", b"Bearer " + token)] if where != "Authorization" else []
        if where == "Cookie":
            headers = [(b"Cookie", b"pawflow_session=" + value)]
        headers.append((where.encode(), value))
        with (
            httpx.Client(base_url=live.url, timeout=10) as client,
            client.stream("GET", "/api/events", headers=headers) as response,
        ):
            if response.status_code != 200:  # a valid id opens the stream: hang up at once
                response.read()
                _assert_clear_refusal(response, (400, 401, 403))

    check()


def test_answers_to_real_requests(fuzzer: Any) -> None:
    api, requests = fuzzer

    @FUZZ
    @given(kind=st.sampled_from(sorted(requests)), answer=JSON_VALUES)
    def check(kind: str, answer: Any) -> None:
        response = api.call("respond_interaction", request_id=requests[kind], answer=answer)
        _assert_clear_refusal(response, (200, 400, 409, 422))  # 400: NUL in text

    check()


def test_numbers_as_written(fuzzer: Any) -> None:
    api, requests = fuzzer

    @FUZZ
    @given(kind=st.sampled_from(["decimal", "integer", "form"]), number=NUMBER_TEXTS)
    def check(kind: str, number: str) -> None:
        answer = '{"amount": ' + number + "}" if kind == "form" else number
        body = '{"request_id": ' + json.dumps(requests[kind]) + ', "answer": ' + answer + "}"
        response = api.http.post(
            "/api/actions/respond_interaction",
            content=body.encode(),
            headers={"Content-Type": "application/json"},
        )
        _assert_clear_refusal(response, (200, 400, 409, 422))  # 400: not JSON ("01", "1.")

    check()


def test_raw_bodies(fuzzer: Any) -> None:
    api, _ = fuzzer

    @FUZZ
    @given(
        body=st.binary(max_size=80),
        action=st.sampled_from(
            ["respond_interaction", "list_interactions", "accept_invitation", "share_conversation"]
        ),
    )
    def check(body: bytes, action: str) -> None:
        response = api.http.post(
            f"/api/actions/{action}", content=body, headers={"Content-Type": "application/json"}
        )
        _assert_clear_refusal(response, (200, 400, 404, 409, 422))

    check()

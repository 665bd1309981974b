"""Elicitation where the client supports it: the first answer wins, the other is closed."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
import pytest

from pawflow.server.testing import LiveServer
from pawflow.testing import eventually
from tests.logs import tracebacks
from tests.mcp_interop.conftest import http_client, structured
from tests.server.conftest import Api

UserApi = Callable[[str], tuple[Api, str]]

# Elicitation is a request from the server on the tool call's own stream: the handshake era.
LEGACY = {"mode": "legacy"}


def test_an_elicited_answer_wins_and_closes_the_durable_request(
    live: LiveServer, user_api: UserApi
) -> None:
    api, token = user_api("hal")
    asked: list[types.ElicitRequestFormParams] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        asked.append(params)
        return types.ElicitResult(action="accept", content={"answer": "b"})

    async def scenario() -> dict[str, Any]:
        async with http_client(live, token, elicitation_callback=answer, **LEGACY) as client:
            return structured(
                await client.call_tool(
                    "request_confirmation",
                    {"message": "Which?", "mode": "choice", "options": ["a", "b"]},
                )
            )

    result = anyio.run(scenario)
    assert result["interaction"]["status"] == "answered"
    assert result["interaction"]["answer"] == "b"
    assert result["interaction"]["answered_by"] == api.user
    assert result["interaction"]["answered_via"] == "mcp"
    [params] = asked
    assert params.message == "Which?"
    field = params.requested_schema["properties"]["answer"]
    assert field["oneOf"] == [{"const": "a", "title": "a"}, {"const": "b", "title": "b"}]
    request_id = result["interaction"]["id"]
    # Closed everywhere: the action API sees the answer and refuses a second one.
    assert api.ok("get_interaction", request_id=request_id)["interaction"]["answer"] == "b"
    late = api.call("respond_interaction", request_id=request_id, answer="a")
    assert late.status_code == 409


def test_an_answer_from_elsewhere_wins_and_cancels_the_elicitation(
    live: LiveServer, user_api: UserApi
) -> None:
    api, token = user_api("ida")
    cancelled = anyio.Event()

    async def never_answers(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    def answer_in_the_web_chat() -> None:
        found = eventually(lambda: api.ok("list_interactions")["interactions"])
        api.ok("respond_interaction", request_id=found[0]["id"], answer=True)

    async def scenario() -> dict[str, Any]:
        async with http_client(live, token, elicitation_callback=never_answers, **LEGACY) as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(anyio.to_thread.run_sync, answer_in_the_web_chat)
                result = structured(
                    await client.call_tool("request_confirmation", {"message": "Proceed?"})
                )
            with anyio.fail_after(10):
                await cancelled.wait()
            return result

    result = anyio.run(scenario)
    assert result["interaction"]["status"] == "answered"
    assert result["interaction"]["answer"] is True


def test_an_invalid_elicited_answer_is_asked_again_with_the_field_errors(
    live: LiveServer, user_api: UserApi
) -> None:
    _, token = user_api("jon")
    messages: list[str] = []
    replies = iter(["ABC", "abc"])

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        messages.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": next(replies)})

    async def scenario() -> dict[str, Any]:
        async with http_client(live, token, elicitation_callback=answer, **LEGACY) as client:
            return structured(
                await client.call_tool(
                    "request_user_input",
                    {
                        "kind": "text",
                        "message": "Your handle?",
                        "response_schema": {"type": "string", "pattern": "^[a-z]+$"},
                    },
                )
            )

    result = anyio.run(scenario)
    assert result["interaction"]["status"] == "answered"
    assert result["interaction"]["answer"] == "abc"
    assert result.get("errors") is None
    first, second = messages
    assert first == "Your handle?"
    assert second.startswith("Your handle?\n\nThat answer was refused:\n- ")
    assert "expected format" in second


def test_invalid_answers_every_time_leave_it_pending_with_the_errors(
    live: LiveServer, user_api: UserApi
) -> None:
    _, token = user_api("kim")

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"answer": 500})

    async def scenario() -> dict[str, Any]:
        async with http_client(live, token, elicitation_callback=answer, **LEGACY) as client:
            return structured(
                await client.call_tool(
                    "request_user_input",
                    {
                        "kind": "integer",
                        "message": "How many?",
                        "response_schema": {"type": "integer", "exclusiveMaximum": 10},
                    },
                )
            )

    result = anyio.run(scenario)
    assert result["interaction"]["status"] == "pending"
    [error] = result["errors"]
    assert error["message"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_declined_elicitation_leaves_the_request_pending(
    live: LiveServer, user_api: UserApi, action: str
) -> None:
    _, token = user_api("lea")

    async def refuse(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action=action)  # type: ignore[arg-type]

    async def scenario() -> dict[str, Any]:
        async with http_client(live, token, elicitation_callback=refuse, **LEGACY) as client:
            return structured(await client.call_tool("request_confirmation", {"message": "Ok?"}))

    result = anyio.run(scenario)
    assert result["interaction"]["status"] == "pending"


def test_a_question_that_does_not_fit_a_form_is_asked_in_url_mode(
    live: LiveServer, user_api: UserApi
) -> None:
    _, token = user_api("max")
    asked: list[Any] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="decline")

    async def scenario() -> dict[str, Any]:
        async with http_client(live, token, elicitation_callback=answer, **LEGACY) as client:
            return structured(
                await client.call_tool(
                    "request_user_input", {"kind": "file", "message": "Send the report"}
                )
            )

    result = anyio.run(scenario)
    [params] = asked
    assert isinstance(params, types.ElicitRequestURLParams)
    assert params.url == result["answer_url"]
    assert params.elicitation_id == result["interaction"]["id"]
    # Declined: the request stays pending, to be answered at its page later.
    assert result["interaction"]["status"] == "pending"
    assert result["elicitation"] == "decline"
    assert result["answer_url"] == f"{live.url}/?c={result['interaction']['conversation_id']}"


def test_an_elicited_answer_the_caller_may_not_give_says_whom_it_waits_for(
    live: LiveServer, user_api: UserApi, caplog: pytest.LogCaptureFixture
) -> None:
    """The requester may not answer her own request: the accepted form is refused with
    whom it waits for, the request stays pending, and the log shows no traceback."""
    caplog.set_level(logging.INFO)
    _, token = user_api("max")
    asked: list[str] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": True})

    async def scenario() -> dict[str, Any]:
        async with http_client(live, token, elicitation_callback=answer, **LEGACY) as client:
            return structured(
                await client.call_tool(
                    "request_user_input",
                    {
                        "kind": "confirm",
                        "message": "Ship it?",
                        "assignees": ["nobody-else"],
                        "requester_may_answer": False,
                    },
                )
            )

    result = anyio.run(scenario)
    assert result["interaction"]["status"] == "pending"
    [error] = result["errors"]
    assert "waits for nobody-else" in error["message"]
    assert len(asked) == 1  # not asked again: another try cannot help
    assert tracebacks(caplog.records) == []

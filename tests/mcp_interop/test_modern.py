"""The 2026-07-28 generation, with the SDK's own client pinned to that version: multi
round-trip asking, a single-use requestState, Tasks, URL mode and subscriptions/listen."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from pawflow.mcp import PENDING_URI
from pawflow.server.testing import LiveServer
from pawflow.store.runtime import mcp_rounds
from pawflow.testing import eventually
from tests.logs import tracebacks
from tests.mcp_interop.conftest import http_client, stdio_client, structured
from tests.server.conftest import Api

UserApi = Callable[[str], tuple[Api, str]]
MODERN = {"mode": "2026-07-28"}
LEGACY = {"mode": "legacy"}


async def _never(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    raise AssertionError("this test answers the rounds itself")


def _upload(api: Api) -> str:
    response = api.http.post(
        "/api/files", files={"file": ("report.txt", b"all good", "text/plain")}
    )
    assert response.status_code in (200, 201), response.text
    return str(response.json()["file"]["id"])


def _rounds(live: LiveServer, request_id: str) -> list[str]:
    with live.store.transaction(write=False) as tx:
        return mcp_rounds.actions(tx, request_id)


def test_the_sdk_client_answers_a_round_and_gets_the_result(
    live: LiveServer, user_api: UserApi
) -> None:
    api, token = user_api("abe")
    asked: list[types.ElicitRequestParams] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"answer": "0.10000000000000001"})

    async def scenario() -> dict[str, Any]:
        async with http_client(live, token, elicitation_callback=answer, **MODERN) as client:
            assert client.protocol_version == "2026-07-28"
            return structured(
                await client.call_tool(
                    "request_user_input", {"kind": "decimal", "message": "The amount?"}
                )
            )

    result = anyio.run(scenario)
    assert result["interaction"]["status"] == "answered"
    assert result["interaction"]["answer"] == "0.10000000000000001"
    assert result["interaction"]["answered_via"] == "mcp"
    [params] = asked
    assert isinstance(params, types.ElicitRequestFormParams)
    field = params.requested_schema["properties"]["answer"]
    assert field["type"] == "string" and field["pattern"]  # a decimal stays exact
    assert _rounds(live, result["interaction"]["id"]) == ["accept"]
    assert api.ok("get_interaction", request_id=result["interaction"]["id"])["interaction"][
        "answer"
    ] == ("0.10000000000000001")


def test_a_request_state_is_single_use_and_bound_to_its_caller(
    live: LiveServer, user_api: UserApi
) -> None:
    _, token = user_api("bea")
    _, other_token = user_api("cyd")
    arguments = {"message": "Ship it?"}

    async def scenario() -> tuple[types.InputRequiredResult, types.CallToolResult]:
        async with http_client(live, token, elicitation_callback=_never, **MODERN) as client:
            first = await client.session.call_tool(
                "request_confirmation", arguments, allow_input_required=True
            )
            assert isinstance(first, types.InputRequiredResult)
            assert first.request_state is not None and first.input_requests
            [request] = first.input_requests.values()
            assert isinstance(request, types.ElicitRequest)
            accept = {"answer": types.ElicitResult(action="accept", content={"answer": True})}
            async with http_client(
                live, other_token, elicitation_callback=_never, **MODERN
            ) as other:
                with pytest.raises(MCPError) as foreign:
                    await other.session.call_tool(
                        "request_confirmation",
                        arguments,
                        input_responses=accept,  # type: ignore[arg-type]
                        request_state=first.request_state,
                        allow_input_required=True,
                    )
                assert foreign.value.error.code == types.INVALID_PARAMS
            done = await client.session.call_tool(
                "request_confirmation",
                arguments,
                input_responses=accept,  # type: ignore[arg-type]
                request_state=first.request_state,
                allow_input_required=True,
            )
            assert isinstance(done, types.CallToolResult)
            with pytest.raises(MCPError) as replayed:
                await client.session.call_tool(
                    "request_confirmation",
                    arguments,
                    input_responses=accept,  # type: ignore[arg-type]
                    request_state=first.request_state,
                    allow_input_required=True,
                )
            assert replayed.value.error.code == types.INVALID_PARAMS
            assert replayed.value.error.message == "Invalid or expired requestState"
            with pytest.raises(MCPError):  # another call's state: refused too
                await client.session.call_tool(
                    "request_confirmation",
                    {"message": "Something else?"},
                    input_responses=accept,  # type: ignore[arg-type]
                    request_state=first.request_state,
                    allow_input_required=True,
                )
            return first, done

    _, done = anyio.run(scenario)
    body = structured(done)
    assert body["interaction"]["status"] == "answered"
    assert body["interaction"]["answer"] is True
    assert _rounds(live, body["interaction"]["id"]) == ["accept"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_keep_it_pending_and_are_recorded_apart(
    live: LiveServer, user_api: UserApi, action: str
) -> None:
    _, token = user_api(f"dee{action}")

    async def refuse(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action=action)  # type: ignore[arg-type]

    async def scenario() -> dict[str, Any]:
        async with http_client(live, token, elicitation_callback=refuse, **MODERN) as client:
            return structured(await client.call_tool("request_confirmation", {"message": "Ok?"}))

    result = anyio.run(scenario)
    assert result["interaction"]["status"] == "pending"
    assert result["elicitation"] == action
    assert _rounds(live, result["interaction"]["id"]) == [action]


def test_a_file_request_is_asked_in_url_mode_at_its_answer_page(
    live: LiveServer, user_api: UserApi
) -> None:
    api, token = user_api("eve")
    upload = _upload(api)
    pages: list[types.ElicitRequestURLParams] = []

    async def visit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams)
        pages.append(params)

        def answer_on_the_page() -> None:
            [pending] = api.ok("list_interactions")["interactions"]
            api.ok("respond_interaction", request_id=pending["id"], answer={"id": upload})

        await anyio.to_thread.run_sync(answer_on_the_page)
        return types.ElicitResult(action="accept")

    async def scenario() -> dict[str, Any]:
        async with http_client(live, token, elicitation_callback=visit, **MODERN) as client:
            return structured(
                await client.call_tool(
                    "request_user_input", {"kind": "file", "message": "Send the report"}
                )
            )

    result = anyio.run(scenario)
    [page] = pages
    assert page.url == result["answer_url"]
    assert page.message == "Send the report"
    assert result["interaction"]["status"] == "answered"
    assert result["interaction"]["answered_via"] != "mcp"


def test_a_legacy_url_elicitation_is_completed_when_answered_elsewhere(
    live: LiveServer, user_api: UserApi
) -> None:
    api, token = user_api("fay")
    upload = _upload(api)
    completed: list[str] = []
    done = anyio.Event()

    async def accept(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams)
        return types.ElicitResult(action="accept")

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            completed.append(message.params.elicitation_id)
            done.set()

    def answer_on_the_page() -> None:
        found = eventually(lambda: api.ok("list_interactions")["interactions"])
        api.ok("respond_interaction", request_id=found[0]["id"], answer={"id": upload})

    async def scenario() -> dict[str, Any]:
        options = {"elicitation_callback": accept, "message_handler": on_message, **LEGACY}
        async with http_client(live, token, **options) as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(anyio.to_thread.run_sync, answer_on_the_page)
                result = structured(
                    await client.call_tool(
                        "request_user_input", {"kind": "file", "message": "Send it"}
                    )
                )
            with anyio.fail_after(10):
                await done.wait()
            return result

    result = anyio.run(scenario)
    assert result["interaction"]["status"] == "answered"
    assert completed == [result["interaction"]["id"]]


def test_a_task_waits_for_an_answer_given_in_the_web_api(
    live: LiveServer, user_api: UserApi
) -> None:
    api, token = user_api("gus")

    async def scenario() -> tuple[types.Task, types.Task, types.CallToolResult]:
        async with http_client(live, token, elicitation_callback=_never, **MODERN) as client:
            discovered = await client.session.send_discover("2026-07-28")
            assert "io.modelcontextprotocol/tasks" in discovered["capabilities"]["extensions"]
            call = types.CallToolRequest(
                params=types.CallToolRequestParams(
                    name="request_confirmation",
                    arguments={"message": "Deploy on Friday?"},
                    task=types.TaskMetadata(ttl=86_400_000),
                )
            )
            created = await client.session.send_request(call, types.CreateTaskResult)
            task_id = created.task.task_id
            get = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
            waiting = await client.session.send_request(get, types.GetTaskResult)
            await anyio.to_thread.run_sync(
                lambda: api.ok("respond_interaction", request_id=task_id, answer=True)
            )
            finished = await client.session.send_request(get, types.GetTaskResult)
            payload = types.GetTaskPayloadRequest(
                params=types.GetTaskPayloadRequestParams(task_id=task_id)
            )
            final = await client.session.send_request(payload, types.CallToolResult)
            return waiting, finished, final

    waiting, finished, final = anyio.run(scenario)
    assert waiting.status == "input_required"
    assert finished.status == "completed"
    body = structured(final)
    assert body["interaction"]["id"] == waiting.task_id
    assert body["interaction"]["answer"] is True
    assert body["interaction"]["answered_via"] != "mcp"


def test_another_users_task_is_not_found(live: LiveServer, user_api: UserApi) -> None:
    api, _ = user_api("hal2")
    _, token = user_api("ivy")
    theirs = api.ask(api.conversation())["id"]

    async def scenario() -> MCPError:
        async with http_client(live, token, **MODERN) as client:
            get = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=theirs))
            with pytest.raises(MCPError) as refused:
                await client.session.send_request(get, types.GetTaskResult)
            return refused.value

    assert anyio.run(scenario).error.message == "task not found"


def _listen_sees_new_requests(api: Api, connect: Any) -> list[str]:
    conversation = api.conversation()
    seen: list[str] = []

    async def scenario() -> None:
        async with (
            connect(**MODERN) as client,
            client.listen(resource_subscriptions=[PENDING_URI]) as subscription,
        ):
            await anyio.to_thread.run_sync(lambda: api.ask(conversation))
            with anyio.fail_after(20):
                async for event in subscription:
                    seen.append(event.uri)
                    break

    anyio.run(scenario)
    return seen


def test_subscriptions_listen_sees_a_new_pending_request_over_http(
    live: LiveServer, user_api: UserApi
) -> None:
    api, token = user_api("jay")
    seen = _listen_sees_new_requests(api, lambda **options: http_client(live, token, **options))
    assert seen == [PENDING_URI]


def test_subscriptions_listen_sees_a_new_pending_request_over_stdio(
    live: LiveServer, user_api: UserApi
) -> None:
    api, token = user_api("kay")
    seen = _listen_sees_new_requests(api, lambda **options: stdio_client(live, token, **options))
    assert seen == [PENDING_URI]


def test_the_round_trip_over_stdio(live: LiveServer, user_api: UserApi) -> None:
    _, token = user_api("lou")

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"answer": 3})

    async def scenario() -> dict[str, Any]:
        async with stdio_client(live, token, elicitation_callback=answer, **MODERN) as client:
            return structured(
                await client.call_tool(
                    "request_user_input", {"kind": "integer", "message": "How many?"}
                )
            )

    result = anyio.run(scenario)
    assert result["interaction"]["status"] == "answered"
    assert result["interaction"]["answer"] == 3


def test_a_refused_answer_is_asked_again_in_a_new_round(
    live: LiveServer, user_api: UserApi
) -> None:
    _, token = user_api("max2")
    messages: list[str] = []
    replies = iter([500, 5])

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        messages.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": next(replies)})

    async def scenario() -> dict[str, Any]:
        async with http_client(live, token, elicitation_callback=answer, **MODERN) as client:
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
    assert result["interaction"]["answer"] == 5
    first, second = messages
    assert first == "How many?"
    assert second.startswith("How many?\n\nThat answer was refused:\n- ")
    assert _rounds(live, result["interaction"]["id"]) == ["accept", "accept"]


def test_an_answer_the_caller_may_not_give_ends_the_rounds_saying_why(
    live: LiveServer, user_api: UserApi, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    _, token = user_api("ned")
    messages: list[str] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        messages.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": True})

    async def scenario() -> dict[str, Any]:
        async with http_client(live, token, elicitation_callback=answer, **MODERN) as client:
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
    assert messages == ["Ship it?"]  # not asked again: another round cannot help
    assert tracebacks(caplog.records) == []

"""The OpenAI-compatible provider against a local server speaking the real wire format."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pawflow.agent import AgentSpec, ModelRequest, ModelSettings, OpenAIChatModel, ToolSpec
from pawflow.agent.models.base import ChatMessage, ModelResponse, TextDelta, ToolCall, collect
from pawflow.agent.models.openai import endpoint
from pawflow.chat.service import ChatService
from pawflow.errors import InvalidInput, ModelError
from pawflow.store import Store
from tests.agent.conftest import scheduled
from tests.agent.fake_openai import (
    FakeOpenAI,
    completion,
    delta,
    fake_openai,
    reply_json,
    reply_sse,
)

REQUEST = ModelRequest(
    messages=(
        ChatMessage("system", "be brief"),
        ChatMessage("user", "deploy"),
        ChatMessage("assistant", None, tool_calls=(ToolCall("c1", "look", '{"at": "x"}'),)),
        ChatMessage("tool", "seen", tool_call_id="c1"),
    ),
    tools=(ToolSpec("deploy", "Deploy it.", {"type": "object", "properties": {}}),),
    max_tokens=100,
)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with fake_openai() as server:
        yield server


class Sleeps:
    def __init__(self) -> None:
        self.slept: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.slept.append(seconds)


def model(fake: FakeOpenAI, sleeps: Sleeps | None = None, **options: Any) -> OpenAIChatModel:
    return OpenAIChatModel(
        "test-model",
        url=fake.url,
        api_key="sk-test",
        sleep=sleeps or Sleeps(),
        **options,
    )


def test_a_whole_reply_with_tool_calls(fake: FakeOpenAI) -> None:
    fake.then(
        reply_json(
            completion(
                "On it.",
                [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "deploy", "arguments": '{"environment": "staging"}'},
                    }
                ],
            )
        )
    )
    response = collect(model(fake, streaming=False).stream(REQUEST))
    assert response.text == "On it."
    assert response.tool_calls == (ToolCall("call_a", "deploy", '{"environment": "staging"}'),)
    assert response.usage is not None and response.usage.total == 17

    [sent] = fake.requests
    assert sent["path"] == "/v1/chat/completions"
    assert fake.headers[0]["Authorization"] == "Bearer sk-test"
    assert sent["model"] == "test-model" and sent["stream"] is False and sent["max_tokens"] == 100
    assert sent["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "deploy",
                "description": "Deploy it.",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]
    assert sent["messages"][2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "look", "arguments": '{"at": "x"}'},
            }
        ],
    }
    assert sent["messages"][3] == {"role": "tool", "content": "seen", "tool_call_id": "c1"}


def test_streamed_text_arrives_piece_by_piece(fake: FakeOpenAI) -> None:
    fake.then(
        reply_sse(
            [
                delta(role="assistant", content=""),
                delta(content="Hel"),
                delta(content="lo"),
                delta(finish="stop"),
                {"id": "x", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}},
            ]
        )
    )
    outputs = list(model(fake).stream(REQUEST))
    assert outputs[:-1] == [TextDelta("Hel"), TextDelta("lo")]
    final = outputs[-1]
    assert isinstance(final, ModelResponse)
    assert (final.text, final.finish_reason, final.tool_calls) == ("Hello", "stop", ())
    assert final.usage is not None and final.usage.total == 5
    assert fake.requests[0]["stream"] is True


def test_streamed_tool_call_deltas_are_joined(fake: FakeOpenAI) -> None:
    fake.then(
        reply_sse(
            [
                delta(role="assistant", content=None),
                delta(
                    tool_calls=[
                        {
                            "index": 0,
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "request_confirmation", "arguments": ""},
                        }
                    ]
                ),
                delta(tool_calls=[{"index": 0, "function": {"arguments": '{"message": "Which'}}]),
                delta(
                    tool_calls=[
                        {
                            "index": 1,
                            "id": "call_2",
                            "type": "function",
                            "function": {"name": "deploy", "arguments": "{}"},
                        }
                    ]
                ),
                delta(tool_calls=[{"index": 0, "function": {"arguments": ' one?"}'}}]),
                delta(finish="tool_calls"),
            ]
        )
    )
    final = collect(model(fake).stream(REQUEST))
    assert final.tool_calls == (
        ToolCall("call_1", "request_confirmation", '{"message": "Which one?"}'),
        ToolCall("call_2", "deploy", "{}"),
    )
    assert final.tool_calls[0].parsed_arguments() == {"message": "Which one?"}


def test_a_4xx_is_a_clear_error_and_never_retried(fake: FakeOpenAI) -> None:
    fake.then(reply_json({"error": {"message": "model 'nope' not found"}}, 404))
    sleeps = Sleeps()
    with pytest.raises(ModelError) as caught:
        collect(model(fake, sleeps).stream(REQUEST))
    assert caught.value.status == 404 and not caught.value.retryable
    assert "model 'nope' not found" in str(caught.value)
    assert fake.hits == 1 and sleeps.slept == []


def test_a_5xx_is_retried_with_backoff(fake: FakeOpenAI) -> None:
    fake.then(
        reply_json({"error": {"message": "overloaded"}}, 503),
        reply_json({"error": "boom"}, 500),
        reply_sse([delta(content="fine"), delta(finish="stop")]),
    )
    sleeps = Sleeps()
    final = collect(model(fake, sleeps, backoff=0.5).stream(REQUEST))
    assert final.text == "fine"
    assert fake.hits == 3 and sleeps.slept == [0.5, 1.0]


def test_retries_are_bounded(fake: FakeOpenAI) -> None:
    fake.then(reply_json({"error": {"message": "down for maintenance"}}, 502))
    sleeps = Sleeps()
    with pytest.raises(ModelError) as caught:
        collect(model(fake, sleeps, max_retries=2, backoff=1, max_backoff=1.5).stream(REQUEST))
    assert caught.value.retryable and caught.value.status == 502
    assert "after 3 attempts" in str(caught.value) and "down for maintenance" in str(caught.value)
    assert fake.hits == 3 and sleeps.slept == [1, 1.5]


def test_a_timeout_is_retried_then_reported(fake: FakeOpenAI) -> None:
    fake.then(fake.hang())
    with pytest.raises(ModelError) as caught:
        collect(model(fake, timeout=0.2, max_retries=1).stream(REQUEST))
    assert "timed out" in str(caught.value) and caught.value.retryable
    assert fake.hits == 2


@pytest.mark.parametrize(
    "chunks",
    [
        ["{not json"],
        [delta(content="ok"), '{"choices": "nope"}'],
        [{"choices": [{"delta": "text"}]}],
        [{"error": {"message": "context length exceeded"}}],
    ],
)
def test_malformed_chunks_are_clear_errors(fake: FakeOpenAI, chunks: list[Any]) -> None:
    fake.then(reply_sse(chunks))
    with pytest.raises(ModelError) as caught:
        collect(model(fake).stream(REQUEST))
    assert "malformed" in str(caught.value) or "context length exceeded" in str(caught.value)
    assert fake.hits == 1


def test_a_stream_cut_after_text_is_not_retried(fake: FakeOpenAI) -> None:
    fake.then(reply_sse([delta(content="half a")], cut=True))
    outputs: list[Any] = []
    with pytest.raises(ModelError, match="ended before it was complete"):
        for output in model(fake).stream(REQUEST):
            outputs.append(output)
    assert outputs == [TextDelta("half a")] and fake.hits == 1


def test_a_stream_cut_before_any_text_is_retried(fake: FakeOpenAI) -> None:
    fake.then(reply_sse([], cut=True), reply_sse([delta(content="again"), delta(finish="stop")]))
    assert collect(model(fake).stream(REQUEST)).text == "again"
    assert fake.hits == 2


def test_an_unreachable_server_is_an_error_not_a_hang() -> None:
    unreachable = OpenAIChatModel(
        "m", url="http://127.0.0.1:9/v1", max_retries=1, sleep=Sleeps(), timeout=2
    )
    with pytest.raises(ModelError, match="cannot reach"):
        collect(unreachable.stream(REQUEST))


def test_settings_come_from_the_environment() -> None:
    assert ModelSettings.from_env({}) is None
    local = ModelSettings.from_env(
        {"PAWFLOW_MODEL_URL": "http://localhost:11434/v1", "PAWFLOW_MODEL": "llama3.2"}
    )
    assert local == ModelSettings(model="llama3.2", url="http://localhost:11434/v1")
    hosted = ModelSettings.from_env({"PAWFLOW_MODEL": "gpt-4o-mini", "PAWFLOW_MODEL_API_KEY": "k"})
    assert (
        hosted is not None and hosted.url == "https://api.openai.com/v1" and hosted.api_key == "k"
    )
    with pytest.raises(InvalidInput, match="PAWFLOW_MODEL"):
        ModelSettings.from_env({"PAWFLOW_MODEL_URL": "http://localhost:8000/v1"})
    assert endpoint("http://h/v1/") == "http://h/v1/chat/completions"
    assert endpoint("http://h/v1/chat/completions") == "http://h/v1/chat/completions"


def test_a_model_failure_is_a_clear_message_in_the_conversation(
    fake: FakeOpenAI, sqlite_store: Store
) -> None:
    store = sqlite_store
    fake.then(reply_json({"error": {"message": "invalid api key"}}, 401))
    agent = AgentSpec("remote", "be brief", model(fake))
    with ChatService(store, [agent], poll_interval=None) as service:
        conversation = store.create_conversation("alice")
        service.assign(conversation.id, "remote")
        with store.unit() as u:
            message = u.messages.append_message(conversation.id, content="hello", author="alice")
        turn = service.handle_message(store, conversation.id, message)
    assert turn is not None and turn.results[0].halt_reason == "model_error"
    with store.unit(write=False) as u:
        [_, reply] = u.messages.history(conversation.id, user="alice")
    assert reply.role == "assistant" and reply.author == "remote"
    assert "invalid api key" in reply.content and "(401)" in reply.content
    assert reply.data is not None and reply.data["error"] is True and "checkpoint" in reply.data


def test_a_real_provider_drives_request_confirmation(fake: FakeOpenAI, sqlite_store: Store) -> None:
    store = sqlite_store
    ask = '{"message": "Ship it?", "mode": "confirm"}'
    fake.then(
        reply_sse(
            [
                delta(content="Let me check with you."),
                delta(
                    tool_calls=[
                        {
                            "index": 0,
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "request_confirmation", "arguments": ask},
                        }
                    ]
                ),
                delta(finish="tool_calls"),
            ]
        ),
        reply_sse([delta(content="Shipped."), delta(finish="stop")]),
    )
    agent = AgentSpec("remote", "be brief", model(fake))
    with ChatService(store, [agent], poll_interval=None) as service:
        conversation = store.create_conversation("alice")
        service.assign(conversation.id, "remote")
        with store.unit() as u:
            message = u.messages.append_message(
                conversation.id, content="ship the release", author="alice"
            )
        service.handle_message(store, conversation.id, message)
        [request] = store.list_interactions(user="alice", status="pending")
        store.respond_interaction(request.id, True, user="alice")
        scheduled(service, conversation.id)
        assert service.run_due() == 1
    woken = fake.requests[1]["messages"]
    assert woken[0]["role"] == "system"
    # The answer is the result of the call that asked; the call moved to where it came.
    function = {"name": "request_confirmation", "arguments": ask}
    call = {"id": "c1", "type": "function", "function": function}
    assert woken[1:] == [
        {"role": "user", "content": "ship the release"},
        {"role": "assistant", "content": "Let me check with you."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "content": '{"status": "answered", "answer": true}', "tool_call_id": "c1"},
    ]
    with store.unit(write=False) as u:
        history = u.messages.history(conversation.id, user="alice")
    assert [m.content for m in history][-1] == "Shipped."

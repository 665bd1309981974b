"""PawFlow's agents as A2A agents (JSON-RPC, A2A 1.0), through the ``a2a-sdk`` server.

Each agent of the server is an A2A agent at ``/a2a/{agent}``, its card at
``/a2a/{agent}/.well-known/agent-card.json``. Callers authenticate as on the action API
(``Authorization: Bearer <token>``); a task belongs to the user who started it, and is not
found for anyone else, like a task that does not exist.

A task's context (``contextId``) is a conversation of the caller's (the one of that id, or
the one titled ``A2A <contextId>``, made on first use), answered by the agent. A message
posts its text there; the task then waits for the agent's turns and ends:

- ``TASK_STATE_INPUT_REQUIRED`` while the conversation has pending requests: the status
  message carries what the agent said (text parts) and each pending request's record (a data
  part, ``contract: pawflow.user-interaction.v1``);
- ``TASK_STATE_COMPLETED`` otherwise, with what the agent said.

A message on an input-required task answers: a data part ``{"request_id": ID, "answer":
VALUE}`` (or ``{"request_id": ID, "cancel": true}``) answers that request, a text part alone
the only pending one, through the same validation as ``respond_interaction``. An answer that
fails it keeps the task input-required, the error in the status message, and the request
pending. An answer that is not the caller's to give (the request waits for its assignees, or
a vote for that person stands already) keeps it so too, and the reply is a JSON-RPC error of
code -32600 (invalid request) whose message says whom the request waits for. A request
answered meanwhile from anywhere else is no longer asked: the next message on the task (any
text) carries the task on from there. Cancelling the task cancels the requests its context
still asks.

Tasks are kept in the store (:mod:`pawflow.a2a.tasks`): an input-required task is answered
after a restart as before it. A task's push-notification configs are kept there too, and
each update of the task goes to them through the outbox, as webhook deliveries do.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from a2a.auth.user import User
from a2a.helpers.proto_helpers import (
    get_data_parts,
    get_message_text,
    new_data_part,
    new_task,
    new_text_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import Event, EventQueue
from a2a.server.request_handlers import DefaultRequestHandlerV2
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.server.tasks.task_updater import TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    Message,
    Part,
    SecurityRequirement,
    SecurityScheme,
    SendMessageRequest,
    StringList,
    Task,
    TaskState,
)
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, TransportProtocol
from a2a.utils.errors import InvalidRequestError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pawflow.a2a.tasks import OutboxPushes, StoredPushConfigs, StoredTasks, push_url_check
from pawflow.agent_runs import AgentThread, caller
from pawflow.egress import EgressRule
from pawflow.errors import AlreadyVoted, Forbidden, InvalidInput, NotFound, PawFlowError
from pawflow.records import Interaction
from pawflow.server.auth import Principal
from pawflow.server.context import ServerContext
from pawflow.server.errors import HTTPProblem, pawflow_error_response, problem_response

TITLE = "A2A {context}"
"""The title of the conversation a new context gets."""
VIA = "a2a"
_PRINCIPAL = "pawflow.principal"  # the authenticated caller, in the request's scope
_REFUSED = "pawflow.refused"  # an answer the store refused as not the caller's, in the call


class _Caller(User):
    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self._name


class _Calls(DefaultServerCallContextBuilder):
    """The SDK's call context: the user the endpoint authenticated (tasks are theirs)."""

    def build(self, request: Request) -> ServerCallContext:
        built = super().build(request)
        built.state[_PRINCIPAL] = request.scope[_PRINCIPAL]
        return built

    def build_user(self, request: Request) -> User:
        principal = request.scope[_PRINCIPAL]
        assert isinstance(principal, Principal)
        return _Caller(principal.user)


class _Executor(AgentExecutor):
    """Runs one message of a task: post it (or answer with it), then wait for the agent."""

    def __init__(self, ctx: ServerContext, agent: str) -> None:
        self.ctx = ctx
        self.agent = agent

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = str(context.task_id), str(context.context_id)
        updater = TaskUpdater(event_queue, task_id, context_id)
        task = context.current_task
        if task is None:
            history = [context.message] if context.message is not None else []
            await event_queue.enqueue_event(
                new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED, history=history)
            )
        principal = context.call_context.state[_PRINCIPAL]
        thread = await AgentThread.open(
            self.ctx, principal, self.agent, context_id, title=TITLE.format(context=context_id)
        )
        mark = await thread.last_seq()
        waiting = task is not None and task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        try:
            if waiting:
                await self._answer(thread, context)
            else:
                text = context.get_user_input().strip()
                if text:
                    await thread.post(text)
        except (InvalidInput, NotFound, Forbidden, AlreadyVoted) as exc:
            if isinstance(exc, Forbidden | AlreadyVoted):  # the reply is an error: see _Handler
                context.call_context.state[_REFUSED] = exc
            parts = [new_text_part(f"The answer was not accepted: {_problem(exc)}")]
            if isinstance(exc, InvalidInput):
                parts.append(new_data_part({"errors": [e.to_dict() for e in exc.errors]}))
            parts += [_request_part(record) for record in await thread.pending()]
            await updater.requires_input(message=updater.new_agent_message(parts))
            return
        await updater.start_work()
        settled = await thread.settle(after_seq=mark)
        parts = [new_text_part(message.content) for message in settled.messages]
        if not settled.finished:
            parts.append(new_text_part("The agent is still working: send a message to see more."))
            await updater.requires_input(message=updater.new_agent_message(parts))
        elif settled.pending:
            parts += [_request_part(record) for record in settled.pending]
            await updater.requires_input(message=updater.new_agent_message(parts))
        else:
            parts = parts or [new_text_part("Done.")]
            await updater.complete(message=updater.new_agent_message(parts))

    async def _answer(self, thread: AgentThread, context: RequestContext) -> None:
        """Answer with the message: its data parts name requests, its text the only one."""
        message = context.message
        answers: list[dict[str, Any]] = []
        if message is not None:
            answers = [d for d in get_data_parts(message.parts) if isinstance(d, dict)]
        for data in answers:
            request_id = data.get("request_id")
            if not isinstance(request_id, str):
                raise InvalidInput("a data part answers with request_id and answer (or cancel)")
            if data.get("cancel") is True:
                await thread.resolve(request_id, "cancelled", None, via=VIA)
            else:
                await thread.resolve(request_id, "resolved", data.get("answer"), via=VIA)
        text = get_message_text(message).strip() if message is not None else ""
        if not answers and text:
            pending = await thread.pending()
            if len(pending) > 1:
                raise InvalidInput("several requests are pending: answer each by its request_id")
            if pending:
                await thread.resolve(pending[0].id, "resolved", text, via=VIA)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Cancel the task and the requests its context still asks."""
        context_id = str(context.context_id)
        thread = await AgentThread.open(
            self.ctx,
            context.call_context.state[_PRINCIPAL],
            self.agent,
            context_id,
            title=TITLE.format(context=context_id),
        )
        for record in await thread.pending():
            await thread.resolve(record.id, "cancelled", None, via=VIA)
        updater = TaskUpdater(event_queue, str(context.task_id), context_id)
        await updater.cancel()


def _request_part(record: Interaction) -> Part:
    return new_data_part(record.to_dict(), media_type="application/json")


def _problem(exc: PawFlowError) -> str:
    if isinstance(exc, InvalidInput | Forbidden | AlreadyVoted):
        return exc.message
    if isinstance(exc, NotFound):
        return f"{exc.what} not found"
    return str(exc)


class _Handler(DefaultRequestHandlerV2):
    """The SDK's handler, but a message whose answer is not the caller's to give (the
    request waits for others, or a vote for that person stands) gets a JSON-RPC error, code
    invalid request (-32600), saying so: its task stays input-required, nothing answered."""

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Message | Task:
        result: Message | Task = await super().on_message_send(params, context)
        _refusal(context)
        return result

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        async with aclosing(super().on_message_send_stream(params, context)) as events:
            async for event in events:
                _refusal(context)
                yield event
        _refusal(context)


def _refusal(context: ServerCallContext) -> None:
    refused = context.state.pop(_REFUSED, None)
    if isinstance(refused, Forbidden):
        raise InvalidRequestError(refused.message, {"waiting_for": refused.waiting_for})
    if isinstance(refused, AlreadyVoted):
        raise InvalidRequestError(refused.message, {"vote": refused.vote})


class A2AFace:
    """The A2A endpoint and cards of the server's agents, one SDK handler per agent."""

    def __init__(self, ctx: ServerContext) -> None:
        self.ctx = ctx
        self._dispatchers: dict[str, JsonRpcDispatcher] = {}

    def _card(self, agent: str) -> AgentCard:
        agents = self.ctx.agents
        spec = agents.agent(agent) if agents is not None else None
        if spec is None:
            raise NotFound("agent")
        url = f"{self.ctx.settings.base_url.rstrip('/')}/a2a/{agent}"
        summary = spec.instructions.strip().split("\n\n", 1)[0] or agent
        return AgentCard(
            name=agent,
            description=summary,
            supported_interfaces=[
                AgentInterface(
                    url=url,
                    protocol_binding=TransportProtocol.JSONRPC.value,
                    protocol_version=PROTOCOL_VERSION_CURRENT,
                )
            ],
            version="1",
            capabilities=AgentCapabilities(streaming=True, push_notifications=True),
            security_schemes={
                "bearer": SecurityScheme(
                    http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="bearer")
                )
            },
            security_requirements=[SecurityRequirement(schemes={"bearer": StringList()})],
            default_input_modes=["text/plain", "application/json"],
            default_output_modes=["text/plain", "application/json"],
            skills=[AgentSkill(id=agent, name=agent, description=summary, tags=["pawflow"])],
        )

    def _dispatcher(self, agent: str) -> JsonRpcDispatcher:
        found = self._dispatchers.get(agent)
        if found is None:
            store = self.ctx.store
            rule = EgressRule.parse(self.ctx.settings.egress_allowed_hosts)
            handler = _Handler(
                agent_executor=_Executor(self.ctx, agent),
                task_store=StoredTasks(store, agent),  # each agent's own tasks, in the store
                agent_card=self._card(agent),
                push_config_store=StoredPushConfigs(store),
                push_sender=OutboxPushes(store),
                push_url_validator=push_url_check(rule),
            )
            found = JsonRpcDispatcher(request_handler=handler, context_builder=_Calls())
            self._dispatchers[agent] = found
        return found

    async def handle(self, request: Request) -> Response:
        """``POST /a2a/{agent}``: a JSON-RPC call of the caller's."""
        try:
            principal = await caller(self.ctx, request)
            dispatcher = self._dispatcher(request.path_params["agent"])
        except HTTPProblem as exc:
            return problem_response(exc)
        except PawFlowError as exc:
            return pawflow_error_response(exc)
        request.scope[_PRINCIPAL] = principal
        return await dispatcher.handle_requests(request)

    async def card(self, request: Request) -> Response:
        """The agent's card, for a caller with a token."""
        try:
            await caller(self.ctx, request)
            card = self._card(request.path_params["agent"])
        except HTTPProblem as exc:
            return problem_response(exc)
        except PawFlowError as exc:
            return pawflow_error_response(exc)
        return JSONResponse(agent_card_to_dict(card))

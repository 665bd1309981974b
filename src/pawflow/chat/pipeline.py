"""The chat turn pipeline: ``intercept → classify → route → plan → execute → curate → record``.

Every turn — a user's message, or an agent's wakeup — runs these stages in this order. A
stage reads and fills the :class:`Turn`; one that settles the turn sets ``turn.done`` and
the later stages do not run (an intercept that answers records its own reply).

What the conversation waits on decides where an answer goes, and no model is consulted for
it: the intercept chain is **shielded** while the session waits on another owner; classify
**steers** a message that answers the pending continuation to its owner (see
:mod:`pawflow.chat.matching`), or answers the pending durable request with it (see
:mod:`pawflow.chat.answering`); route hands the turn to that owner; plan gives it the answer
as its task, or resumes its halted run, and tells the model of a request still waiting;
curate **re-grounds** the reply in what was asked; record opens what the final answer
leaves the conversation waiting on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Protocol

from pawflow.agent.builtin_tools import target_of
from pawflow.agent.loop import (
    ApprovedCall,
    RunFinished,
    RunRequest,
    StepStarted,
    ToolFinished,
    ToolStarted,
)
from pawflow.agent.models.base import ChatMessage, ToolCall
from pawflow.agent.resume import load_seed
from pawflow.agent.tools import (
    AWAITING_APPROVAL,
    AWAITING_CONFIRMATION,
    AWAITING_USER_INPUT,
    ToolContext,
)
from pawflow.chat import answering, inference, matching, transcript
from pawflow.chat.intercepts import Intercept, InterceptChain
from pawflow.chat.progress import Progress
from pawflow.chat.sessions import SessionContinuation, SessionRegistry
from pawflow.chat.turn import AgentRuntime, Task, Turn
from pawflow.errors import ConfigError, Conflict
from pawflow.reading.words import Classifier
from pawflow.records import Message, Outcome

if TYPE_CHECKING:
    from pawflow.store import Unit, Wakeup

log = logging.getLogger("pawflow.chat")

STAGES = ("intercept", "classify", "route", "plan", "execute", "curate", "record")


class Stage(Protocol):
    name: str

    def __call__(self, turn: Turn) -> None: ...


class Pipeline:
    """The stages, in the one order they may run in."""

    def __init__(self, stages: Sequence[Stage]) -> None:
        names = tuple(stage.name for stage in stages)
        if names != STAGES:
            raise ConfigError(f"the stages must be {' → '.join(STAGES)}, not {' → '.join(names)}")
        self.stages = list(stages)

    def stage(self, name: str) -> Stage:
        return self.stages[STAGES.index(name)]

    def run(self, turn: Turn) -> Turn:
        for stage in self.stages:
            turn.trace.append(stage.name)
            stage(turn)
            if turn.done:
                break
        return turn


def _close(sessions: SessionRegistry, how: str, continuation_id: str) -> bool:
    """Withdraw or expire; False when it had left ``pending`` already (another turn took it)."""
    try:
        if how == "withdraw":
            sessions.withdraw(continuation_id)
        else:
            sessions.expire(continuation_id)
    except Conflict:
        return False
    return True


# --- intercept ------------------------------------------------------------------------


class InterceptStage:
    """The ordered intercept chain, shielded; the first that answers settles the turn."""

    name = "intercept"

    def __init__(self, chain: InterceptChain, sessions: SessionRegistry) -> None:
        self.chain = chain
        self.sessions = sessions

    @property
    def intercepts(self) -> list[Intercept]:
        return [bound.intercept for bound in self.chain.bound()]

    def __call__(self, turn: Turn) -> None:
        turn.pending = self.sessions.pending(turn.conversation_id)
        if turn.kind != "message":
            return  # a wakeup belongs to the agent that asked; nothing may answer for it
        for bound in self.chain.bound():
            if bound.shielded(turn.pending):
                turn.notes.append(f"shielded {bound.name}")
                continue
            try:
                reply = bound.intercept(turn)
            except Exception:  # a plugin's failure must not swallow the message
                log.exception("intercept %s failed", bound.name)
                continue
            if reply is None:
                continue
            turn.reply = reply
            turn.answered_by = bound.name
            self._end_one_reply_questions(turn)
            turn.recorded = turn.post_reply(
                reply, author=bound.owner, data={"intercept": bound.name}
            )
            turn.done = True
            return

    def _end_one_reply_questions(self, turn: Turn) -> None:
        """An inferred choice or question lives for one reply, an intercepted one too; and
        a message that does not pick withdraws any choice, whichever stage answers it."""
        pending = turn.pending
        if pending is None or pending.kind in ("approval", "request"):
            return  # chatter never withdraws a durable request
        if pending.origin != "inferred" and matching.picked(pending, turn.text):
            return
        if pending.origin != "inferred" and pending.kind != "choice":
            return
        if _close(self.sessions, "withdraw", pending.id):
            turn.notes.append(f"withdrew {pending.kind} {pending.id}")


# --- classify, route, plan ------------------------------------------------------------


class ClassifyStage:
    """The steer: a message that answers what its session waits on goes to the owner."""

    name = "classify"

    def __init__(self, runtime: AgentRuntime, classifier: Classifier | None = None) -> None:
        self.runtime = runtime
        # Off by default; see pawflow.chat.classifier for what it may and may not do.
        self.classifier = classifier

    def __call__(self, turn: Turn) -> None:
        if turn.kind == "wakeup":
            turn.intent = "wakeup"
            return
        turn.intent = "chat"
        pending = turn.pending
        if pending is None:
            return
        if pending.kind == "request":
            answering.answer(turn, pending, self.classifier)
            return
        sessions = self.runtime.sessions
        reading, match = matching.read(pending, turn.text, self.classifier)
        if reading == "withdraw":
            _close(sessions, "withdraw", pending.id)
            turn.notes.append(f"withdrew {pending.kind} {pending.id}: not a pick")
            return
        if reading == "keep" or match is None:
            return
        if self.runtime.agent(pending.owner) is None:
            # Its owner is an intercept that let the message pass, or an agent not run here:
            # nobody else may take the answer.
            turn.notes.append(f"{pending.owner} does not answer here")
            return
        if pending.run_id is not None and pending.step_id is not None:
            seed = load_seed(self.runtime.checkpoints, pending.run_id, pending.step_id)
            if seed is None or seed.agent != pending.owner:
                # The run cannot go on (expired, swept, unreadable): a fresh turn instead.
                _close(sessions, "expire", pending.id)
                turn.notes.append(f"run {pending.run_id} cannot resume: a fresh turn")
                return
            match = replace(match, seed=seed)
        try:
            sessions.answered(pending.id, turn.text)
        except Conflict:
            turn.notes.append(f"{pending.id} was answered by another turn")
            return
        turn.match = match
        turn.intent = pending.intent or "answer"


class RouteStage:
    """Picks the agent: the one that asked (a wakeup, a matched answer), else the assigned one."""

    name = "route"

    def __init__(self, runtime: AgentRuntime) -> None:
        self.runtime = runtime

    def __call__(self, turn: Turn) -> None:
        if turn.wakeup is not None:
            name: str | None = turn.wakeup.agent
        elif turn.match is not None:
            name = turn.match.owner
        else:
            name = self.runtime.assigned_agent(turn.conversation_id)
        turn.agent = None if name is None else self.runtime.agent(name)
        if turn.agent is None:
            turn.done = True  # no agent answers in this conversation


def history_messages(
    history: Sequence[Message], replacing: Mapping[str, str] | None = None
) -> list[ChatMessage]:
    """The conversation as the model reads it, tool calls and results included.

    ``replacing`` gives other text for some messages (by id): a matched answer becomes its
    owner's task. See :mod:`pawflow.chat.transcript`.
    """
    return transcript.model_messages(history, replacing)


def settled_calls(wakeup: Wakeup) -> list[ApprovedCall]:
    """The user's decision on an approval, as a call to settle before the model speaks."""
    data = wakeup.data
    if data.get("purpose") != "approval" or not isinstance(data.get("tool_call"), dict):
        return []
    call = ToolCall.from_dict(data["tool_call"])
    outcome = Outcome.of(data)
    request_id = data.get("request_id")
    answer = outcome.answer
    if outcome.unanswered is not None:
        reason = f"The approval request {outcome.unanswered}: {call.name} was not run."
        return [ApprovedCall(call, False, reason, request_id=request_id)]
    if not isinstance(answer, dict):  # an approval asked before decisions existed
        approved = answer is True
        reason = "" if approved else f"The user declined: {call.name} was not run."
        return [ApprovedCall(call, approved, reason, request_id=request_id)]
    decision = str(answer.get("decision"))
    by = str(answer.get("by") or "the user")
    reason = ""
    if decision == "reject":
        said = answer.get("reason")
        reason = (
            f"Rejected by {by}: {said}" if said else f"Rejected by {by}: {call.name} was not run."
        )
    elif decision == "respond":
        reason = str(answer.get("text") or "")
    arguments = answer.get("arguments") if decision == "edit" else None
    return [
        ApprovedCall(
            call,
            decision in ("approve", "edit"),
            reason,
            decision=decision,
            arguments=arguments if isinstance(arguments, dict) else None,
            decided_by=by,
            request_id=request_id,
            digest=answer.get("digest"),
        )
    ]


class PlanStage:
    """The task: the conversation so far; a matched answer as the owner's task; or a resume."""

    name = "plan"

    def __call__(self, turn: Turn) -> None:
        agent = turn.agent
        assert agent is not None
        match = turn.match
        if match is not None and match.seed is not None:
            # The halted run goes on at its next iteration, the reply its observation.
            turn.tasks = [Task(agent, [], seed=match.seed, reply=match.reply)]
            return
        # The conversation up to the turn's own message: a message turn's user message, a
        # wakeup's line (the answer). Later messages are later turns, each answered once.
        with turn.store.unit(write=False) as u:
            history = u.messages.recent(
                turn.conversation_id, agent.history_limit, until=turn.message_id
            )
        replacing = (
            {turn.message_id: match.task()}
            if match is not None and turn.message_id is not None
            else None
        )
        prompt = agent.system_prompt
        pending = turn.pending
        if turn.kind == "message" and pending is not None and pending.kind == "request":
            # The message did not answer it (that would have settled the turn): it waits on.
            prompt = f"{prompt}\n\n{answering.waiting_note(pending)}"
        messages = [ChatMessage("system", prompt), *history_messages(history, replacing)]
        approved = settled_calls(turn.wakeup) if turn.wakeup is not None else []
        turn.tasks = [Task(agent, messages, approved)]


# --- execute ---------------------------------------------------------------------------


class ExecuteStage:
    name = "execute"

    def __init__(self, runtime: AgentRuntime, *, progress: bool = True) -> None:
        self.runtime = runtime
        self.progress = progress

    def request(self, turn: Turn, task: Task) -> RunRequest:
        """The run of one task, as the loop takes it."""
        ctx = ToolContext(
            store=turn.store,
            agent=task.agent.name,
            conversation_id=turn.conversation_id,
            user=turn.user,
            run_id="",
            session_id=turn.conversation_id,
            started=None if turn.wakeup is None else partial(_tool_started, turn.wakeup.id),
            take_answer=partial(_answer_taken, target_of(task.agent.name)),
        )
        if task.seed is not None:
            return task.seed.request(task.reply, ctx)
        return RunRequest(
            agent=task.agent.name,
            messages=task.messages,
            context=ctx,
            approved_calls=task.approved_calls,
        )

    def __call__(self, turn: Turn) -> None:
        for task in turn.tasks:
            progress = Progress(turn.store, turn.conversation_id, task.agent.name)
            request = self.request(turn, task)
            loop = self.runtime.loop_for(task.agent)
            for event in loop.stream(request):
                if isinstance(event, StepStarted):
                    turn.stage(f"model call, step {event.step}")
                elif isinstance(event, ToolStarted):
                    turn.stage(f"tool {event.call.name}, step {event.step}")
                if self.progress:
                    try:
                        progress.feed(event)
                    except Exception:  # progress is a courtesy; the turn goes on without it
                        log.exception("agent progress event not written")
                if isinstance(event, ToolFinished) and "approval" in event.outcome.data:
                    kept_approvals = turn.reply_data.setdefault("tool_approvals", [])
                    kept_approvals.append(event.outcome.data["approval"])
                if isinstance(event, RunFinished):
                    turn.results.append(event.result)
                    # What the run added is kept with the reply: the next turn's model sees it.
                    added = event.result.messages[len(request.messages) :]
                    if added:
                        kept = turn.reply_data.setdefault(transcript.TRANSCRIPT, [])
                        kept.extend(transcript.recorded(added))


# --- curate, record --------------------------------------------------------------------


class CurateStage:
    """Decides what of the runs' output the user sees, re-grounded in what was asked."""

    name = "curate"

    def __call__(self, turn: Turn) -> None:
        texts = [r.text.strip() for r in turn.results if r.text and r.text.strip()]
        turn.reply = "\n\n".join(texts) or None
        if turn.match is not None:
            turn.reply = matching.regrounded(turn.reply, turn.match, turn.store.now())
            continuation = turn.match.continuation
            turn.reply_data["answered"] = {
                "continuation_id": continuation.id,
                "kind": continuation.kind,
                "question": continuation.question,
                **({"pick": turn.match.pick} if turn.match.pick is not None else {}),
                **({"answer": turn.match.answer} if turn.match.answer is not None else {}),
            }
        if turn.results:
            last = turn.results[-1]
            turn.reply_data.update(
                {
                    "run_id": last.run_id,
                    "status": last.status,
                    "halt_reason": last.halt_reason,
                    "error": last.error,
                }
            )
            if last.checkpoint is not None:
                turn.reply_data["checkpoint"] = {
                    "run_id": last.checkpoint[0],
                    "step_id": last.checkpoint[1],
                }
            request_id = last.data.get("request_id")
            if request_id:
                turn.reply_data["request_id"] = request_id


class RecordStage:
    """Stores the reply and opens what it leaves the session waiting on."""

    name = "record"

    def __init__(self, runtime: AgentRuntime) -> None:
        self.runtime = runtime

    def __call__(self, turn: Turn) -> None:
        if turn.agent is None:
            return
        try:
            turn.opened = self.open_continuation(turn, turn.agent.name)
        except Exception:  # the reply is still worth recording
            log.exception("no continuation opened for the turn in %s", turn.conversation_id)
        if turn.opened is not None:
            turn.reply_data["awaiting"] = {
                "continuation_id": turn.opened.id,
                "kind": turn.opened.kind,
                "origin": turn.opened.origin,
                "owner": turn.opened.owner,
            }
        if turn.reply is None:
            return
        turn.recorded = turn.post_reply(
            turn.reply, author=turn.agent.name, data=turn.reply_data or None
        )

    def open_continuation(self, turn: Turn, owner: str) -> SessionContinuation | None:
        if not turn.results:
            return None
        sessions = self.runtime.sessions
        session = turn.conversation_id
        last = turn.results[-1]
        if last.halt_reason == AWAITING_USER_INPUT:
            # Tier B: the halted run waits for the next message; it points at the checkpoint.
            asked = last.data.get("question")
            question = str(asked).strip() if asked else (turn.reply or "").strip()
            run_id, step_id = last.checkpoint if last.checkpoint is not None else (None, None)
            return sessions.ask(
                session,
                owner,
                "question",
                question or "(a question)",
                run_id=run_id,
                step_id=step_id,
                intent="resume",
            )
        if last.halt_reason in (AWAITING_CONFIRMATION, AWAITING_APPROVAL):
            return None  # asked explicitly, as an interaction: its answer comes as a wakeup
        current = sessions.pending(session)
        if current is not None and current.kind == "request":
            return None  # a durable request waits: explicit beats inferred
        began = turn.pending.id if turn.pending is not None else None
        if current is not None and current.id != began and current.origin == "explicit":
            return None  # something opened one explicitly this turn: explicit beats inferred
        inferred = inference.infer(turn.reply)
        if inferred is None:
            return None
        return sessions.ask(
            session,
            owner,
            inferred.kind,
            inferred.question,
            origin="inferred",
            payload=inferred.options or None,
            intent="answer",
        )


def default_pipeline(
    runtime: AgentRuntime,
    intercepts: InterceptChain | Iterable[Intercept] = (),
    classifier: Classifier | None = None,
) -> Pipeline:
    chain = (
        intercepts
        if isinstance(intercepts, InterceptChain)
        else InterceptChain.packaged(intercepts)
    )
    return Pipeline(
        [
            InterceptStage(chain, runtime.sessions),
            ClassifyStage(runtime, classifier),
            RouteStage(runtime),
            PlanStage(),
            ExecuteStage(runtime),
            CurateStage(),
            RecordStage(runtime),
        ]
    )


def _tool_started(wakeup_id: str, u: Unit) -> bool:
    """An approved call of a wakeup turn starts once: marked on the turn (False: it had)."""
    return u.turns.mark_tool_started(wakeup_id)


def _answer_taken(target: str, u: Unit, signal_id: str) -> bool:
    """An answer that came while the asking turn waited is that turn's: its parked
    continuation, or the wakeup turn it already queued, is taken off (False: a poller had
    claimed the wakeup, which then carries the answer)."""
    return u.turns.absorb(source=signal_id, target=target, signal_id=signal_id)

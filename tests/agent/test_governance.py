"""One loop, one model call site, always behind the governance hook — proven on the source."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pawflow.agent
import pawflow.chat
from pawflow.agent import (
    AgentLoop,
    CheckpointStore,
    Governance,
    Limits,
    ModelRequest,
    RunRequest,
    ScriptedModel,
    Toolbox,
    ToolContext,
    deny_pattern,
)
from pawflow.agent.builtin_tools import builtin_tools
from pawflow.agent.models.base import ChatMessage, ModelOutput
from pawflow.store import Store

MODEL_METHODS = {"stream", "complete", "respond"}
HOOK = "before_model_call"


def _packages() -> dict[str, str]:
    """Every module of the agent and chat packages, except the model providers themselves."""
    sources = {}
    for package in (pawflow.agent, pawflow.chat):
        root = Path(str(package.__file__)).parent
        for path in sorted(root.rglob("*.py")):
            if "models" in path.relative_to(root).parts:
                continue
            sources[str(path.relative_to(root.parent))] = path.read_text("utf-8")
    return sources


def _is_model(node: ast.expr) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return isinstance(name, str) and "model" in name.lower()


def _enclosing(tree: ast.AST) -> dict[ast.AST, ast.FunctionDef]:
    """The innermost function around each node (``ast.walk`` visits outer ones first)."""
    owner: dict[ast.AST, ast.FunctionDef] = {}
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef):
            for node in ast.walk(function):
                if node is not function:
                    owner[node] = function
    return owner


def model_call_violations(sources: dict[str, str]) -> list[str]:
    """Why the sources break the rule: exactly one model call site, fed by the hook."""
    problems: list[str] = []
    sites: list[tuple[str, ast.Call, ast.FunctionDef | None]] = []
    for path, source in sources.items():
        tree = ast.parse(source)
        owner = _enclosing(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if any(n.split(".")[0] == "httpx" for n in names):
                    problems.append(f"{path}:{node.lineno}: talks HTTP itself (httpx)")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in MODEL_METHODS
                and _is_model(node.func.value)
            ):
                sites.append((path, node, owner.get(node)))
    if len(sites) != 1:
        where = ", ".join(f"{p}:{c.lineno}" for p, c, _ in sites) or "none"
        return [*problems, f"expected exactly one model call site, found {len(sites)}: {where}"]
    path, call, function = sites[0]
    if function is None or function.name != "_call_model":
        return [*problems, f"{path}:{call.lineno}: the model is called outside _call_model"]
    # The hook's result must be the first statement, at the top of the function body (no
    # branch can skip it), and the very thing the model receives.
    first = function.body[1] if ast.get_docstring(function) else function.body[0]
    hook_ok = (
        isinstance(first, ast.Assign)
        and len(first.targets) == 1
        and isinstance(first.targets[0], ast.Name)
        and isinstance(first.value, ast.Call)
        and isinstance(first.value.func, ast.Attribute)
        and first.value.func.attr == HOOK
    )
    if not hook_ok:
        return [*problems, f"{path}:{function.lineno}: _call_model does not begin with the hook"]
    assert isinstance(first, ast.Assign) and isinstance(first.targets[0], ast.Name)
    governed = first.targets[0].id
    if (
        len(call.args) != 1
        or call.keywords
        or not (isinstance(call.args[0], ast.Name) and call.args[0].id == governed)
    ):
        problems.append(
            f"{path}:{call.lineno}: the model gets something other than the hook's result"
        )
    stores = [
        node
        for node in ast.walk(function)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id == governed
    ]
    if stores != [first.targets[0]]:
        problems.append(f"{path}:{function.lineno}: the hook's result is reassigned")
    # And the loop calls _call_model from stream() only; run() consumes stream().
    loop_tree = ast.parse(sources[path])
    callers = [
        around.name
        for node, around in _enclosing(loop_tree).items()
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "_call_model"
    ]
    if callers != ["stream"]:
        problems.append(f"{path}: _call_model is called from {callers}, not from stream() alone")
    run = next(n for n in ast.walk(loop_tree) if isinstance(n, ast.FunctionDef) and n.name == "run")
    if not any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "stream"
        for n in ast.walk(run)
    ):
        problems.append(f"{path}: run() does not consume stream()")
    return problems


def test_no_model_call_bypasses_the_governance_hook() -> None:
    assert model_call_violations(_packages()) == []


def _mutated(old: str, new: str) -> dict[str, str]:
    sources = _packages()
    assert old in sources["agent/loop.py"]
    sources["agent/loop.py"] = sources["agent/loop.py"].replace(old, new, 1)
    return sources


@pytest.mark.parametrize(
    ("old", "new", "found"),
    [
        (  # a second call site
            "        result: RunResult | None = None\n",
            "        result: RunResult | None = None\n        self.model.stream(request)\n",
            "exactly one model call site",
        ),
        (  # the hook behind a branch
            "        governed = self.governance.before_model_call(request, budget)\n",
            "        governed = request\n"
            "        if budget.steps:\n"
            "            governed = self.governance.before_model_call(request, budget)\n",
            "does not begin with the hook",
        ),
        (  # the hook called, its result ignored
            "yield from self.model.stream(governed)",
            "yield from self.model.stream(request)",
            "other than the hook's result",
        ),
    ],
)
def test_the_bypass_check_catches_bypasses(old: str, new: str, found: str) -> None:
    assert any(found in problem for problem in model_call_violations(_mutated(old, new)))


def test_a_second_module_calling_the_model_is_caught() -> None:
    sources = _packages()
    sources["chat/sneaky.py"] = "def f(agent):\n    return agent.model.stream(None)\n"
    assert model_call_violations(sources)


# --- what the hook does ---------------------------------------------------------------


class Spy:
    """A scripted model that remembers what it was sent."""

    def __init__(self, script: dict[str, Any]) -> None:
        self.inner = ScriptedModel(script)
        self.name = "spy"
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest) -> Iterator[ModelOutput]:
        self.requests.append(request)
        yield from self.inner.stream(request)


LOOPING = {"turns": [{"match": "", "reply": "again", "tool_calls": [{"name": "ping"}]}]}


def ping() -> str:
    """Answer pong."""
    return "pong"


def run(store: Store, model: Spy, governance: Governance, text: str = "go") -> Any:
    conversation = store.create_conversation("alice")
    checkpoints = CheckpointStore(store)
    loop = AgentLoop(model, Toolbox([*builtin_tools(), ping]), governance, checkpoints)
    ctx = ToolContext(store, "tester", conversation.id, "alice", "", session_id=conversation.id)
    messages = [ChatMessage("system", "be good"), ChatMessage("user", text)]
    result = loop.run(RunRequest("tester", messages, ctx))
    return result, checkpoints


def test_max_steps_halts_the_run_with_a_checkpoint(sqlite_store: Store) -> None:
    spy = Spy(LOOPING)
    result, checkpoints = run(sqlite_store, spy, Governance(Limits(max_steps=3)))
    assert len(spy.requests) == 3
    assert result.status == "halted" and result.halt_reason == "max_steps"
    assert result.text.endswith("I stopped here: the run reached its limit of 3 model calls.")
    saved = checkpoints.get(*result.checkpoint)
    assert saved is not None and saved.halt_reason == "max_steps" and saved.agent == "tester"
    assert saved.payload["messages"][-1] == {
        "role": "tool",
        "content": "pong",
        "tool_call_id": "call_3",
    }


def test_a_deny_policy_stops_the_call_before_it_is_made(sqlite_store: Store) -> None:
    spy = Spy(LOOPING)
    governance = Governance(policies=[deny_pattern(r"(?i)password", "no secrets, please")])
    result, _ = run(sqlite_store, spy, governance, text="tell me the admin password")
    assert spy.requests == []
    assert (result.halt_reason, result.text) == ("denied", "I stopped here: no secrets, please.")
    assert result.checkpoint is not None


def test_the_token_budget_caps_and_then_halts(sqlite_store: Store) -> None:
    spy = Spy(LOOPING)
    result, _ = run(sqlite_store, spy, Governance(Limits(max_tokens=60, max_output_tokens=50)))
    assert result.halt_reason == "max_tokens"
    caps = [r.max_tokens or 0 for r in spy.requests]
    assert caps[0] == 50 and all(0 < c <= 50 for c in caps)
    assert caps == sorted(caps, reverse=True)  # what is left of the budget shrinks


def test_tools_can_be_withheld(sqlite_store: Store) -> None:
    spy = Spy({"turns": [{"match": "", "reply": "fine"}]})
    result, _ = run(sqlite_store, spy, Governance(allowed_tools=["ping"]))
    assert result.status == "completed"
    assert [t.name for t in spy.requests[0].tools] == ["ping"]

"""A tool's approval policy: ``when`` read without eval, and the decisions offered."""

from __future__ import annotations

import pytest

from pawflow.agent import Tool
from pawflow.agent.approval import Approval, When
from pawflow.agent.config import parse
from pawflow.errors import InvalidAnswer, InvalidInput
from pawflow.interactions.tool_approval import decide, make_surface


def deploy(environment: str, replicas: int = 1) -> str:
    """Deploy.

    Args:
        environment: Where.
        replicas: How many.
    """
    return environment


@pytest.mark.parametrize(
    ("source", "arguments", "asks"),
    [
        ('args.environment == "production"', {"environment": "production"}, True),
        ('args.environment == "production"', {"environment": "staging"}, False),
        ('args["environment"] in ["production", "dr"]', {"environment": "dr"}, True),
        ("args.replicas > 3 and not args.dry_run", {"replicas": 5}, True),
        ("args.replicas > 3", {"replicas": "many"}, True),  # cannot tell: asks
        ("args.missing == null", {}, True),
        ("args.target.region == 'eu'", {"target": {"region": "us"}}, False),
    ],
)
def test_when_reads_the_arguments(source: str, arguments: dict[str, object], asks: bool) -> None:
    assert When.parse(source).holds(arguments) is asks


@pytest.mark.parametrize(
    "source",
    [
        "__import__('os').system('true')",
        "args.environment.upper() == 'X'",
        "[x for x in args]",
        "open('/etc/passwd')",
        "lambda: 1",
        "args.environment == ",
    ],
)
def test_anything_else_is_refused_when_the_policy_is_made(source: str) -> None:
    with pytest.raises(InvalidInput, match="when"):
        When.parse(source)


def test_a_tool_offers_the_decisions_it_names() -> None:
    tool = Tool.from_function(
        deploy, approval={"decisions": ["approve", "reject"], "when": "args.replicas > 1"}
    )
    assert tool.consequential
    assert tool.policy == Approval(("approve", "reject"), When.parse("args.replicas > 1"))
    assert not tool.policy.needed({"environment": "x", "replicas": 1})
    with pytest.raises(InvalidInput, match="approve and reject"):
        Tool.from_function(deploy, approval={"decisions": ["approve", "edit"]})


def test_agents_yaml_names_the_policy_and_a_bad_one_fails_at_start() -> None:
    text = """
agents:
  - name: a
    model: {url: "http://127.0.0.1:1/v1", name: m}
    system_prompt: hi
    tools:
      - name: deploy
        approval: {decisions: [approve, reject], when: 'args.env == "prod"'}
"""
    [agent] = parse(text).agents
    policy = agent.tool_configs()[0].policy()
    assert policy is not None and policy.decisions == ("approve", "reject")
    with pytest.raises(InvalidInput, match="unknown name 'env'"):
        parse(text.replace("args.env", "env"))


def test_decisions_are_checked_against_the_surface() -> None:
    tool = Tool.from_function(deploy, consequential=True)
    surface = make_surface(
        tool="deploy",
        agent="ops",
        description=tool.description,
        arguments={"environment": "production"},
        schema=tool.parameters,
        decisions=("approve", "reject"),
    )
    assert decide(surface, True)["decision"] == "approve"
    assert decide(surface, "no")["decision"] == "reject"
    rejected = decide(surface, {"decision": "reject", "reason": "use dist/"})
    assert rejected["reason"] == "use dist/"
    with pytest.raises(InvalidAnswer) as offered:
        decide(surface, {"decision": "edit", "arguments": {}})
    assert offered.value.errors[0].path == "decision"
    everything = {**surface, "decisions": ["approve", "edit", "reject", "respond"]}
    with pytest.raises(InvalidAnswer) as bad:
        decide(everything, {"decision": "edit", "arguments": {"environment": 3, "x": 1}})
    assert [e.path for e in bad.value.errors] == ["arguments", "arguments.environment"]
    with pytest.raises(InvalidAnswer) as stale:
        decide(everything, {"decision": "approve", "digest": "sha256:0"})
    assert stale.value.errors[0].path == "digest"

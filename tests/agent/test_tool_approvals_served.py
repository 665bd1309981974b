"""Tool approvals through a real ``pawflow serve``: an agent of ``agents.yaml`` on the
OpenAI-compatible provider (a local fake model server), its ``deploy`` tool installed as an
entry point, decided over HTTP and with ``pawflow answer``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from pawflow.cli import app
from pawflow.server.credentials import issue_token
from pawflow.server.testing import free_port
from pawflow.store import open_store
from pawflow.testing import eventually
from tests.agent.fake_openai import Behaviour, FakeOpenAI, delta, fake_openai, reply_sse

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

USER = "alice"

TOOL = '''
import json, os
from typing import Literal


def deploy(environment: Literal["staging", "production"], version: str = "latest") -> str:
    """Deploy a version of the service to an environment.

    Args:
        environment: Where to deploy.
        version: Which version.
    """
    with open(os.environ["DEPLOY_LOG"], "a") as log:
        log.write(json.dumps({"environment": environment, "version": version}) + "\\n")
    return f"deployed {version} to {environment}"
'''

AGENTS = """
agents:
  - name: releaser
    model: {{url: "{url}", name: fake, max_retries: 0}}
    system_prompt: You deploy.
    tools:
      - name: deploy
        approval:
          when: args.environment == "production"
"""


def _call(call_id: str, arguments: dict[str, Any]) -> Behaviour:
    call = {
        "index": 0,
        "id": call_id,
        "type": "function",
        "function": {"name": "deploy", "arguments": json.dumps(arguments)},
    }
    return reply_sse([delta(tool_calls=[call]), delta("tool_calls")])


def brain(fake: FakeOpenAI) -> FakeOpenAI:
    """``deploy <env>`` calls the tool; a rejection is retried once, word for word; any
    other tool result is said back as ``Result: <it>``."""

    def respond(body: dict[str, Any]) -> Behaviour:
        messages = body["messages"]
        last = messages[-1]
        count = len(fake.requests)
        if last["role"] == "user" and last["content"].startswith("deploy "):
            environment = last["content"].split()[1]
            return _call(f"call_{count}", {"environment": environment, "version": "1.2"})
        if last["role"] == "tool" and last["content"].startswith("Rejected by"):
            asked = next(m for m in reversed(messages) if m.get("tool_calls"))
            arguments = json.loads(asked["tool_calls"][0]["function"]["arguments"])
            return _call(f"call_{count}", arguments)
        said = last.get("content") or ""
        return reply_sse([delta(content=f"Result: {said}"), delta("stop")])

    fake.responder = respond
    return fake


@dataclass
class Served:
    url: str
    token: str
    db: str
    log: Path
    fake: FakeOpenAI

    def post(self, action: str, expect: int = 200, **body: Any) -> dict[str, Any]:
        response = httpx.post(
            f"{self.url}/api/actions/{action}",
            json=body,
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=30,
        )
        assert response.status_code == expect, response.text
        found: dict[str, Any] = response.json()
        return found

    def cli(self, *args: str) -> str:
        env = {"PAWFLOW_SERVER": self.url, "PAWFLOW_TOKEN": self.token}
        result = CliRunner().invoke(app, list(args), env=env)
        assert result.exit_code == 0, result.output
        return result.output

    def deployed(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def conversation(self, title: str) -> str:
        found = self.post("create_conversation", title=title)["conversation"]["id"]
        self.post("assign_agent", conversation_id=found, agent="releaser")
        return str(found)

    def say(self, conversation: str, text: str) -> None:
        self.post("send_message", conversation_id=conversation, content=text)

    def requests(self, conversation: str, status: str | None = None) -> list[dict[str, Any]]:
        body: dict[str, Any] = {"conversation_id": conversation}
        if status is not None:
            body["status"] = status
        return list(self.post("list_interactions", **body)["interactions"])

    def asked(self, conversation: str) -> dict[str, Any]:
        """The one pending request, once the agent has asked."""
        found = eventually(lambda: self.requests(conversation, "pending"), timeout=60, interval=0.1)
        assert len(found) == 1
        return found[0]

    def replies(self, conversation: str) -> list[str]:
        history = self.post("get_history", conversation_id=conversation)["messages"]
        return [m["content"] for m in history if m["role"] == "assistant"]

    def reply_with(self, conversation: str, text: str) -> str:
        def found() -> str | None:
            return next((r for r in self.replies(conversation) if text in r), None)

        return eventually(found, timeout=60, interval=0.1)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("approvals")
    tools = root / "tools"
    tools.mkdir()
    (tools / "deploy_tools.py").write_text(TOOL)
    dist = tools / "deploy_tools-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: deploy-tools\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pawflow.tools]\ndeploy = deploy_tools:deploy\n")
    db = f"sqlite:///{root / 'pawflow.db'}"
    with open_store(db) as store:
        token = issue_token(store, USER)
    with fake_openai() as fake:
        brain(fake)
        agents = root / "agents.yaml"
        agents.write_text(AGENTS.format(url=fake.url))
        port = free_port()
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(tools), os.environ.get("PYTHONPATH", "")]),
            "DEPLOY_LOG": str(root / "deployed.log"),
            "PAWFLOW_SWEEP_INTERVAL": "1",
        }
        with (root / "serve.log").open("wb") as out:
            process = subprocess.Popen(
                [
                    *(sys.executable, "-m", "pawflow", "serve", "--db", db, "--port", str(port)),
                    *("--agents", str(agents), "--log-level", "warning"),
                ],
                env=env,
                stdout=out,
                stderr=out,
            )
        url = f"http://127.0.0.1:{port}"

        def up() -> bool:
            assert process.poll() is None, (root / "serve.log").read_text()
            try:
                return httpx.get(f"{url}/healthz", timeout=1).is_success
            except httpx.HTTPError:
                return False

        try:
            eventually(up, timeout=60, interval=0.1)
            yield Served(url, token, db, root / "deployed.log", fake)
        finally:
            process.terminate()
            process.wait(timeout=30)


def test_approve_runs_once_with_the_proposed_arguments(served: Served) -> None:
    chat = served.conversation("approve")
    before = len(served.deployed())
    served.say(chat, "deploy production")
    request = served.asked(chat)
    surface = request["ui_surface"]
    assert request["kind"] == "confirm" and surface["fallback"] == "confirm"
    assert surface["type"] == "tool_approval" and surface["tool"] == "deploy"
    assert surface["description"] == "Deploy a version of the service to an environment."
    assert surface["arguments"] == {"environment": "production", "version": "1.2"}
    assert surface["schema"]["properties"]["environment"]["enum"] == ["staging", "production"]
    assert surface["decisions"] == ["approve", "edit", "reject", "respond"]

    listed = served.cli("inbox")
    assert "deploy" in listed and '"environment": "production"' in listed
    served.cli("answer", request["id"], "yes")
    served.reply_with(chat, "Result: deployed 1.2 to production")
    assert served.deployed()[before:] == [{"environment": "production", "version": "1.2"}]

    record = served.post("get_tool_approval", request_id=request["id"])
    assert record["decision"] == "approve" and record["decided_by"] == USER
    assert record["proposed"] == record["approved"] == record["executed"]["arguments"]
    assert record["digest"].startswith("sha256:")


def test_edit_runs_with_the_edited_arguments_and_a_bad_edit_is_a_422(served: Served) -> None:
    chat = served.conversation("edit")
    before = len(served.deployed())
    served.say(chat, "deploy production")
    request = served.asked(chat)

    refused = served.post(
        "respond_interaction",
        422,
        request_id=request["id"],
        answer={"decision": "edit", "arguments": {"environment": "moon"}},
    )
    assert {"path": "arguments.environment", "message": "must be one of: staging, production"} in (
        refused["errors"]
    )
    assert served.requests(chat, "pending")[0]["id"] == request["id"]  # still open

    served.cli("answer", request["id"], "--edit", '{"environment": "staging", "version": "1.2"}')
    served.reply_with(chat, "deployed 1.2 to staging")
    assert served.deployed()[before:] == [{"environment": "staging", "version": "1.2"}]

    record = served.post("get_tool_approval", request_id=request["id"])
    assert record["proposed"] == {"environment": "production", "version": "1.2"}
    assert record["approved"] == {"environment": "staging", "version": "1.2"}
    assert record["executed"]["arguments"] == {"environment": "staging", "version": "1.2"}
    assert record["decision"] == "edit" and record["decided_by"] == USER
    history = served.post("get_history", conversation_id=chat)["messages"]
    kept = [a for m in history for a in (m.get("data") or {}).get("tool_approvals", [])]
    assert kept == [
        {
            "request_id": request["id"],
            "tool": "deploy",
            "decision": "edit",
            "decided_by": USER,
            "proposed": {"environment": "production", "version": "1.2"},
            "approved": {"environment": "staging", "version": "1.2"},
            "executed": {"environment": "staging", "version": "1.2"},
            "digest": record["digest"],
        }
    ]


def test_a_reason_reaches_the_model_and_the_same_call_is_refused(served: Served) -> None:
    chat = served.conversation("reject")
    before = len(served.deployed())
    served.say(chat, "deploy production")
    request = served.asked(chat)

    served.cli("answer", request["id"], "--reject", "use staging instead")
    served.reply_with(chat, "Result: Refused without asking again")
    tool_results = [
        m["content"]
        for body in served.fake.requests
        for m in body["messages"]
        if m["role"] == "tool"
    ]
    assert "Rejected by alice: use staging instead" in tool_results
    assert served.deployed()[before:] == []
    assert [r["id"] for r in served.requests(chat)] == [request["id"]]  # not asked again


def test_respond_becomes_the_result_and_nothing_runs(served: Served) -> None:
    chat = served.conversation("respond")
    before = len(served.deployed())
    served.say(chat, "deploy production")
    request = served.asked(chat)
    served.post(
        "respond_interaction",
        request_id=request["id"],
        answer={"decision": "respond", "text": "already deployed by hand"},
    )
    served.reply_with(chat, "Result: already deployed by hand")
    assert served.deployed()[before:] == []
    assert served.post("get_tool_approval", request_id=request["id"])["executed"] is None


def test_when_asks_only_for_production(served: Served) -> None:
    chat = served.conversation("when")
    before = len(served.deployed())
    served.say(chat, "deploy staging")
    served.reply_with(chat, "Result: deployed 1.2 to staging")
    assert served.requests(chat) == []
    assert served.deployed()[before:] == [{"environment": "staging", "version": "1.2"}]


def test_always_allow_skips_the_question_until_revoked(served: Served) -> None:
    chat = served.conversation("always")
    served.say(chat, "deploy production")
    first = served.asked(chat)
    served.cli("answer", first["id"], "yes", "--always", "conversation")
    served.reply_with(chat, "Result: deployed 1.2 to production")
    [rule] = served.post("list_approval_rules", conversation_id=chat)["rules"]
    assert (rule["tool"], rule["scope"], rule["created_by"]) == ("deploy", "conversation", USER)
    assert rule["arguments"] == {"environment": "production", "version": "1.2"}

    before = len(served.deployed())
    served.say(chat, "deploy production")
    eventually(lambda: len(served.deployed()) > before or None, timeout=60, interval=0.1)
    assert [r["id"] for r in served.requests(chat)] == [first["id"]]  # not asked

    def allowed_by_rule() -> list[dict[str, Any]]:
        history = served.post("get_history", conversation_id=chat)["messages"]
        kept = [a for m in history for a in (m.get("data") or {}).get("tool_approvals", [])]
        return [a for a in kept if a.get("rule_id") == rule["id"]]

    [by_rule] = eventually(allowed_by_rule, timeout=60, interval=0.1)
    assert by_rule["executed"] == {"environment": "production", "version": "1.2"}

    assert rule["id"] in served.cli("approvals", "list")
    served.cli("approvals", "revoke", rule["id"])
    assert served.post("list_approval_rules", conversation_id=chat)["rules"] == []
    served.say(chat, "deploy production")
    again = served.asked(chat)
    assert again["id"] != first["id"]

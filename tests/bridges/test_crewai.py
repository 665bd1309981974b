"""The CrewAI bridge: a flow's human feedback becomes a request, the answer resumes the flow
from CrewAI's own persistence — its model a local fake OpenAI server, across real processes
with a ``pawflow serve`` between.

CrewAI cannot share the test venv (it pins openai<3, which openai-agents refuses): its
processes run from ``.venv-crewai`` (``make test`` builds it; locally a missing one skips these
tests, in CI it fails them).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.fake_openai import FakeOpenAI, completion, fake_openai, reply_json
from tests.bridges.crossing import ROOT, app, crash, finish, person_at_server, start
from tests.conftest import IN_CI

CREWAI_PYTHON = ROOT / ".venv-crewai" / "bin" / "python"


@pytest.fixture
def crewai_python() -> str:
    if not CREWAI_PYTHON.exists():
        message = "CrewAI's venv is missing: make .venv-crewai/.installed"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return str(CREWAI_PYTHON)


@pytest.fixture
def model() -> Iterator[FakeOpenAI]:
    with fake_openai() as fake:
        fake.then(reply_json(completion("Your refund is on its way.")))
        yield fake


def test_the_bridge_and_its_framework_import_in_crewais_venv(crewai_python: str) -> None:
    check = (
        "import sys, pawflow.bridges.crewai\n"
        "assert 'crewai' in sys.modules\n"
        "assert not {'pawflow.server', 'pawflow.serve', 'uvicorn'} & set(sys.modules)\n"
    )
    subprocess.run([crewai_python, "-c", check], cwd=ROOT, check=True, timeout=120)


@pytest.mark.slow
@pytest.mark.timeout(300)  # a bound for a busy machine: three processes load the framework
def test_a_flow_paused_by_a_process_that_died_is_resumed_by_another(
    db_url: str, tmp_path: Path, model: FakeOpenAI, crewai_python: str
) -> None:
    with person_at_server(db_url, tmp_path) as ana:
        where = ["--db", db_url, "--model", model.url, "--flows", str(tmp_path / "flows.db")]
        asker = start(
            app(
                "tests.bridges.crewai_app",
                "start",
                *where,
                "--owner",
                "ana",
                "--conversation",
                ana.conversation_id,
                python=crewai_python,
            )
        )
        review = ana.waiting("Send this reply?")
        assert review["kind"] == "text"
        assert "Your refund is on its way." in review["message"]  # the draft, for review
        crash(asker)

        ana.answer_cli(review["id"], "Sign it from Ana")
        worker = start(app("tests.bridges.crewai_app", "listen", *where, python=crewai_python))
        sent = "Your refund is on its way. (Sign it from Ana)"
        assert finish(worker) == {"result": sent, "sent": [sent]}
        assert model.hits == 1  # the draft was made once, before the pause
        assert ana.pending() == []

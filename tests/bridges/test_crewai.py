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
from tests.bridges.crossing import ROOT, app, crash, finish, person_at_server
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


@pytest.mark.timeout(300)  # loading CrewAI takes long on a busy machine
def test_a_step_asks_a_choice_of_its_outcomes_or_what_its_metadata_names(
    crewai_python: str,
) -> None:
    """In CrewAI's venv: the bridge loads the store, never the server; a step's feedback is
    asked as its outcomes, its metadata or its message say."""
    check = (
        "import sys\n"
        "from crewai.flow.async_feedback import PendingFeedbackContext\n"
        "from pawflow.bridges.crewai import feedback_of, feedback_request\n"
        "from pawflow.records import Outcome\n"
        "assert not {'pawflow.server', 'pawflow.serve', 'uvicorn'} & set(sys.modules)\n"
        "def step(**more):\n"
        "    return PendingFeedbackContext(flow_id='f', flow_class='F', method_name='draft',\n"
        "        method_output='Hello', message='Send it?', **more)\n"
        "asked = feedback_request(step(emit=['send', 'redo']))\n"
        "assert asked == {'kind': 'choice', 'message': 'Send it?\\n\\nHello',\n"
        "    'title': 'Review draft', 'options': ['send', 'redo']}, asked\n"
        "schema = {'type': 'integer', 'minimum': 0}\n"
        "asked = feedback_request(step(metadata={'kind': 'integer', 'response_schema': schema}))\n"
        "assert (asked['kind'], asked['response_schema']) == ('integer', schema), asked\n"
        "assert feedback_request(step())['kind'] == 'text'\n"
        "assert feedback_of(Outcome(status='answered', answer={'a': 1})) == '{\"a\": 1}'\n"
        "assert feedback_of(Outcome(status='expired')) == ''\n"
    )
    subprocess.run([crewai_python, "-c", check], cwd=ROOT, check=True, timeout=280)


@pytest.mark.slow
@pytest.mark.timeout(600)  # a bound for a busy machine: three processes load the framework
def test_a_flow_paused_by_a_process_that_died_is_resumed_by_another(
    db_url: str, tmp_path: Path, model: FakeOpenAI, crewai_python: str
) -> None:
    with person_at_server(db_url, tmp_path) as ana:
        where = ["--db", db_url, "--model", model.url, "--flows", str(tmp_path / "flows.db")]
        asker = ana.start(
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
        worker = ana.start(app("tests.bridges.crewai_app", "listen", *where, python=crewai_python))
        sent = "Your refund is on its way. (Sign it from Ana)"
        assert finish(worker) == {"result": sent, "sent": [sent]}
        assert model.hits == 1  # the draft was made once, before the pause
        assert ana.pending() == []

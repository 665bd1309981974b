"""``pawflow serve --demo`` opens a Planner conversation with the plugins at work."""

from __future__ import annotations

from pathlib import Path

import pytest

from pawflow.chat.service import ChatService
from pawflow.demo.chat import PLANNER_TITLE, SAMPLE_FILES, data_dir, plugin_configs
from pawflow.errors import InvalidInput
from pawflow.serve import prepare
from pawflow.server.settings import ServerSettings
from pawflow.store import data_dir as store_data_dir
from tests.chat.conftest import sandbox_state


@pytest.fixture(autouse=True)
def offline_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PAWFLOW_MODEL_URL", "PAWFLOW_MODEL", "PAWFLOW_MODEL_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_the_demo_has_a_planner_conversation_and_a_sandbox(tmp_path: Path) -> None:
    settings = ServerSettings(db=f"sqlite:///{tmp_path / 'demo.db'}")
    prepared = prepare(settings, demo=True)
    try:
        service = prepared.chat
        assert isinstance(service, ChatService)
        assert service.chat.plugins == ["planner", "organizer", "inbox"]
        [planner] = [
            c for c in prepared.store.list_conversations(user="local") if c.title == PLANNER_TITLE
        ]
        assert service.assigned_agent(planner.id) == "planner"
        with prepared.store.unit(write=False) as u:
            [greeting] = u.messages.history(planner.id, user="local")
        assert greeting.author == "planner" and "plan the launch" in greeting.content
        assert set(sandbox_state(tmp_path / "sandbox")) == set(SAMPLE_FILES)
        # A second start finds the same conversation and leaves the sandbox alone.
        (tmp_path / "sandbox" / "todo").unlink()
        prepare(settings, demo=True, store=prepared.store)
        titles = [c.title for c in prepared.store.list_conversations(user="local")]
        assert titles.count(PLANNER_TITLE) == 1
        assert "todo" not in sandbox_state(tmp_path / "sandbox")
    finally:
        prepared.store.close()


def test_chat_settings() -> None:
    assert data_dir(ServerSettings(db="sqlite:///var/pawflow/p.db")) == Path("var/pawflow")
    assert data_dir(ServerSettings(db="postgresql://db/pawflow")) == store_data_dir()
    custom = ServerSettings(extra={"chat": {"plugins": {"planner": {}}}})
    assert plugin_configs(custom) == {"planner": {}}
    with pytest.raises(InvalidInput, match="chat settings"):
        plugin_configs(ServerSettings(extra={"chat": {"colour": "red"}}))

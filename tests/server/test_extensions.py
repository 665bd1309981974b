"""Serve-time extensions and the serve command's preparation; settings."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pawflow.cli import app as cli
from pawflow.errors import InvalidInput
from pawflow.records import Message
from pawflow.server import extensions
from pawflow.server.context import ServerContext
from pawflow.server.extensions import ServeExtension
from pawflow.server.serve import prepare
from pawflow.server.settings import ServerSettings
from pawflow.server.testing import live_server
from pawflow.store import Store, open_store
from pawflow.testing import eventually
from tests.server.conftest import QUIET


class Recorder:
    def __init__(self, name: str, log: list[str], ctx: list[ServerContext]) -> None:
        self.name, self.log, self.ctx = name, log, ctx

    def start(self) -> None:
        sweeping = any(t.name == "pawflow-sweeper" for t in threading.enumerate())
        self.log.append(f"start {self.name} sweeping={sweeping}")

    def stop(self) -> None:
        self.log.append(f"stop {self.name} sweeping={self.ctx[0].sweeper is not None}")


def test_services_run_inside_the_lifespan_after_the_sweeper(sqlite_store: Store) -> None:
    log: list[str] = []
    holder: list[ServerContext] = []
    services = [Recorder("a", log, holder), Recorder("b", log, holder)]
    with live_server(
        sqlite_store, settings=QUIET.replace(sweep_interval=0.05), services=services
    ) as server:
        ctx = server.server.config.app.state.pawflow
        holder.append(ctx)
        sweeper = ctx.sweeper
        assert sweeper is not None
        eventually(lambda: sweeper.passes >= 2)
    assert log[2:] == ["stop b sweeping=True", "stop a sweeping=True"]
    assert log[:2] == ["start a sweeping=True", "start b sweeping=True"]
    assert ctx.sweeper is None  # stopped with the server
    assert not any(
        step.__qualname__.startswith("retention_step") for step in sqlite_store.sweep_steps
    )


def test_import_known_skips_missing_modules_but_not_broken_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pawflow_ext_ok.py").write_text("LOADED = True\n")
    (tmp_path / "pawflow_ext_broken.py").write_text("import pawflow_no_such_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert extensions.import_known(["pawflow_ext_missing", "pawflow_ext_ok"]) == ["pawflow_ext_ok"]
    with pytest.raises(ModuleNotFoundError):
        extensions.import_known(["pawflow_ext_broken"])
    sys.modules.pop("pawflow_ext_ok", None)


def test_on_message_handlers_all_run_even_when_one_fails(sqlite_store: Store) -> None:
    seen: list[str] = []

    def failing(store: Store, conversation_id: str, message: Message) -> None:
        raise RuntimeError("boom")

    def recording(store: Store, conversation_id: str, message: Message) -> None:
        seen.append(message.content)

    combined = extensions.combined_on_message(
        [
            ServeExtension("x", on_message=failing),
            ServeExtension("y"),
            ServeExtension("z", on_message=recording),
        ]
    )
    assert combined is not None
    conversation = sqlite_store.create_conversation("u", "t")
    message = sqlite_store.append_message(conversation.id, "hi", author="u")
    combined(sqlite_store, conversation.id, message)
    assert seen == ["hi"]
    assert extensions.combined_on_message([ServeExtension("none")]) is None


def test_prepare_demo_calls_every_demo_setup_once_per_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, str]] = []

    def factory(store: Store, settings: ServerSettings) -> ServeExtension:
        return ServeExtension(
            "recorder", demo_setup=lambda s, user, conversation: calls.append((user, conversation))
        )

    monkeypatch.setattr(extensions, "EXTENSIONS", [factory])
    monkeypatch.setattr(extensions, "KNOWN_MODULES", ())
    settings = ServerSettings(db=f"sqlite:///{tmp_path / 'demo.db'}", port=9999)
    first = prepare(settings, demo=True)
    first.store.close()
    second = prepare(settings, demo=True)
    try:
        assert len(calls) == 2 and calls[0] == calls[1] and calls[0][0] == "local"
        conversation_id = calls[0][1]
        [demo] = second.store.list_conversations(user="local")
        assert demo.id == conversation_id and demo.title == "Demo"
        pending = second.store.list_interactions(user="local", status="pending")
        assert len(pending) == 1 and pending[0].kind == "confirm"
        text = "\n".join(second.lines)
        assert "http://127.0.0.1:9999/signin?token=" in text
        assert "PAWFLOW_TOKEN=pf_" in text
    finally:
        second.store.close()


def test_prepare_makes_a_local_user_only_on_an_empty_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extensions, "EXTENSIONS", [])
    monkeypatch.setattr(extensions, "KNOWN_MODULES", ())
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    with open_store(url) as store:
        fresh = prepare(ServerSettings(db=url), store=store)
        assert any("/signin?token=" in line for line in fresh.lines)
        assert store.list_conversations(user="local") == []
        again = prepare(ServerSettings(db=url), store=store)
        assert not any("/signin?token=" in line for line in again.lines)


def test_settings_come_from_arguments_then_environment_then_defaults() -> None:
    env = {
        "PAWFLOW_PORT": "9000",
        "PAWFLOW_HOST": "0.0.0.0",
        "PAWFLOW_EVENT_RETENTION": "2w",
        "PAWFLOW_ALLOWED_ORIGINS": "https://a.example, https://b.example:8443",
    }
    settings = ServerSettings.from_env(env, port=9100)
    assert (settings.port, settings.host) == (9100, "0.0.0.0")
    assert settings.event_retention.days == 14
    assert settings.sweep_interval == 15.0
    assert settings.origins() == {
        "http://0.0.0.0:9100",
        "https://a.example",
        "https://b.example:8443",
    }
    with pytest.raises(InvalidInput, match="unknown server setting"):
        ServerSettings.from_env({}, colour="blue")
    with pytest.raises(InvalidInput, match="port"):
        ServerSettings.from_env({"PAWFLOW_PORT": "many"})
    with pytest.raises(InvalidInput):
        ServerSettings.from_env({"PAWFLOW_EVENT_RETENTION": "soon"})
    assert ServerSettings(public_url="https://chat.example/").cookies_secure


def test_serve_help_names_the_environment_variables() -> None:
    result = CliRunner().invoke(cli, ["serve", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for name in ("PAWFLOW_HOST", "PAWFLOW_PORT", "PAWFLOW_DB"):
        assert name in result.output

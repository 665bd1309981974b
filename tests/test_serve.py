"""``pawflow serve``: its services, its preparation, its settings."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from pawflow.chat.intercepts import InterceptChain
from pawflow.cli import app as cli
from pawflow.demo.agents import DEMO_AGENT
from pawflow.errors import ConfigError, InvalidInput
from pawflow.flow.deployments import list_deployments
from pawflow.serve import channel_status, prepare, token_file
from pawflow.server.context import ServerContext
from pawflow.server.credentials import issue_token, revoke_tokens
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
        ctx = server.server.app.state.pawflow
        holder.append(ctx)
        sweeper = ctx.sweeper
        assert sweeper is not None
        eventually(lambda: sweeper.passes >= 2)
    assert log[2:] == ["stop b sweeping=True", "stop a sweeping=True"]
    assert log[:2] == ["start a sweeping=True", "start b sweeping=True"]
    assert ctx.sweeper is None  # stopped with the server
    assert "events_pruned" not in sqlite_store.sweep().counts  # its step went with it


def test_prepare_demo_sets_up_every_demo_once(tmp_path: Path) -> None:
    settings = ServerSettings(db=f"sqlite:///{tmp_path / 'demo.db'}", port=9999)
    first = prepare(settings, demo=True)
    first.store.close()
    second = prepare(settings, demo=True)
    try:
        titles = sorted(c.title for c in second.store.list_conversations(user="local"))
        assert titles == ["Demo", "Planner", "Tour: every kind"]
        [demo] = [c for c in second.store.list_conversations(user="local") if c.title == "Demo"]
        pending = second.store.list_interactions(
            user="local", status="pending", conversation_id=demo.id
        )
        assert sorted(i.kind for i in pending) == ["confirm"]  # the expense form comes later
        assert second.chat is not None and second.chat.assigned_agent(demo.id) == DEMO_AGENT
        assert second.flows is not None
        assert len(list_deployments(second.store)) == 1
        text = "\n".join(second.lines)
        assert "http://127.0.0.1:9999/signin?token=" in text
        assert "PAWFLOW_TOKEN=pf_" in text
    finally:
        second.store.close()


def _printed_token(lines: list[str]) -> str:
    [line] = [line for line in lines if "export PAWFLOW_TOKEN=" in line]
    return line.split("=", 1)[1]


def test_every_demo_start_prints_the_same_token_until_it_is_revoked(tmp_path: Path) -> None:
    """A start used to mint another token that never expires; the local user's token is
    kept (for its owner only) and printed again while the store takes it."""
    url = f"sqlite:///{tmp_path / 'demo.db'}"
    kept = tmp_path / "demo.db.token"
    assert token_file(url) == kept
    with open_store(url) as store:
        first = prepare(ServerSettings(db=url), demo=True, store=store)
        token = _printed_token(first.lines)
        assert kept.read_text() == token + "\n" and stat.S_IMODE(kept.stat().st_mode) == 0o600
        assert f"kept in {kept}" in "\n".join(first.lines)
        again = prepare(ServerSettings(db=url), demo=True, store=store)
        assert _printed_token(again.lines) == token
        with TestClient(again.app, headers={"Authorization": f"Bearer {token}"}) as http:
            assert http.get("/api/session").json()["user"] == "local"
        with store.transaction() as tx:
            # One token, however many starts.
            assert revoke_tokens(tx, "local", now=store.now()) == 1
        renewed = _printed_token(prepare(ServerSettings(db=url), demo=True, store=store).lines)
        assert renewed != token and kept.read_text() == renewed + "\n"
        # Another store's token is not taken for this one's (nor the other way round).
        other = f"sqlite:///{tmp_path / 'other.db'}"
        with open_store(other) as elsewhere:
            kept.rename(tmp_path / "other.db.token")
            theirs = _printed_token(
                prepare(ServerSettings(db=other), demo=True, store=elsewhere).lines
            )
        assert _printed_token(
            prepare(ServerSettings(db=url), demo=True, store=store).lines
        ) not in (
            renewed,
            theirs,
        )


def test_a_store_that_is_no_file_keeps_its_token_in_the_data_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    one = token_file("postgresql://pawflow:secret@db/one")
    assert one.parent == tmp_path / "pawflow" / "tokens" and "secret" not in one.name
    assert token_file("postgresql://pawflow:secret@db/two") != one


def test_prepare_makes_a_local_user_only_on_an_empty_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    with open_store(url) as store:
        fresh = prepare(ServerSettings(db=url), store=store)
        assert any("/signin?token=" in line for line in fresh.lines)
        assert store.list_conversations(user="local") == []
        again = prepare(ServerSettings(db=url), store=store)
        assert not any("/signin?token=" in line for line in again.lines)
        assert again.lines[-1] == channel_status(ServerSettings(db=url))


def test_the_banner_says_which_channels_are_on_and_why_not() -> None:
    off = channel_status(ServerSettings())
    assert off == (
        "Channels: email: off (no PAWFLOW_SMTP_URL) · slack: off (no PAWFLOW_SLACK_BOT_TOKEN)"
        " · replies by mail: off (no PAWFLOW_IMAP_URL) · push: on · webhooks and apprise: on"
    )
    assert "push: off (PAWFLOW_PUSH=off)" in channel_status(ServerSettings(push=False))
    on = channel_status(
        ServerSettings(smtp_url="smtp://lee:secret@mail.example.org:587", slack_bot_token="x")
    )
    assert "email: on (smtp://mail.example.org:587)" in on and "secret" not in on
    assert "slack: on" in on


def test_serve_runs_no_demo_agent_or_plugin_without_demo(tmp_path: Path) -> None:
    settings = ServerSettings(db=f"sqlite:///{tmp_path / 'plain.db'}")
    plain = prepare(settings)
    try:
        assert plain.chat is not None
        assert plain.chat.agents == [] and plain.chat.chat.plugins == []
        assert plain.chat.intercepts.describe() == InterceptChain.packaged().describe()
        assert not (tmp_path / "sandbox").exists()  # the organizer never ran
        token = issue_token(plain.store, "local")
        with TestClient(plain.app, headers={"Authorization": f"Bearer {token}"}) as http:
            assert http.post("/api/actions/list_agents", json={}).json()["agents"] == []
        # The demo's plugins are no entry points: by name they are unknown without --demo.
        named = settings.replace(extra={"chat": {"plugins": {"organizer": {}}}})
        with pytest.raises(ConfigError, match="unknown chat plugin 'organizer'"):
            prepare(named, store=plain.store)
    finally:
        plain.store.close()
    demo = prepare(settings, demo=True)
    try:
        assert demo.chat is not None
        assert demo.chat.agents == [DEMO_AGENT, "planner"]
        assert demo.chat.chat.plugins == ["planner", "organizer", "inbox"]
        token = issue_token(demo.store, "local")
        with TestClient(demo.app, headers={"Authorization": f"Bearer {token}"}) as http:
            listed = http.post("/api/actions/list_agents", json={}).json()["agents"]
            assert listed == [DEMO_AGENT, "planner"]
    finally:
        demo.store.close()


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
    said = " ".join(result.output.split())
    # --demo says what it starts, not only that a user and a conversation exist.
    for part in ("the deploy agent", "a tour of every kind of question", "pawflow chat"):
        assert part in said

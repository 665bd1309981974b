"""The demo's chat plugins in ``pawflow serve --demo``, and its "Planner" conversation.

The demo's plugins are no entry points: only ``--demo`` installs them. ``install_plugins``
reads ``ServerSettings.extra["chat"]``: ``plugins`` (a mapping of plugin name to its config;
by default the planner, the organizer with a sandbox under the data directory, and the inbox
on the sample mailbox) and ``data_dir`` (default: the folder of the SQLite database, else the
user's data folder). :func:`demo_setup` opens a "Planner" conversation answered by the
planner and fills the organizer's sandbox with a few files.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pawflow.chat.plugins import Plugin, PluginAPI
from pawflow.demo.plugins import inbox, organizer, planner
from pawflow.demo.plugins.planner import PLANNER
from pawflow.demo.tour import titled
from pawflow.errors import ConfigError
from pawflow.store import Store, default_url
from pawflow.store import data_dir as store_data_dir

if TYPE_CHECKING:
    from pawflow.server.settings import ServerSettings

PLANNER_TITLE = "Planner"
_KNOWN_SETTINGS = {"plugins", "data_dir"}

PLUGINS: dict[str, Plugin] = {
    "planner": planner.register,
    "organizer": organizer.register,
    "inbox": inbox.register,
}
"""The demo's plugins by name (a name not here is looked up among the entry points)."""

SAMPLE_FILES: dict[str, str] = {
    "launch-plan.pdf": "%PDF-1.4\n% the launch plan (sample)\n",
    "budget-2024.xlsx": "budget (sample)\n",
    "team-photo.jpg": "a photo (sample)\n",
    "logo.png": "a logo (sample)\n",
    "meeting-notes.txt": "Notes from Monday: ship on Thursday.\n",
    "old-site-backup.zip": "an archive (sample)\n",
    "todo": "a file without a type stays where it is\n",
}

GREETING = """\
I am the planner (a scripted demo agent). Things to try here:
- "plan the launch", then "yes go ahead with the plan" — your yes reaches me, the one who asked.
- "what's in the news?", then "tell me more about the 4th" — or ask something else instead.
- "set up a graph database": I ask "Neo4j or Stardog?" and my run waits for your reply.
- "organize my downloads", then "yes": the organizer moves the sandbox files ({sandbox}).
- "read the email about the invoice", then "the 2nd one".
`pawflow session inspect {session}` shows what this conversation is waiting on."""


def data_dir(settings: ServerSettings | None) -> Path:
    """Where the chat plugins keep their files by default."""
    extra: Any = {} if settings is None else settings.extra.get("chat", {})
    if isinstance(extra, dict) and extra.get("data_dir"):
        return Path(str(extra["data_dir"])).expanduser()
    url = default_url() if settings is None else settings.db
    if url.startswith("sqlite:///") and ":memory:" not in url:
        return Path(url.removeprefix("sqlite:///")).parent
    return store_data_dir()


def plugin_configs(settings: ServerSettings | None) -> dict[str, dict[str, Any]]:
    extra: Any = {} if settings is None else settings.extra.get("chat", {})
    if not isinstance(extra, dict) or set(extra) - _KNOWN_SETTINGS:
        raise ConfigError(f"chat settings accept only {sorted(_KNOWN_SETTINGS)}")
    plugins = extra.get("plugins")
    if plugins is None:
        return {
            "planner": {},
            "organizer": {"sandbox": str(data_dir(settings) / "sandbox")},
            "inbox": {},
        }
    if not isinstance(plugins, Mapping):
        raise ConfigError("chat plugins must map a plugin name to its settings")
    return {str(name): dict(config or {}) for name, config in plugins.items()}


def install(services: PluginAPI, name: str, config: dict[str, Any] | None = None) -> None:
    """Install a plugin: one of the demo's :data:`PLUGINS`, else an entry point's."""
    services.install(PLUGINS.get(name, name), config, name=name)


def install_plugins(services: PluginAPI, settings: ServerSettings | None) -> None:
    for name, config in plugin_configs(settings).items():
        install(services, name, config)


def fill_sandbox(sandbox: Path) -> None:
    """A few loose files to organize, unless the sandbox already holds some."""
    sandbox.mkdir(parents=True, exist_ok=True)
    if any(not entry.name.startswith(".") for entry in sandbox.iterdir()):
        return
    for name, text in SAMPLE_FILES.items():
        (sandbox / name).write_text(text, encoding="utf-8")


def demo_setup(
    services: PluginAPI, store: Store, user: str, settings: ServerSettings | None
) -> str | None:
    """The user's Planner conversation (made once), answered by the planner."""
    if services.agent(PLANNER) is None:
        return None
    sandbox = plugin_configs(settings).get("organizer", {}).get("sandbox")
    if sandbox:
        fill_sandbox(Path(str(sandbox)).expanduser())
    found = titled(store, user, PLANNER_TITLE)
    if found is not None:
        services.assign(found, PLANNER)
        return found
    conversation = store.create_conversation(user, PLANNER_TITLE)
    services.assign(conversation.id, PLANNER)
    with store.unit() as u:
        u.messages.append_message(
            conversation.id,
            content=GREETING.format(
                sandbox=sandbox or "no sandbox configured", session=conversation.id
            ),
            role="assistant",
            author=PLANNER,
        )
    return conversation.id

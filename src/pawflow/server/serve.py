"""What ``pawflow serve`` does before uvicorn takes over: open the store, gather the
extensions, make sure someone can sign in, and build the app."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import FrameType

import uvicorn
from fastapi import FastAPI

from pawflow.server import extensions
from pawflow.server.app import create_app
from pawflow.server.auth import has_users, issue_signin_link, issue_token
from pawflow.server.settings import ServerSettings
from pawflow.store import Store, open_store

DEMO_TITLE = "Demo"


@dataclass
class Prepared:
    store: Store
    app: FastAPI
    lines: list[str] = field(default_factory=list)
    """What to tell the operator (sign-in link, demo token), one line each."""
    extensions: list[extensions.ServeExtension] = field(default_factory=list)


def prepare(
    settings: ServerSettings, *, demo: bool = False, store: Store | None = None
) -> Prepared:
    """Everything up to serving. On an empty database a local user is created and gets a
    one-time sign-in link; ``demo`` also makes a Demo conversation and an API token."""
    store = store or open_store(settings.db)
    try:
        extensions.import_known()
        found = extensions.collect(store, settings)
        with store.transaction(write=False) as tx:
            fresh = not has_users(tx)
        local = settings.local_user
        lines = []
        if fresh or demo:
            store.ensure_user(local)
        if demo:
            conversation_id = demo_conversation(store, local)
            for extension in found:
                if extension.demo_setup is not None:
                    extension.demo_setup(store, local, conversation_id)
        if fresh or demo:
            link = issue_signin_link(
                store, local, base_url=settings.base_url, ttl=settings.signin_ttl
            )
            lines += [f"Sign in as {local!r} from a browser with this one-time link:", f"  {link}"]
        else:
            lines.append("Sign in from a browser with a link from: pawflow users signin-link NAME")
        if demo:
            token = issue_token(store, local, label="demo")
            lines += [
                "Terminal clients (pawflow inbox, pawflow answer ID VALUE):",
                f"  export PAWFLOW_SERVER={settings.base_url}",
                f"  export PAWFLOW_TOKEN={token}",
            ]
        app = create_app(
            store,
            settings=settings,
            services=extensions.services_of(found),
            on_message=extensions.combined_on_message(found),
        )
    except BaseException:
        store.close()
        raise
    return Prepared(store, app, lines, found)


def demo_conversation(store: Store, user: str) -> str:
    """The user's Demo conversation; a new one gets a greeting and a first question."""
    for conversation in store.list_conversations(user=user):
        if conversation.owner == user and conversation.title == DEMO_TITLE:
            return conversation.id
    conversation = store.create_conversation(user, DEMO_TITLE)
    store.append_message(
        conversation.id,
        "Welcome to PawFlow. Questions asked here wait for you, however long you take.",
        role="assistant",
        author="pawflow",
    )
    store.request_interaction(
        user,
        conversation.id,
        "confirm",
        "Is the PawFlow server running for you?",
        title="Demo",
        requester={"type": "api", "name": "demo"},
    )
    return conversation.id


class Server(uvicorn.Server):
    """uvicorn's server, which also ends the event streams as soon as it is told to stop:
    they never end on their own, and would hold the shutdown until its timeout."""

    def __init__(self, config: uvicorn.Config, app: FastAPI) -> None:
        super().__init__(config)
        self._app = app

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self._app.state.pawflow.hub.close_streams()
        super().handle_exit(sig, frame)

    def end_streams_and_exit(self) -> None:
        """Stop from code (tests): the same as a signal."""
        self._app.state.pawflow.hub.close_streams()
        self.should_exit = True


def run(prepared: Prepared, settings: ServerSettings, *, log_level: str = "info") -> None:
    """Serve until interrupted, then close the store."""
    config = uvicorn.Config(
        prepared.app,
        host=settings.host,
        port=settings.port,
        log_level=log_level.lower(),
        timeout_graceful_shutdown=5,
    )
    try:
        Server(config, prepared.app).run()
    finally:
        prepared.store.close()

"""``pawflow serve``: open the store, build the services from one explicit list, make sure
someone can sign in, and build the app. This is the one place that wires the server: the
app gets its services, its message handler and its directory of agents from here.

The services are the flow service (every running deployment) and the chat service (the
agents and the chat plugins, answering each stored user message). Only ``--demo`` adds the
demos: the deploy agent with the expense form, the tour of every kind, and the demo's chat
plugins (the planner, the organizer, the inbox) with their conversations.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import socket
import sysconfig
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI

from pawflow import reading
from pawflow.a2a.mounting import mount as mount_a2a
from pawflow.agent.spec import AgentSpec
from pawflow.agui.mounting import mount as mount_agui
from pawflow.channels import (
    AppriseChannel,
    Channel,
    Dispatcher,
    EmailChannel,
    PushChannel,
    SmtpConfig,
    WebhookSender,
)
from pawflow.channels.push import default_subject, server_keys
from pawflow.channels.replies import ImapConfig, ReplyReader
from pawflow.chat.service import ChatService
from pawflow.demo import agents as demo_agents
from pawflow.demo import chat as demo_chat
from pawflow.demo.flows import deploy_expense_demo
from pawflow.demo.tour import demo_conversation, seed_tour
from pawflow.durations import setting_seconds
from pawflow.egress import EgressRule
from pawflow.errors import ConfigError, StoreUnavailable
from pawflow.flow.service import FlowService
from pawflow.loops import Service
from pawflow.mcp.mounting import mount as mount_mcp
from pawflow.records import Interaction
from pawflow.redaction import redact_logs
from pawflow.server.app import create_app
from pawflow.server.credentials import issue_signin_link, kept_token
from pawflow.server.running import serve_app, serve_workers
from pawflow.server.settings import ServerSettings
from pawflow.store import LeaseTerms, Store, data_dir, keep_database_time, open_store

_FLOW_SETTINGS = {"reconcile_interval", "workers"}
_AGENT_SETTINGS = {"poll_interval"}
_CHAT_SETTINGS = {"plugins", "data_dir"}


@dataclass
class Prepared:
    store: Store
    app: FastAPI
    lines: list[str] = field(default_factory=list)
    """What to tell the operator (sign-in link, demo token), one line each."""
    flows: FlowService | None = None
    chat: ChatService | None = None

    @property
    def services(self) -> list[Service]:
        return [s for s in (self.flows, self.chat) if s is not None]


def _options(settings: ServerSettings, name: str, known: set[str]) -> Mapping[str, Any]:
    options: Any = settings.extra.get(name, {})
    if not isinstance(options, Mapping) or set(options) - known:
        raise ConfigError(f"{name} settings accept only {sorted(known)}")
    return options


def flow_service(store: Store, settings: ServerSettings) -> FlowService:
    options = _options(settings, "flows", _FLOW_SETTINGS)
    return FlowService(
        store,
        reconcile_interval=setting_seconds(options.get("reconcile_interval", 1.0)),
        workers=int(options.get("workers", 1)),
        lease_ttl=settings.lease_ttl,
    )


def chat_service(
    store: Store,
    settings: ServerSettings,
    agents: Sequence[AgentSpec] = (),
    *,
    demo: bool = False,
) -> ChatService:
    """The chat service with ``agents`` (from ``--agents``) and the chat plugins of the
    settings; with ``demo``, also the deploy agent and the demo's plugins."""
    options = _options(settings, "agents", _AGENT_SETTINGS)
    service = ChatService(
        store,
        [demo_agents.demo_agent(), *agents] if demo else agents,
        poll_interval=setting_seconds(options.get("poll_interval", 1.0)),
        lease=timedelta(seconds=settings.lease_ttl),
    )
    if demo:
        demo_chat.install_plugins(service.chat, settings)
    else:
        for name, config in configured_plugins(settings).items():
            service.chat.install(name, config)
    return service


def dispatcher(store: Store, settings: ServerSettings) -> Dispatcher:
    """The outbox's dispatcher, with the channels the settings configure."""
    rule = EgressRule.parse(settings.egress_allowed_hosts)
    channels: list[Channel] = [
        AppriseChannel(rule, timeout=settings.delivery_timeout, clock=store.clock)
    ]
    if settings.smtp_url:
        channels.append(EmailChannel(SmtpConfig.from_url(settings.smtp_url, settings.mail_from)))
    if settings.slack_bot_token:
        # The Slack channel is the `slack` extra: loaded (or said missing) when configured.
        from pawflow.channels.slack import SlackChannel, SlackConfig  # noqa: PLC0415

        config = SlackConfig(
            settings.slack_bot_token, settings.slack_signing_secret, settings.slack_api_url
        )
        channels.append(SlackChannel(config))
    if settings.push:
        subject = settings.push_subject or default_subject(settings.base_url, settings.mail_from)
        keys = server_keys(store)  # made on the first start, kept in the store
        channels.append(
            PushChannel(store, keys, subject=subject, rule=rule, timeout=settings.delivery_timeout)
        )
    return Dispatcher(
        store,
        channels,
        base_url=settings.base_url,
        interval=settings.outbox_interval,
        lease_ttl=settings.lease_ttl,
        webhooks=WebhookSender(rule, timeout=settings.delivery_timeout),
        concurrency=settings.outbox_concurrency,
    )


def mail_replies(store: Store, settings: ServerSettings) -> list[Service]:
    """The reader of replies by mail, when ``PAWFLOW_IMAP_URL`` names a mailbox."""
    if not settings.imap_url:
        return []

    def read(request: Interaction, text: str) -> object:
        typed = reading.read(request, text)
        return None if typed is None else typed.value

    config = ImapConfig.from_url(settings.imap_url)
    return [
        ReplyReader(
            store, config, read, interval=settings.imap_interval, lease_ttl=settings.lease_ttl
        )
    ]


def clock_watch(store: Store, settings: ServerSettings) -> list[Service]:
    """On PostgreSQL, the store keeps the database's time, read at every lease heartbeat
    (:mod:`pawflow.store.clocks`); nothing to run on SQLite."""
    watch = keep_database_time(
        store,
        max_skew=settings.max_clock_skew,
        interval=LeaseTerms.of(settings.lease_ttl).renew_every,
    )
    return [] if watch is None else [watch]


def configured_plugins(settings: ServerSettings) -> dict[str, dict[str, Any]]:
    """The chat plugins named in ``extra["chat"]["plugins"]`` (entry points; none by
    default)."""
    plugins = _options(settings, "chat", _CHAT_SETTINGS).get("plugins") or {}
    if not isinstance(plugins, Mapping):
        raise ConfigError("chat plugins must map a plugin name to its settings")
    return {str(name): dict(config or {}) for name, config in plugins.items()}


def prepare(
    settings: ServerSettings,
    *,
    demo: bool = False,
    store: Store | None = None,
    agents: Sequence[AgentSpec] = (),
    greet: bool = True,
    metrics_server: bool = True,
) -> Prepared:
    """Everything up to serving. With ``greet`` (the default), on an empty database a local
    user is created and gets a one-time sign-in link; ``demo`` also makes the demo
    conversations and an API token (see :func:`greeting`). ``demo`` installs the demo agents
    and plugins; ``agents`` come from ``pawflow serve --agents``. Without
    ``metrics_server``, a metrics port of the settings is left to another process."""
    store = store or open_store(settings.db, timeout=settings.db_timeout)
    try:
        clock = clock_watch(store, settings)  # first: every time after it is the database's
        flows = flow_service(store, settings)
        chat = chat_service(store, settings, agents, demo=demo)
        lines = greeting(store, chat, settings, demo=demo) if greet else []
        # Loaded only to serve: no other command pays for the tracing SDK or prometheus.
        from pawflow import observability  # noqa: PLC0415

        observed = observability.setup(store, settings, metrics_server=metrics_server)
        app = create_app(
            store,
            settings=settings,
            services=[
                *clock,
                flows,
                chat,
                dispatcher(store, settings),
                *mail_replies(store, settings),
                *observed.services,
            ],
            on_message=chat.message_posted,
            agents=chat,
            endpoints=[mount_mcp, mount_agui, mount_a2a, *observed.endpoints],
        )
        if observed.tracing:
            observability.instrument(app)
    except BaseException:
        store.close()
        raise
    return Prepared(store, app, lines, flows, chat)


WAIT_STEP = 0.5
"""Seconds between two tries to open the store while start-up waits for the database."""


def open_waiting(settings: ServerSettings, say: Callable[[str], object]) -> Store:
    """The store of the settings, once the database is reachable: waits up to
    ``wait_for_db`` seconds, telling ``say`` once what it waits for; past that, the
    ``StoreUnavailable`` says what was wrong and which setting waits longer."""
    deadline: float | None = None  # counted from the first failure
    while True:
        try:
            return open_store(settings.db, timeout=settings.db_timeout)
        except StoreUnavailable as exc:
            waiting = deadline is not None
            if deadline is None:
                deadline = time.monotonic() + settings.wait_for_db
            left = deadline - time.monotonic()
            if left <= 0:
                if settings.wait_for_db <= 0:
                    hint = "--wait-for-db or PAWFLOW_WAIT_FOR_DB waits for it"
                else:
                    hint = (
                        f"waited {settings.wait_for_db:g} s; --wait-for-db or"
                        " PAWFLOW_WAIT_FOR_DB waits longer"
                    )
                raise StoreUnavailable(f"{exc} ({hint})") from exc
            if not waiting:
                say(
                    f"Waiting up to {settings.wait_for_db:g} s for the database"
                    f" (--wait-for-db, PAWFLOW_WAIT_FOR_DB): {exc}"
                )
            time.sleep(min(WAIT_STEP, left))


def greeting(store: Store, chat: ChatService, settings: ServerSettings, *, demo: bool) -> list[str]:
    """What a start does once, whatever the number of server processes: on an empty
    database the local user and its sign-in link; with ``demo`` the demo conversations and a
    token. Returns what to tell the operator, one line each."""
    fresh = not store.has_users()
    local = settings.local_user
    lines = []
    if fresh or demo:
        store.ensure_user(local)
    if demo:
        setup_demo(store, chat, local, settings)
    on_path = [f"  {line}" for line in command_hint()]
    if fresh or demo:
        link = issue_signin_link(store, local, base_url=settings.base_url, ttl=settings.signin_ttl)
        lines += [f"Sign in as {local!r} from a browser with this one-time link:", f"  {link}"]
    else:
        lines.append("Sign in from a browser with a link from: pawflow users signin-link NAME")
        if on_path:
            lines += ["The pawflow command is not on your PATH; to put it there:", *on_path]
    if demo:
        kept = token_file(settings.db)
        token = kept_token(store, local, kept, name="demo", expires_in=settings.token_max_age)
        lines += [
            "The terminal chat: in another terminal, run",
            *on_path,
            f"  export PAWFLOW_SERVER={settings.base_url}",
            f"  export PAWFLOW_TOKEN={token}",
            "  pawflow chat    # or: pawflow inbox, pawflow answer ID VALUE",
            f"The same token at every start (kept in {kept}, for you only);"
            f" pawflow users revoke {local} revokes it and any other token of {local}.",
        ]
    if settings.db.startswith("sqlite:///"):
        lines.append(f"Database: {settings.db.removeprefix('sqlite:///')} (--db or PAWFLOW_DB)")
    lines.append(channel_status(settings))
    return lines


def _where(url: str) -> str:
    """A server's URL without its credentials: ``smtp://mail.example.org:587``."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")


def channel_status(settings: ServerSettings) -> str:
    """Each channel on or off, and why: ``Channels: email: on (smtp://…) · slack: off (no
    PAWFLOW_SLACK_BOT_TOKEN) · …`` (the start banner's line)."""
    said = [
        f"email: on ({_where(settings.smtp_url)})"
        if settings.smtp_url
        else "email: off (no PAWFLOW_SMTP_URL)",
        "slack: on" if settings.slack_bot_token else "slack: off (no PAWFLOW_SLACK_BOT_TOKEN)",
        f"replies by mail: on ({_where(settings.imap_url)})"
        if settings.imap_url
        else "replies by mail: off (no PAWFLOW_IMAP_URL)",
        "push: on" if settings.push else "push: off (PAWFLOW_PUSH=off)",
        "webhooks and apprise: on",
    ]
    return "Channels: " + " · ".join(said)


def token_file(db: str) -> Path:
    """Where ``--demo`` keeps the local user's token between starts: beside a SQLite
    database; for another store, in the data folder under its URL's digest."""
    if db.startswith("sqlite:///"):
        return Path(db.removeprefix("sqlite:///") + ".token")
    digest = hashlib.sha256(db.encode("utf-8")).hexdigest()[:16]
    return data_dir() / "tokens" / f"{digest}.token"


def setup_demo(store: Store, chat: ChatService, user: str, settings: ServerSettings) -> None:
    """The demo conversations (each made once): Demo, the tour, and the Planner."""
    conversation_id = demo_conversation(store, user)
    deploy_expense_demo(store, user, conversation_id)
    chat.assign(conversation_id, demo_agents.DEMO_AGENT)
    demo_chat.demo_setup(chat.chat, store, user, settings)
    seed_tour(store, user)


def command_hint() -> list[str]:
    """The shell line that puts this installation's ``pawflow`` on PATH; none when it is.

    ``make run`` runs ``.venv/bin/python -m pawflow``: the command is in ``.venv/bin``,
    which a new terminal does not have on its PATH.
    """
    scripts = Path(sysconfig.get_path("scripts"))
    found = shutil.which("pawflow")
    if found is not None and Path(found).resolve() == (scripts / "pawflow").resolve():
        return []
    activate = scripts / "activate"
    if activate.is_file():
        try:
            shown = activate.relative_to(Path.cwd())
        except ValueError:
            shown = activate
        return [f"source {shown}"]
    return [f'export PATH="{scripts}:$PATH"']


def run(
    prepared: Prepared,
    settings: ServerSettings,
    *,
    log_level: str = "info",
    sock: socket.socket | None = None,
) -> None:
    """Serve until interrupted (on ``sock``, bound by :func:`listen`), then close the store."""
    try:
        serve_app(prepared.app, settings, log_level=log_level, sock=sock)
    finally:
        prepared.store.close()


# -- several worker processes (``pawflow serve --workers N``) -----------------------------------

MCP_STATE_KEYS = "PAWFLOW_MCP_STATE_KEYS"
"""The keys sealing MCP ``requestState`` (:mod:`pawflow.mcp.rounds`): every worker must share
them, since a client's next round may reach another worker."""


def greet_once(
    settings: ServerSettings, *, demo: bool = False, store: Store | None = None
) -> list[str]:
    """Before the workers start: the store migrated, and :func:`greeting` done once (on
    ``store``, which it closes, or on the store of the settings)."""
    with store or open_store(settings.db, timeout=settings.db_timeout) as opened:
        return greeting(opened, chat_service(opened, settings, demo=demo), settings, demo=demo)


@dataclass(frozen=True)
class WorkerApp:
    """How each worker process of ``serve --workers`` builds its app: pickled to it, so
    plain data. The worker runs the same services as a lone server (leases share their
    work out), greets nobody (:func:`greet_once` did) and leaves a metrics port to the
    supervisor."""

    settings: ServerSettings
    demo: bool = False
    agents: str | None = None
    log_level: str = "info"

    def __call__(self) -> FastAPI:
        from pawflow.telemetry import configure_logging  # noqa: PLC0415

        configure_logging(self.log_level, self.settings.log_format)
        redact_logs()
        connections = ExitStack()  # the agents' MCP sessions, open while the worker serves
        try:
            specs: list[AgentSpec] = []
            if self.agents is not None:
                from pawflow.agent.config import load_agents  # noqa: PLC0415

                specs = load_agents(self.agents, connections=connections)
            prepared = prepare(
                self.settings, demo=self.demo, agents=specs, greet=False, metrics_server=False
            )
        except BaseException:
            connections.close()
            raise
        _close_after_serving(prepared, connections)
        return prepared.app


def _close_after_serving(prepared: Prepared, connections: ExitStack) -> None:
    """Close the store and the agents' sessions when the app's lifespan ends (a worker's
    last step: it exits right after)."""
    inner = prepared.app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        try:
            async with inner(app) as state:
                yield state
        finally:
            prepared.store.close()
            connections.close()

    prepared.app.router.lifespan_context = lifespan


def run_workers(
    settings: ServerSettings,
    *,
    workers: int,
    sock: socket.socket,
    demo: bool = False,
    agents: str | None = None,
    log_level: str = "info",
) -> bool:
    """Serve on ``sock`` with ``workers`` processes until SIGINT or SIGTERM (after
    :func:`greet_once`); False when a worker could not start. This process supervises them
    and serves the metrics port, if the settings name one."""
    os.environ.setdefault(MCP_STATE_KEYS, secrets.token_hex(32))
    with ExitStack() as stack:
        if settings.metrics:  # the workers add up their tallies through this folder
            from pawflow.server.tallies import SHARED_ENV  # noqa: PLC0415

            shared = stack.enter_context(tempfile.TemporaryDirectory(prefix="pawflow-tallies-"))
            os.environ[SHARED_ENV] = shared
        if settings.metrics and settings.metrics_port is not None:
            from pawflow.server.metrics import MetricsServer  # noqa: PLC0415

            store = stack.enter_context(open_store(settings.db, timeout=settings.db_timeout))
            server = MetricsServer(store, settings)
            server.start()
            stack.callback(server.stop)
        app = WorkerApp(settings, demo=demo, agents=agents, log_level=log_level)
        return serve_workers(app, settings, workers=workers, log_level=log_level, sock=sock)

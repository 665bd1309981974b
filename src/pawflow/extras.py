"""The optional parts of PawFlow and what each needs installed.

``pip install pawflow`` installs the core: the contract, the store on SQLite, the HTTP client
and the durable cycle (ask, park, answer, deliver, sweep). Every other part is an extra of
the same distribution (pyproject.toml), and the module that starts a part calls
:func:`require` before it imports what the extra brings, so a missing extra says which one to
install instead of failing on a module name::

    from pawflow import extras

    extras.require("server", part="the PawFlow server")

raises :class:`~pawflow.errors.MissingExtra` ("the PawFlow server needs the 'server' extra
(fastapi, uvicorn, … not installed): pip install 'pawflow[server]'"). Checking costs a
look-up on the import path per module, never an import. A module of a part wraps the imports
of its extra instead, which says the same when one of them fails::

    with extras.needed("slack", part="the Slack channel"):
        from slack_sdk import WebClient
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from importlib.util import find_spec

from pawflow.errors import MissingExtra

EXTRAS: dict[str, tuple[str, ...]] = {
    # PostgreSQL as the store (postgresql://… URLs).
    "postgres": ("psycopg", "psycopg_pool"),
    # `pawflow serve` and the commands: the HTTP server, the web chat, flows, agents, mail,
    # webhooks and Apprise channels, /metrics.
    "server": (
        *("fastapi", "uvicorn", "multipart", "fastapi_offline", "typer", "rich", "yaml"),
        *("markdown_it", "nh3", "docstring_parser", "standardwebhooks", "apprise"),
        "prometheus_client",
    ),
    # `pawflow chat`, the terminal app.
    "tui": ("textual", "typer", "rich"),
    # The Slack channel: notifications, and answers from Slack's buttons and forms.
    "slack": ("slack_sdk",),
    # Traces: the OpenTelemetry SDK and the HTTP spans of the server.
    "otel": ("opentelemetry.trace", "opentelemetry.sdk", "opentelemetry.instrumentation.fastapi"),
    # /mcp, `pawflow mcp` and the MCP tools of agents.
    "mcp": ("mcp", "mcp_types"),
    # PawFlow's agents over AG-UI (/agui/{agent}).
    "agui": ("ag_ui",),
    # PawFlow's agents over A2A (/a2a/{agent}).
    "a2a": ("a2a",),
}
"""Each extra of the distribution, with the modules that tell whether it is installed."""


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (found on the import path; nothing is imported
    but the parents of a dotted name)."""
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):  # a parent missing, or a module without a spec
        return False


def missing(extra: str, *modules: str) -> list[str]:
    """The modules of ``extra`` (or just ``modules`` of it) that cannot be imported."""
    return [module for module in modules or EXTRAS[extra] if not installed(module)]


def require(extra: str, *modules: str, part: str) -> None:
    """Raise :class:`MissingExtra` naming ``extra`` unless its modules (or just ``modules``)
    can be imported; ``part`` names what needs them in the message."""
    absent = missing(extra, *modules)
    if absent:
        raise MissingExtra(extra, part, absent)


@contextlib.contextmanager
def needed(extra: str, *, part: str) -> Iterator[None]:
    """Turn the failed import of a module of ``extra`` in the block into
    :class:`MissingExtra`; any other error passes as it is."""
    tops = {module.partition(".")[0] for module in EXTRAS[extra]}
    try:
        yield
    except ModuleNotFoundError as error:
        if (error.name or "").partition(".")[0] not in tops:
            raise
        raise MissingExtra(extra, part, [error.name or ""]) from error

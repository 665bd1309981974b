"""``pawflow webhooks``: a user's webhooks, straight in the store (like ``pawflow users``).

``add`` prints the signing secret once; the URL is checked as ``create_webhook`` checks it,
with ``PAWFLOW_EGRESS_ALLOWED_HOSTS`` from the environment.
"""

from __future__ import annotations

import typer

from pawflow.cli.server import DB_OPTION, _say
from pawflow.cli.users import _user_name
from pawflow.errors import ConfigError, InvalidInput, NotFound

webhooks_app = typer.Typer(
    rich_markup_mode=None,
    help="Manage a user's webhooks (signed events of their requests).",
    no_args_is_help=True,
)
ALL_EVENTS = "interaction.created,interaction.answered,interaction.expired,interaction.cancelled"


@webhooks_app.command("add")
def webhooks_add(
    name: str = typer.Argument(..., help="The user the webhook is for.", callback=_user_name),
    url: str = typer.Argument(..., help="The http(s) URL to POST events to."),
    events: str = typer.Option(ALL_EVENTS, help="The events, comma-separated."),
    db: str | None = DB_OPTION,
) -> None:
    """Subscribe URL to a user's request events; prints the signing secret once."""
    from pawflow.channels.webhooks import check_url
    from pawflow.egress import EgressRule
    from pawflow.server.settings import ServerSettings
    from pawflow.store import WEBHOOK_EVENTS, open_store

    chosen = tuple(dict.fromkeys(e.strip() for e in events.split(",") if e.strip()))
    unknown = [e for e in chosen if e not in WEBHOOK_EVENTS]
    if not chosen or unknown:
        raise typer.BadParameter(f"events must be among {', '.join(WEBHOOK_EVENTS)}")
    try:
        settings = ServerSettings.from_env()
        check_url(url, EgressRule.parse(settings.egress_allowed_hosts))
    except (InvalidInput, ConfigError) as exc:
        raise typer.BadParameter(str(exc)) from exc
    with open_store(db) as store:
        store.ensure_user(name)
        with store.unit() as u:
            try:
                hook = u.webhooks.create(name, url, chosen, limit=settings.max_webhooks)
            except InvalidInput as exc:
                raise typer.BadParameter(exc.message) from exc
    _say(f"webhook {hook.id} for {name}: {hook.url}")
    _say(f"events: {', '.join(hook.events)}")
    _say(f"secret (shown once): {hook.secret}")


@webhooks_app.command("list")
def webhooks_list(
    name: str = typer.Argument(..., help="The user whose webhooks to list."),
    db: str | None = DB_OPTION,
) -> None:
    """List a user's webhooks (never their secrets)."""
    from pawflow.store import open_store

    with open_store(db) as store, store.unit(write=False) as u:
        hooks = u.webhooks.list_for(name)
    for hook in hooks:
        _say(f"{hook.id}  {hook.url}  {','.join(hook.events)}")
    if not hooks:
        _say(f"{name} has no webhook")


@webhooks_app.command("remove")
def webhooks_remove(
    name: str = typer.Argument(..., help="The user the webhook is for."),
    webhook_id: str = typer.Argument(..., help="The webhook's id (pawflow webhooks list)."),
    db: str | None = DB_OPTION,
) -> None:
    """Delete one of a user's webhooks and its delivery log."""
    from pawflow.store import open_store

    try:
        with open_store(db) as store, store.unit() as u:
            u.webhooks.delete(name, webhook_id)
    except NotFound:
        typer.echo(f"{name} has no webhook {webhook_id}", err=True)
        raise typer.Exit(1) from None
    _say(f"removed webhook {webhook_id} of {name}")


def register(app: typer.Typer) -> None:
    app.add_typer(webhooks_app, name="webhooks")

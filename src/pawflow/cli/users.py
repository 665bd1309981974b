"""``pawflow users``: who may use a store, how they sign in, and where they are reached.

Like every command, each imports what it uses when it runs (tests/test_startup.py).
"""

from __future__ import annotations

import os

import typer

from pawflow.cli.server import DB_OPTION, _say
from pawflow.errors import InvalidInput

users_app = typer.Typer(
    rich_markup_mode=None, help="Manage the users of a PawFlow store.", no_args_is_help=True
)


def _user_name(name: str) -> str:
    from pawflow.server.credentials import validate_user_name

    try:
        validate_user_name(name)
    except InvalidInput as exc:
        raise typer.BadParameter(str(exc)) from exc
    return name


@users_app.command("add")
def users_add(
    name: str = typer.Argument(..., help="The new user's name.", callback=_user_name),
    db: str | None = DB_OPTION,
    label: str = typer.Option("", help="A note kept with the token."),
) -> None:
    """Create a user (or give one another token); the token is the last line printed."""
    from pawflow.server.credentials import issue_token
    from pawflow.store import open_store

    with open_store(db) as store:
        token = issue_token(store, name, label=label)
    _say(f"API token for {name} (shown once; send it as 'Authorization: Bearer <token>'):")
    _say(token)


@users_app.command("signin-link")
def users_signin_link(
    name: str = typer.Argument(..., help="Who signs in.", callback=_user_name),
    db: str | None = DB_OPTION,
    url: str = typer.Option(
        "http://127.0.0.1:8765", envvar="PAWFLOW_PUBLIC_URL", help="The server's URL."
    ),
) -> None:
    """Print a one-time browser sign-in link for a user."""
    from pawflow.server.credentials import issue_signin_link
    from pawflow.server.settings import ServerSettings
    from pawflow.store import open_store

    with open_store(db) as store:
        ttl = ServerSettings.from_env().signin_ttl
        _say(issue_signin_link(store, name, base_url=url, ttl=ttl))


@users_app.command("revoke")
def users_revoke(name: str = typer.Argument(...), db: str | None = DB_OPTION) -> None:
    """Revoke every API token of a user, and the answer links they have not used."""
    from pawflow.server.credentials import revoke_tokens
    from pawflow.store import open_store

    with open_store(db) as store, store.transaction() as tx:
        count = revoke_tokens(tx, name, now=store.now())
    _say(f"revoked {count} token(s) of {name}")


@users_app.command("set")
def users_set(
    name: str = typer.Argument(..., help="The user to change.", callback=_user_name),
    db: str | None = DB_OPTION,
    email: str | None = typer.Option(None, help="Their email address ('' clears it)."),
    slack: str | None = typer.Option(None, help="Their Slack user id, U… ('' clears it)."),
    notify_url: str | None = typer.Option(
        None, "--notify-url", help="An Apprise URL such as ntfy://topic ('' clears it)."
    ),
    notify: str | None = typer.Option(
        None,
        help="The channels to use, comma-separated (email,slack,webhook,apprise);"
        " 'none' for none, 'default' for every channel with an address.",
    ),
) -> None:
    """Say where a user is reached and which channels notify them of requests."""
    from pawflow.channels.apprise import check_notify_url
    from pawflow.egress import EgressRule
    from pawflow.store import open_store, outbox

    given: dict[str, object] = {}
    for key, value in (("email", email), ("slack", slack), ("notify_url", notify_url)):
        if value is not None:
            given[key] = value
    if notify is not None:
        words = [part.strip() for part in notify.split(",") if part.strip()]
        given["notify"] = None if words == ["default"] else [] if words == ["none"] else words
    with open_store(db) as store:
        store.ensure_user(name)
        try:
            if notify_url:  # held to the egress rule, as set_notifications holds it
                check_notify_url(notify_url, EgressRule.from_env(os.environ))
            with store.transaction() as tx:
                reach = outbox.set_reach(tx, name, now=store.now(), **given)  # type: ignore[arg-type]
        except InvalidInput as exc:
            raise typer.BadParameter(exc.message) from exc
    shown = reach.to_dict()
    for key in ("email", "slack", "notify_url"):
        _say(f"{key}: {shown[key] or '-'}")
    _say(f"notify: {', '.join(shown['channels']) or 'none'}")


def register(app: typer.Typer) -> None:
    """Add this part's commands to the ``pawflow`` app."""
    app.add_typer(users_app, name="users")

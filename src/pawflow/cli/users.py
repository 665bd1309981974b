"""``pawflow users``: who may use a store, how they sign in, their tokens, their access, and
where they are reached.

These commands open the store itself (``--db``): whoever can run them where the store is
administers it. A token is shown once, when made; it is listed and revoked by its id. Like
every command, each imports what it uses when it runs (tests/test_startup.py).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import typer

from pawflow.cli.server import DB_OPTION, _say
from pawflow.errors import InvalidInput, NotFound

if TYPE_CHECKING:
    from pawflow.store import Store, TokenRow

users_app = typer.Typer(
    rich_markup_mode=None, help="Manage the users of a PawFlow store.", no_args_is_help=True
)
token_app = typer.Typer(
    rich_markup_mode=None,
    help="Personal access tokens: make, list, rotate, revoke.",
    no_args_is_help=True,
)
users_app.add_typer(token_app, name="token")

EXPIRES_OPTION = typer.Option(
    None,
    "--expires",
    help="How long the token is valid: 90d, 12h, 1y…, or never where PAWFLOW_TOKEN_MAX_AGE"
    " is never; by default PAWFLOW_TOKEN_MAX_AGE (90d).",
    show_default=False,
)
NAME_OPTION = typer.Option("", "--name", "--label", help="The token's name, shown in listings.")


def _user_name(name: str) -> str:
    from pawflow.server.credentials import validate_user_name

    try:
        validate_user_name(name)
    except InvalidInput as exc:
        raise typer.BadParameter(str(exc)) from exc
    return name


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
        help="The channels to use, comma-separated (email,slack,webhook,apprise,push);"
        " 'none' for none, 'default' for every channel with an address.",
    ),
) -> None:
    """Say where a user is reached and which channels notify them of requests."""
    from pawflow.channels.apprise import check_notify_url
    from pawflow.egress import EgressRule
    from pawflow.store import open_store

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
            with store.unit() as u:
                reach = u.outbox.set_reach(name, **given)  # type: ignore[arg-type]
        except InvalidInput as exc:
            raise typer.BadParameter(exc.message) from exc
    shown = reach.to_dict()
    for key in ("email", "slack", "notify_url"):
        _say(f"{key}: {shown[key] or '-'}")
    _say(f"notify: {', '.join(shown['channels']) or 'none'}")


@users_app.command("add")
def users_add(
    name: str = typer.Argument(..., help="The new user's name.", callback=_user_name),
    db: str | None = DB_OPTION,
    token_name: str = NAME_OPTION,
    expires: str | None = EXPIRES_OPTION,
    admin: bool = typer.Option(False, "--admin", help="Make the user an admin (audited)."),
) -> None:
    """Create a user (or give one another token); the token is the last line printed."""
    from pawflow.store import open_store

    with open_store(db) as store:
        secret, row = _make_token(store, name, token_name, expires)
        if admin:
            with store.unit() as u:
                u.roles.set_role(name, "admin")
                u.roles.record("cli", "user.role", target=name, detail={"role": "admin"})
            _say(f"{name} is an admin.")
    _print_new(row, secret)


def _make_token(store: Store, user: str, name: str, expires: str | None) -> tuple[str, TokenRow]:
    from pawflow.server.credentials import create_token, token_expiry
    from pawflow.server.settings import ServerSettings

    max_age = ServerSettings.from_env().token_max_age
    with store.unit() as u:
        now = store.now()
        try:
            expires_at = token_expiry(now, expires, max_age)
        except InvalidInput as exc:
            raise typer.BadParameter(exc.message, param_hint="--expires") from None
        return create_token(u.tx, user, name=name, now=now, expires_at=expires_at)


def _until(row: TokenRow) -> str:
    if row.expires_at is None:
        return "does not expire"
    return f"expires {row.expires_at.strftime('%Y-%m-%d %H:%M')} UTC"


def _print_new(row: TokenRow, secret: str) -> None:
    named = f" {row.name!r}" if row.name else ""
    _say(f"API token {row.id}{named} for {row.user_id}, {_until(row)}.")
    _say("Shown once; send it as 'Authorization: Bearer <token>', or keep it with pawflow login:")
    _say(secret)


@users_app.command("revoke")
def users_revoke(name: str = typer.Argument(...), db: str | None = DB_OPTION) -> None:
    """Revoke every API token of a user, end their browser sessions, and the answer links
    they have not used."""
    from pawflow.server.credentials import revoke_tokens
    from pawflow.store import open_store

    with open_store(db) as store, store.unit() as u:
        count = revoke_tokens(u.tx, name, now=store.now())
    _say(f"revoked {count} token(s) of {name} and ended their browser sessions")


def _set_disabled(name: str, db: str | None, disabled: bool) -> bool:
    from pawflow.server.credentials import set_user_disabled
    from pawflow.store import open_store

    with open_store(db) as store:
        try:
            with store.unit() as u:
                return set_user_disabled(u.tx, name, disabled, now=store.now())
        except NotFound:
            raise typer.BadParameter(f"no user {name} in this store") from None


@users_app.command("disable")
def users_disable(name: str = typer.Argument(...), db: str | None = DB_OPTION) -> None:
    """Disable a user: their tokens, browser sessions, open streams, MCP connections and
    unused answer links stop at once (pawflow users enable lets the tokens in again)."""
    changed = _set_disabled(name, db, True)
    _say(f"{name} is disabled" if changed else f"{name} was already disabled")


@users_app.command("enable")
def users_enable(name: str = typer.Argument(...), db: str | None = DB_OPTION) -> None:
    """Enable a disabled user again: their tokens work again; they sign in anew."""
    changed = _set_disabled(name, db, False)
    _say(f"{name} is enabled" if changed else f"{name} was not disabled")


# -- tokens ------------------------------------------------------------------------------------


@token_app.command("add")
def token_add(
    user: str = typer.Argument(..., help="Whose token.", callback=_user_name),
    db: str | None = DB_OPTION,
    token_name: str = NAME_OPTION,
    expires: str | None = EXPIRES_OPTION,
) -> None:
    """Make another token for a user; the token is the last line printed."""
    from pawflow.store import open_store

    with open_store(db) as store:
        secret, row = _make_token(store, user, token_name, expires)
    _print_new(row, secret)


@token_app.command("list")
def token_list(
    user: str | None = typer.Argument(None, help="Only this user's tokens."),
    db: str | None = DB_OPTION,
    as_json: bool = typer.Option(False, "--json", help="One JSON object."),
) -> None:
    """List tokens (everyone's, or a user's): id, owner, name, made, last used, expiry."""
    import json

    from pawflow.server.credentials import list_tokens
    from pawflow.store import open_store

    with open_store(db) as store, store.unit(write=False) as u:
        found = list_tokens(u, user)
        now = store.now()
    if as_json:
        _say(json.dumps({"tokens": [row.to_dict() for row in found]}))
        return
    if not found:
        _say("no tokens")
        return
    for row in found:
        used = row.last_used_at.strftime("%Y-%m-%d %H:%M") if row.last_used_at else "never"
        state = "EXPIRED " if row.expired(now) else ""
        _say(
            f"{row.id}  {row.user_id}  {row.name or '-'}  made {row.created_at:%Y-%m-%d}"
            f"  last used {used}  {state}{_until(row)}"
        )


@token_app.command("revoke")
def token_revoke(
    token_id: str = typer.Argument(
        ..., help="The token's id (tok_…, see pawflow users token list)."
    ),
    db: str | None = DB_OPTION,
) -> None:
    """Revoke one token: it stops at once, on every open stream too."""
    from pawflow.server.credentials import revoke_token
    from pawflow.store import open_store

    with open_store(db) as store, store.unit() as u:
        gone = revoke_token(u, token_id)
    if gone is None:
        raise typer.BadParameter(f"no token {token_id} in this store")
    _say(f"revoked {gone.id} of {gone.user_id}")


@token_app.command("rotate")
def token_rotate(
    token_id: str = typer.Argument(..., help="The token's id (tok_…)."),
    db: str | None = DB_OPTION,
    expires: str | None = typer.Option(
        None,
        "--expires",
        help="How long the new token is valid; by default as long as the old one was.",
        show_default=False,
    ),
) -> None:
    """Replace a token by a new one (same user, same name); the old one stops at once. The
    new token is the last line printed."""
    from pawflow.server.credentials import rotate_token, token_expiry
    from pawflow.server.settings import ServerSettings
    from pawflow.store import open_store

    max_age = ServerSettings.from_env().token_max_age
    with open_store(db) as store, store.unit() as u:
        now = store.now()
        expires_at = None
        if expires is not None:
            try:
                expires_at = token_expiry(now, expires, max_age)
            except InvalidInput as exc:
                raise typer.BadParameter(exc.message, param_hint="--expires") from None
        made = rotate_token(u.tx, token_id, now=now, expires_at=expires_at, max_age=max_age)
    if made is None:
        raise typer.BadParameter(f"no token {token_id} in this store")
    _print_new(made[1], made[0])


def register(app: typer.Typer) -> None:
    app.add_typer(users_app, name="users")

"""The sign-in pages as a person sees them: styled like the chat, saying who signs in.

Opening a sign-in link shows "Sign in as NAME" — read, not consumed: only the form's POST
uses the link up. The pages carry no inline script or style (``/static/signin.css``).
"""

from __future__ import annotations

import html
from datetime import datetime

from fastapi.responses import HTMLResponse

from pawflow.errors import SignInProblem
from pawflow.server.credentials import MAX_SECRET, digest
from pawflow.store import Transaction as Tx
from pawflow.store import Unit

# same-origin, not no-referrer: under no-referrer a browser posts the form with "Origin: null",
# which the origin check must refuse; the secret in the URL still never leaves this origin.
NO_STORE = {"Cache-Control": "no-store", "Referrer-Policy": "same-origin"}

_LOGO = (
    '<svg class="logo" viewBox="0 0 32 32" width="28" height="28" aria-hidden="true" '
    'focusable="false"><ellipse cx="16" cy="21.5" rx="7.5" ry="6.5"/>'
    '<ellipse cx="6.5" cy="13" rx="3" ry="3.8"/><ellipse cx="12.5" cy="7.5" rx="3" ry="3.8"/>'
    '<ellipse cx="19.5" cy="7.5" rx="3" ry="3.8"/><ellipse cx="25.5" cy="13" rx="3" ry="3.8"/>'
    "</svg>"
)


def page(title: str, body: str, status: int = 200) -> HTMLResponse:
    """A sign-in page: ``body`` is trusted HTML (everything in it escaped by the caller)."""
    return HTMLResponse(
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)} · PawFlow</title>"
        '<link rel="icon" href="/favicon.ico">'
        '<link rel="stylesheet" href="/static/signin.css"></head>'
        f'<body><main class="signin"><p class="brand">{_LOGO}<span>PawFlow</span></p>'
        f"{body}</main></body></html>",
        status_code=status,
        headers=NO_STORE,
    )


def link_user(tx: Tx, secret: str, *, now: datetime) -> str | None:
    """Whom a sign-in secret is for, without using it up (None: unknown, used or expired)."""
    u = Unit(tx, now)
    if not secret or len(secret) > MAX_SECRET:
        return None
    return u.credentials.signin_link_user(digest(secret))


HOW_TO_GET_A_LINK = (
    "<p>Open the sign-in link that <code>pawflow serve</code> printed, or make one with "
    "<code>pawflow users signin-link NAME</code>.</p>"
)
UNUSABLE = (
    "<h1>This link cannot sign you in</h1><p>It is unknown, expired or already used. "
    "Ask for a new one (<code>pawflow users signin-link NAME</code>).</p>"
)


def form(user: str, token: str) -> str:
    """The confirmation form: whom the link signs in, and the button that does it."""
    name = html.escape(user)
    return (
        f'<h1>Sign in as <span class="user">{name}</span></h1>'
        f"<p>This one-time link opens PawFlow as <strong>{name}</strong> in this browser.</p>"
        '<form method="post" action="/signin">'
        f'<input type="hidden" name="token" value="{html.escape(token, quote=True)}">'
        '<button type="submit" class="primary">Sign in</button></form>'
        '<p class="note">Not you? Close this page: the link stays unused.</p>'
    )


NOT_FOUND = "<h1>Not found</h1><p>Single sign-on is not set up on this server.</p>"
LINKS_OFF = (
    "<h1>Sign-in links are turned off</h1><p>An admin turned sign-in by one-time link off"
    " on this server.</p>"
)


def sso_button(name: str) -> str:
    """The way to the identity provider."""
    return (
        f'<p><a class="button primary" href="/signin/oidc">Sign in with {html.escape(name)}</a></p>'
    )


def sso_problem(problem: SignInProblem) -> str:
    """Single sign-on cannot work now: what is wrong, and the setting to check."""
    reason = html.escape(problem.reason)
    setting = problem.setting
    check = f"<p>Setting to check: <code>{html.escape(setting)}</code>.</p>" if setting else ""
    return (
        f"<h1>Single sign-on is not working</h1><p>{reason}</p>{check}"
        '<p class="note">Sign-in links and API tokens still work. '
        '<a href="/signin">Back to sign-in</a></p>'
    )


def sso_refused(reason: str) -> str:
    """The provider signed someone in whom this server does not let in, and why."""
    return (
        f"<h1>You cannot sign in here</h1><p>{html.escape(reason)}</p>"
        '<p><a href="/signin">Back to sign-in</a></p>'
    )

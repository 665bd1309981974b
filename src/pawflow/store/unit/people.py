"""The tables of people: credentials, groups and delegations, roles and sign-in."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from pawflow.store.people import credentials as _credentials
from pawflow.store.people import groups as _groups
from pawflow.store.people import roles as _roles
from pawflow.store.people import sign_in as _sign_in
from pawflow.store.people.credentials import LoginCheck, TokenRow
from pawflow.store.people.roles import Origin
from pawflow.store.people.sign_in import Attempt
from pawflow.store.unit.binding import Table, bound

__all__ = ["CredentialsTable", "GroupsTable", "RolesTable", "SignInTable"]


class CredentialsTable(Table):
    """API tokens, sign-in links and logins."""

    def add_token(
        self, token_hash: str, user: str, *, name: str, expires_at: datetime | None
    ) -> TokenRow:
        return _credentials.add_token(
            self.tx, token_hash, user, name=name, now=self.now(), expires_at=expires_at
        )

    check_token = bound(_credentials.check_token)

    def token_current(self, token_hash: str, user: str) -> bool:
        return _credentials.token_current(self.tx, token_hash, user, now=self.now())

    def touch_token(self, token_hash: str) -> None:
        _credentials.touch_token(self.tx, token_hash, self.now())

    tokens = bound(_credentials.tokens)
    token_by_id = bound(_credentials.token_by_id)
    remove_token = bound(_credentials.remove_token)
    remove_tokens = bound(_credentials.remove_tokens)

    def set_disabled(self, user: str, disabled: bool) -> bool:
        return _credentials.set_disabled(self.tx, user, disabled, now=self.now())

    disabled_at = bound(_credentials.disabled_at)
    user_enabled = bound(_credentials.user_enabled)

    def add_signin_link(self, link_hash: str, user: str, *, expires_at: datetime) -> None:
        _credentials.add_signin_link(
            self.tx, link_hash, user, now=self.now(), expires_at=expires_at
        )

    def signin_link_user(self, link_hash: str) -> str | None:
        return _credentials.signin_link_user(self.tx, link_hash, now=self.now())

    def use_signin_link(self, link_hash: str) -> str | None:
        return _credentials.use_signin_link(self.tx, link_hash, now=self.now())

    def add_login(
        self, login_hash: str, user: str, csrf_token: str, *, expires_at: datetime
    ) -> None:
        _credentials.add_login(
            self.tx, login_hash, user, csrf_token, now=self.now(), expires_at=expires_at
        )

    def login(self, login_hash: str, *, idle: timedelta) -> LoginCheck | None:
        return _credentials.login(self.tx, login_hash, now=self.now(), idle=idle)

    def login_current(self, login_hash: str, user: str, *, idle: timedelta) -> bool:
        return _credentials.login_current(self.tx, login_hash, user, now=self.now(), idle=idle)

    def touch_login(self, login_hash: str) -> None:
        _credentials.touch_login(self.tx, login_hash, self.now())

    remove_login = bound(_credentials.remove_login)
    remove_logins = bound(_credentials.remove_logins)

    def prune_expired(self) -> int:
        return _credentials.prune_expired(self.tx, self.now())


class GroupsTable(Table):
    """Groups and delegations."""

    check_kept_here = bound(_groups.check_kept_here)

    def add_members(self, name: str, users: Iterable[str]) -> list[str]:
        return _groups.add_members(self.tx, name, users, self.now())

    remove_members = bound(_groups.remove_members)
    members = bound(_groups.members)
    all_groups = bound(_groups.all_groups)
    groups_of = bound(_groups.groups_of)
    expand = bound(_groups.expand)

    def delegate(self, principal: str, to: str, until: datetime) -> dict[str, str]:
        return _groups.delegate(self.tx, principal, to, until, self.now())

    revoke_delegation = bound(_groups.revoke_delegation)

    def delegations(self) -> list[dict[str, str]]:
        return _groups.delegations(self.tx, self.now())

    def principals_of(self, delegate_user: str) -> list[str]:
        return _groups.principals_of(self.tx, delegate_user, self.now())


class RolesTable(Table):
    """Users' roles, emails and server options."""

    role_of = bound(_roles.role_of)
    is_admin = bound(_roles.is_admin)
    set_role = bound(_roles.set_role)
    set_email = bound(_roles.set_email)
    user = bound(_roles.user)
    users = bound(_roles.users)
    admins = bound(_roles.admins)
    option = bound(_roles.option)

    def set_option(self, name: str, value: str, *, by: str) -> None:
        _roles.set_option(self.tx, name, value, by=by, now=self.now())

    def record(
        self,
        actor: str,
        action: str,
        *,
        target: str | None = None,
        detail: dict[str, Any] | None = None,
        origin: Origin | None = None,
    ) -> None:
        _roles.record(
            self.tx, actor, action, self.now(), target=target, detail=detail, origin=origin
        )

    trail = bound(_roles.trail)


class SignInTable(Table):
    """Single sign-on attempts, identities and provider groups."""

    def add_attempt(self, state_hash: str, attempt: Attempt, *, expires_at: datetime) -> None:
        _sign_in.add_attempt(self.tx, state_hash, attempt, now=self.now(), expires_at=expires_at)

    def use_attempt(self, state_hash: str) -> Attempt | None:
        return _sign_in.use_attempt(self.tx, state_hash, now=self.now())

    def prune_attempts(self) -> int:
        return _sign_in.prune_attempts(self.tx, self.now())

    identity_user = bound(_sign_in.identity_user)

    def link_identity(self, issuer: str, subject: str, user: str) -> None:
        _sign_in.link_identity(self.tx, issuer, subject, user, now=self.now())

    provider_groups = bound(_sign_in.provider_groups)
    is_provider_group = bound(_sign_in.is_provider_group)

    def sync_groups(
        self, user: str, claimed: Iterable[str], *, issuer: str
    ) -> tuple[list[str], list[str]]:
        return _sign_in.sync_groups(self.tx, user, claimed, issuer=issuer, now=self.now())

"""Tokens that end, on both backends: names, expiry, last use written at most once a minute,
rotation, revocation by id; browser logins' idle and absolute timeouts; disabled users."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from pawflow import open_store
from pawflow.clock import FakeClock, to_millis
from pawflow.errors import InvalidInput, NotFound
from pawflow.server.credentials import (
    check_token,
    create_login,
    create_signin_link,
    create_token,
    digest,
    list_tokens,
    login_for,
    note_login_use,
    note_token_use,
    redeem_signin,
    revoke_token,
    revoke_tokens,
    rotate_token,
    set_user_disabled,
    sign_out_everywhere,
    token_expiry,
)
from pawflow.store import Question, Store, Unit
from pawflow.store.engine import migrations
from pawflow.store.engine.database import sql
from pawflow.store.people import credentials as rows
from pawflow.store.reach import answer_links
from pawflow.testing import throwaway_postgres
from tests.conftest import require_postgres

DAY = timedelta(days=1)


def _token(store: Store, user: str, *, name: str = "", days: float | None = 30) -> tuple[str, str]:
    with store.transaction() as tx:
        now = store.now()
        expires_at = None if days is None else now + timedelta(days=days)
        secret, row = create_token(tx, user, name=name, now=now, expires_at=expires_at)
    return secret, row.id


def _check(store: Store, secret: str) -> tuple[str | None, str, bool]:
    with store.transaction(write=False) as tx:
        verdict = check_token(tx, secret, now=store.now())
    return verdict.user, verdict.refusal, verdict.stale


def test_a_token_is_listed_by_name_and_refused_once_past_its_expiry(
    store: Store, clock: FakeClock
) -> None:
    secret, token_id = _token(store, "ana", name="laptop", days=2)
    _token(store, "bob", name="ci", days=None)
    with store.transaction(write=False) as tx:
        mine = list_tokens(Unit(tx, store.now), "ana")
        everyone = list_tokens(Unit(tx, store.now))
    assert [(t.id, t.user_id, t.name) for t in mine] == [(token_id, "ana", "laptop")]
    assert mine[0].expires_at == mine[0].created_at + 2 * DAY
    assert mine[0].last_used_at is None
    assert [t.user_id for t in everyone] == ["ana", "bob"]
    assert everyone[1].expires_at is None
    assert secret not in str(everyone) and digest(secret) not in str(everyone)

    assert _check(store, secret)[:2] == ("ana", "")
    clock.advance(2 * DAY)
    user, refusal, _ = _check(store, secret)
    assert user is None
    assert refusal.startswith(f"token {token_id} expired on ")
    with store.transaction(write=False) as tx:
        assert not rows.token_current(tx, digest(secret), "ana", now=store.now())
    assert _check(store, "pf_nothing")[:2] == (None, "invalid token")


def test_last_use_is_written_at_most_once_a_minute(store: Store, clock: FakeClock) -> None:
    secret, _ = _token(store, "ana")
    assert _check(store, secret)[2] is True  # never used: worth writing
    note_token_use(store, secret)
    used_at = store.now()
    clock.advance(timedelta(seconds=59))
    assert _check(store, secret)[2] is False
    clock.advance(timedelta(seconds=1))
    assert _check(store, secret)[2] is True
    with store.transaction(write=False) as tx:
        assert list_tokens(Unit(tx, store.now), "ana")[0].last_used_at == used_at


def test_a_token_is_revoked_by_its_id_and_only_by_its_owner_or_an_admin(store: Store) -> None:
    secret, token_id = _token(store, "ana")
    other, _ = _token(store, "ana")
    with store.transaction() as tx:
        assert (
            revoke_token(Unit(tx, store.now), token_id, owner="bob") is None
        )  # not bob's: as if unknown
        assert revoke_token(Unit(tx, store.now), "tok_unknown") is None
        gone = revoke_token(Unit(tx, store.now), token_id, owner="ana")
    assert gone is not None and gone.id == token_id
    assert _check(store, secret)[:2] == (None, "invalid token")
    assert _check(store, other)[0] == "ana"


def test_rotation_keeps_name_and_span_and_ends_the_old_token(
    store: Store, clock: FakeClock
) -> None:
    old, token_id = _token(store, "ana", name="ci", days=10)
    clock.advance(DAY)
    with store.transaction() as tx:
        made = rotate_token(tx, token_id, now=store.now(), max_age=timedelta(days=90))
        assert rotate_token(tx, token_id, now=store.now()) is None  # gone already
    assert made is not None
    new, row = made
    assert (row.user_id, row.name) == ("ana", "ci") and row.id != token_id
    assert row.expires_at == store.now() + timedelta(days=10)
    assert _check(store, old)[0] is None and _check(store, new)[0] == "ana"
    # A token made without expiry is rotated into one that lasts the longest allowed.
    _, forever = _token(store, "ana", days=None)
    with store.transaction() as tx:
        capped = rotate_token(tx, forever, now=store.now(), max_age=timedelta(days=90))
    assert capped is not None and capped[1].expires_at == store.now() + timedelta(days=90)


def test_an_expiry_is_read_against_the_longest_allowed() -> None:
    now = FakeClock().now()
    most = timedelta(days=90)
    assert token_expiry(now, None, most) == now + most
    assert token_expiry(now, "12h", most) == now + timedelta(hours=12)
    assert token_expiry(now, None, None) is None
    assert token_expiry(now, "never", None) is None
    for wrong, said in (
        ("never", "tokens last at most 90 days here (PAWFLOW_TOKEN_MAX_AGE)"),
        ("1y", "tokens last at most 90 days here (PAWFLOW_TOKEN_MAX_AGE)"),
        ("soon", "such as 90d, 12h or never"),
    ):
        with pytest.raises(InvalidInput) as refused:
            token_expiry(now, wrong, most)
        assert said in refused.value.message
        assert refused.value.errors[0].path == "expires"


def test_a_login_ends_when_idle_or_at_its_expiry(store: Store, clock: FakeClock) -> None:
    idle = timedelta(hours=1)
    store.ensure_user("ana")
    with store.transaction() as tx:
        cookie, _ = create_login(tx, "ana", ttl=timedelta(hours=3), now=store.now())

    def live() -> bool:
        with store.transaction(write=False) as tx:
            return login_for(tx, cookie, now=store.now(), idle=idle) is not None

    for _ in range(3):  # used every 50 minutes: never idle an hour
        clock.advance(timedelta(minutes=50))
        assert live()
        note_login_use(store, cookie)
    clock.advance(timedelta(minutes=50))
    assert not live()  # 3 h 20 min after sign-in: past the absolute timeout

    with store.transaction() as tx:
        cookie, _ = create_login(tx, "ana", ttl=timedelta(hours=3), now=store.now())
    clock.advance(timedelta(minutes=59))
    assert live()
    clock.advance(timedelta(minutes=1))  # unused an hour
    assert not live()


def test_signing_out_everywhere_and_revoking_end_every_login(store: Store) -> None:
    store.ensure_user("ana")
    store.ensure_user("bob")
    with store.transaction() as tx:
        cookies = [create_login(tx, "ana", ttl=DAY, now=store.now())[0] for _ in range(2)]
        bobs, _ = create_login(tx, "bob", ttl=DAY, now=store.now())
        assert sign_out_everywhere(Unit(tx, store.now), "ana") == 2
        again, _ = create_login(tx, "ana", ttl=DAY, now=store.now())
        revoke_tokens(tx, "ana", now=store.now())
    with store.transaction(write=False) as tx:
        for cookie in [*cookies, again]:
            assert login_for(tx, cookie, now=store.now()) is None
        assert login_for(tx, bobs, now=store.now()) is not None


def test_a_disabled_user_is_refused_everywhere_until_enabled(store: Store) -> None:
    conversation = store.create_conversation("ana")
    asked = store.ask(Question("ana", conversation.id, "confirm", "Ship?")).interaction
    secret, _ = _token(store, "ana")
    with store.transaction() as tx:
        now = store.now()
        cookie, _ = create_login(tx, "ana", ttl=DAY, now=now)
        link = create_signin_link(tx, "ana", ttl=DAY, now=now)
        answer = answer_links.create(tx, asked.id, "ana", now=now, expires_at=None)
        assert set_user_disabled(tx, "ana", True, now=now) is True
        assert set_user_disabled(tx, "ana", True, now=now) is False  # already
    user, refusal, _ = _check(store, secret)
    assert user is None and refusal == "the user ana is disabled"
    with store.transaction() as tx:
        assert login_for(tx, cookie, now=store.now()) is None
        assert redeem_signin(tx, link, now=store.now()) is None
        assert not answer_links.spend(tx, answer, store.now())
        with pytest.raises(NotFound):
            set_user_disabled(tx, "nobody", True, now=store.now())
        assert set_user_disabled(tx, "ana", False, now=store.now()) is True
    # Enabled again: the tokens work; the sessions and answer links ended for good.
    assert _check(store, secret)[0] == "ana"
    with store.transaction(write=False) as tx:
        assert login_for(tx, cookie, now=store.now()) is None


# -- tokens and logins made before tokens ended ------------------------------------------------

BEFORE = (
    next(m.version for m in migrations.migrations_for("sqlite") if m.name == "tokens_that_end") - 1
)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def old_url(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """A database migrated only to the version before tokens ended."""
    every = migrations.migrations_for

    def older(dialect: str) -> list[migrations.Migration]:
        return every(dialect)[:BEFORE]

    def make(url: str) -> str:
        with monkeypatch.context() as patch:
            patch.setattr(migrations, "migrations_for", older)
            open_store(url, clock=FakeClock()).close()
        return url

    if request.param == "sqlite":
        yield make(f"sqlite:///{tmp_path / 'old.db'}")
    else:
        require_postgres()
        with throwaway_postgres() as url:
            yield make(url)


def test_tokens_and_logins_made_before_keep_working_with_ids_and_no_expiry(
    old_url: str,
) -> None:
    secret = "pf_made-before-tokens-ended"
    with (
        open_store(old_url, migrate=False, clock=FakeClock()) as old,
        old.db.transaction() as tx,
    ):
        # As the code before 0024 wrote a user (ensure_user writes the newest columns).
        sql(tx).execute("INSERT INTO users (id, created_at) VALUES ('ana', 0)")
        sql(tx).execute(
            "INSERT INTO api_tokens (token_hash, user_id, label, created_at)"
            " VALUES (?, 'ana', 'laptop', 0)",
            (digest(secret),),
        )
        sql(tx).execute(
            "INSERT INTO web_sessions (session_hash, user_id, csrf_token, created_at,"
            " expires_at) VALUES (?, 'ana', 'csrf', ?, ?)",
            (digest("cookie"), to_millis(old.now()), to_millis(old.now() + DAY)),
        )
    with open_store(old_url, clock=FakeClock()) as store:
        user, _, _ = _check(store, secret)
        assert user == "ana"
        with store.transaction(write=False) as tx:
            (row,) = list_tokens(Unit(tx, store.now), "ana")
            assert login_for(tx, "cookie", now=store.now(), idle=DAY) is not None
        assert row.id == "tok_" + digest(secret)[:16]
        assert (row.name, row.expires_at, row.last_used_at) == ("laptop", None, None)
        with store.transaction() as tx:
            assert revoke_token(Unit(tx, store.now), row.id) is not None
        assert _check(store, secret)[0] is None

"""Signing in through the provider: the whole trip, new users, groups, roles, refusals, and
every way a bad answer is refused (logged without the token)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from pawflow.clock import FakeClock
from pawflow.server.credentials import issue_signin_link, issue_token
from pawflow.server.oidc import JWKS_REFRESH_GAP
from pawflow.store.people import credentials, groups, roles, sign_in
from tests.oidc.conftest import PEOPLE, App, Person, Provider, query_of
from tests.oidc.conftest import sign_in as trip


def test_a_person_signs_in_and_is_made_a_user_with_her_groups(make_app: Any) -> None:
    app: App = make_app()
    came_back = trip(app, "ann")
    assert came_back.status_code == 303, came_back.text
    assert came_back.headers["location"] == "/"
    session = app.http.get("/api/session").json()
    assert session["user"] == "ann@example.org"
    assert session["role"] == "admin"
    with app.store.transaction(write=False) as tx:
        found = roles.user(tx, "ann@example.org")
        # The first user of a store is its admin (and the provider's admin group says so too).
        assert found is not None and found.role == "admin"
        assert found.email == "ann@example.org"
        assert sorted(sign_in.provider_groups(tx)) == ["approvers", "pawflow-admins"]
        assert groups.groups_of(tx, "ann@example.org") == ["approvers", "pawflow-admins"]


def test_the_groups_claim_keeps_groups_and_the_admin_role_in_step(
    make_app: Any, idp: Provider
) -> None:
    app: App = make_app()
    issue_token(app.store, "root")  # the first user, the store's admin
    assert trip(app, "bob").status_code == 303
    assert app.http.get("/api/session").json()["role"] == "member"
    # The provider moves bob: out of finance, into approvers and the admin group.
    idp.people({**PEOPLE, "bob": {**PEOPLE["bob"], "groups": ["approvers", "pawflow-admins"]}})
    assert trip(app, "bob").status_code == 303
    with app.store.transaction(write=False) as tx:
        assert groups.groups_of(tx, "bob@example.org") == ["approvers", "pawflow-admins"]
        assert groups.members(tx, "finance") == []
        assert roles.role_of(tx, "bob@example.org") == "admin"
    idp.people()
    assert trip(app, "bob").status_code == 303
    with app.store.transaction(write=False) as tx:
        assert groups.groups_of(tx, "bob@example.org") == ["finance"]
        assert roles.role_of(tx, "bob@example.org") == "member"
        # The provider's groups are not edited by hand.
        with pytest.raises(Exception, match="kept by the identity provider"):
            groups.add_members(tx, "finance", ["someone"], app.store.now())
    trail = app.http.get("/api/admin/audit")
    assert trail.status_code == 403  # bob is no admin now


def test_someone_outside_the_allowed_domains_and_groups_is_refused_with_a_reason(
    make_app: Any,
) -> None:
    app: App = make_app(oidc_allowed_groups=("approvers",))
    refused = trip(app, "eve")
    assert refused.status_code == 403
    assert "eve@elsewhere.test" in refused.text
    assert "PAWFLOW_OIDC_ALLOWED_DOMAINS" in refused.text
    assert app.http.get("/api/session").status_code == 401
    with app.store.transaction(write=False) as tx:
        assert roles.user(tx, "eve@elsewhere.test") is None


def test_a_person_removed_from_the_allowed_group_loses_access_at_the_next_sign_in(
    make_app: Any, idp: Provider
) -> None:
    app: App = make_app(oidc_allowed_domains=(), oidc_allowed_groups=("finance",))
    assert trip(app, "bob").status_code == 303
    idp.people({**PEOPLE, "bob": {**PEOPLE["bob"], "groups": []}})
    assert trip(app, "bob").status_code == 403


def test_without_allowed_domains_or_groups_only_existing_users_sign_in(make_app: Any) -> None:
    app: App = make_app(oidc_allowed_domains=(), oidc_admin_group=None)
    refused = trip(app, "bob")
    assert refused.status_code == 403 and "Ask an admin to add you" in refused.text
    issue_token(app.store, "bob@example.org")  # an admin adds bob
    assert trip(app, "bob").status_code == 303


def test_a_disabled_user_is_refused_by_the_provider_sign_in_with_a_reason(make_app: Any) -> None:
    app: App = make_app()
    issue_token(app.store, "root")  # the first user, the store's admin
    assert trip(app, "bob").status_code == 303
    with app.store.transaction() as tx:
        credentials.set_disabled(tx, "bob@example.org", True, now=app.store.now())
    app.http.cookies.clear()
    refused = trip(app, "bob")
    assert refused.status_code == 403
    assert "is disabled here" in refused.text and "Ask an admin" in refused.text
    assert app.http.get("/api/session").status_code == 401
    with app.store.transaction() as tx:
        credentials.set_disabled(tx, "bob@example.org", False, now=app.store.now())
    assert trip(app, "bob").status_code == 303


def test_signing_keys_that_rotate_are_followed(make_app: Any, idp: Provider) -> None:
    clock = FakeClock(datetime.now(UTC))
    app: App = make_app(clock=clock)
    assert trip(app, "ann").status_code == 303
    idp.rotate()  # the next ID token is signed by a key the app has not fetched yet
    # A key it does not know is looked for again, but not more often than every few seconds
    # (a forged key id must not make each sign-in fetch the keys).
    clock.advance(timedelta(seconds=JWKS_REFRESH_GAP))
    assert trip(app, "bob").status_code == 303
    assert app.http.get("/api/session").json()["user"] == "bob@example.org"


TAMPERED = [
    pytest.param({"forge": True}, "signature", id="forged"),
    pytest.param({"exp": 1_000_000_000, "iat": 999_999_000}, "expired", id="expired"),
    pytest.param({"aud": "someone-else"}, "aud", id="wrong-audience"),
    pytest.param({"iss": "http://127.0.0.1:1"}, "iss", id="wrong-issuer"),
    pytest.param({"nonce": "not-the-one-sent"}, "nonce", id="mismatched-nonce"),
]


@pytest.mark.parametrize(("tamper", "said"), TAMPERED)
def test_a_bad_id_token_is_refused_and_logged_without_the_token(
    make_app: Any, idp: Provider, caplog: pytest.LogCaptureFixture, tamper: Any, said: str
) -> None:
    app: App = make_app()
    idp.tamper(**tamper)
    with caplog.at_level(logging.INFO):
        refused = trip(app, "ann")
    assert refused.status_code == 403, refused.text
    assert said in refused.text
    assert app.http.get("/api/session").status_code == 401
    logged = "\n".join(
        record.getMessage() for record in caplog.records if record.name.startswith("pawflow")
    )
    assert "refused" in logged
    assert "eyJ" not in logged and "code=" not in logged


def test_a_replayed_callback_is_refused(make_app: Any) -> None:
    app: App = make_app()
    started = app.http.get("/signin/oidc", follow_redirects=False)
    person = Person("ann")
    back = person.authorize(started.headers["location"]).removeprefix("http://testserver")
    person.close()
    assert app.http.get(back, follow_redirects=False).status_code == 303
    again = app.http.get(back, follow_redirects=False)  # same state, same code
    assert again.status_code == 403 and "over already" in again.text
    # Even with the state's cookie put back, the stored state is used up.
    app.http.cookies.set("pawflow_oidc_state", query_of(back)["state"], path="/signin/oidc")
    again = app.http.get(back, follow_redirects=False)
    assert again.status_code == 403 and "used up" in again.text


def test_a_replayed_code_is_refused_even_with_a_fresh_state(make_app: Any) -> None:
    app: App = make_app()
    started = app.http.get("/signin/oidc", follow_redirects=False)
    person = Person("ann")
    back = person.authorize(started.headers["location"]).removeprefix("http://testserver")
    person.close()
    assert app.http.get(back, follow_redirects=False).status_code == 303
    app.http.cookies.clear()
    # A new sign-in in this browser, answered with the code already used.
    fresh = query_of(app.http.get("/signin/oidc", follow_redirects=False).headers["location"])
    used = query_of(back)["code"]
    refused = app.http.get(
        f"/signin/oidc/callback?code={used}&state={fresh['state']}", follow_redirects=False
    )
    assert refused.status_code == 403 and "invalid_grant" in refused.text
    assert app.http.get("/api/session").status_code == 401


def test_an_answer_naming_another_provider_is_refused(make_app: Any) -> None:
    app: App = make_app()
    started = app.http.get("/signin/oidc", follow_redirects=False)
    person = Person("ann")
    back = person.authorize(started.headers["location"]).removeprefix("http://testserver")
    person.close()
    assert "iss=" in back  # the provider names itself (RFC 9207)
    mixed = back.split("&iss=")[0] + "&iss=https%3A%2F%2Fevil.example"
    refused = app.http.get(mixed, follow_redirects=False)
    assert refused.status_code == 403 and "another identity provider" in refused.text


def test_a_callback_from_another_browser_is_refused(make_app: Any) -> None:
    app: App = make_app()
    started = app.http.get("/signin/oidc", follow_redirects=False)
    person = Person("ann")
    back = person.authorize(started.headers["location"]).removeprefix("http://testserver")
    person.close()
    app.http.cookies.clear()  # the callback arrives in a browser that did not start it
    refused = app.http.get(back, follow_redirects=False)
    assert refused.status_code == 403 and "not started in this browser" in refused.text
    assert set(query_of(back)) >= {"code", "state"}


def test_a_provider_that_is_down_is_named_and_links_and_tokens_still_work(
    make_app: Any, idp: Provider
) -> None:
    app: App = make_app()
    idp.down()
    page = app.http.get("/signin/oidc", follow_redirects=False)
    assert page.status_code == 503
    assert "The identity provider answered 503" in page.text
    assert "PAWFLOW_OIDC_ISSUER" in page.text
    token = issue_token(app.store, "carol")
    assert (
        app.http.get("/api/session", headers={"Authorization": f"Bearer {token}"}).json()["user"]
        == "carol"
    )
    link = issue_signin_link(app.store, "carol", base_url="http://testserver", ttl=_DAY)
    form = app.http.get(link.removeprefix("http://testserver"))
    assert form.status_code == 200 and "Sign in as" in form.text
    assert "Sign in with Example ID" in app.http.get("/signin").text


@pytest.mark.parametrize(
    ("settings", "status", "setting"),
    [
        pytest.param({"oidc_client_id": ""}, 503, "PAWFLOW_OIDC_CLIENT_ID", id="no-client-id"),
        pytest.param(
            {"oidc_client_secret": "wrong"}, 503, "PAWFLOW_OIDC_CLIENT_SECRET", id="bad-secret"
        ),
        pytest.param(
            {"oidc_issuer": "http://127.0.0.1:9"}, 503, "PAWFLOW_OIDC_ISSUER", id="nobody"
        ),
    ],
)
def test_a_misconfigured_provider_is_a_page_naming_the_setting(
    make_app: Any, settings: dict[str, Any], status: int, setting: str
) -> None:
    app: App = make_app(**settings)
    if "oidc_client_secret" in settings:  # found out at the token exchange
        answer = trip(app, "ann")
    else:
        answer = app.http.get("/signin/oidc", follow_redirects=False)
    assert answer.status_code == status, answer.text
    assert setting in answer.text


def test_link_sign_in_can_be_turned_off_by_an_admin(make_app: Any) -> None:
    app: App = make_app()
    link = issue_signin_link(app.store, "carol", base_url="http://testserver", ttl=_DAY)
    assert trip(app, "ann").status_code == 303  # ann: the provider's admin group
    csrf = app.http.get("/api/session").json()["csrf_token"]
    turned = app.http.post(
        "/api/admin/options",
        json={"link_signin": False},
        headers={"X-CSRF-Token": csrf, "Origin": "http://testserver"},
    )
    assert turned.status_code == 200, turned.text
    app.http.cookies.clear()
    refused = app.http.get(link.removeprefix("http://testserver"))
    assert refused.status_code == 403 and "turned off" in refused.text
    assert "Sign in with Example ID" in refused.text
    with app.store.transaction(write=False) as tx:
        [entry] = list(roles.trail(tx, roles.AuditFilter(action="options.link_signin")))
    assert entry["actor"] == "ann@example.org" and entry["detail"]["via"] == "web"


def test_signing_out_ends_the_providers_session_too(make_app: Any, idp: Provider) -> None:
    app: App = make_app()
    assert trip(app, "ann").status_code == 303
    csrf = app.http.get("/api/session").json()["csrf_token"]
    out = app.http.post("/signout", headers={"X-CSRF-Token": csrf, "Origin": "http://testserver"})
    assert out.status_code == 204
    away = app.http.get("/signin/oidc/logout", follow_redirects=False)
    assert away.status_code == 303
    assert away.headers["location"].startswith(f"{idp.issuer}/session/end?client_id=pawflow")
    assert app.http.get("/api/session").status_code == 401


_DAY = timedelta(days=1)

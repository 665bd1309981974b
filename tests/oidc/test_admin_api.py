"""The admins' API: every action for an admin, audited (who, what, when, from where); a 403
for a member on each, before anything changes; the audit trail's filters and exports."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from pawflow.server.app import create_app
from pawflow.server.credentials import issue_token
from pawflow.server.settings import ServerSettings
from pawflow.store.people import roles
from pawflow.store.reach import webhooks
from pawflow.testing import temporary_store

CHANGES: list[tuple[str, dict[str, Any]]] = [
    ("/api/admin/users/add", {"name": "dora"}),
    ("/api/admin/users/role", {"name": "dora", "role": "admin"}),
    ("/api/admin/users/revoke_tokens", {"name": "dora"}),
    ("/api/admin/users/disable", {"name": "dora"}),
    ("/api/admin/users/enable", {"name": "dora"}),
    ("/api/admin/groups/add", {"name": "finance", "users": ["dora"]}),
    ("/api/admin/groups/remove", {"name": "finance", "users": ["dora"]}),
    (
        "/api/admin/delegations/add",
        {"principal": "dora", "to": "root", "until": "2099-01-01T00:00:00Z"},
    ),
    ("/api/admin/delegations/revoke", {"principal": "dora", "to": "root"}),
    ("/api/admin/tokens/revoke", {"id": "TOKEN"}),
    ("/api/admin/webhooks/remove", {"id": "WEBHOOK"}),
    ("/api/admin/options", {"link_signin": False}),
]


@pytest.fixture
def served(tmp_path: Path) -> Any:
    with temporary_store("sqlite", tmp_path) as store:
        settings = ServerSettings(sweep_interval=3600, egress_allowed_hosts="127.0.0.1")
        with TestClient(create_app(store, settings=settings)) as http:
            yield store, http


def test_an_admin_runs_every_action_and_each_is_audited(served: Any) -> None:
    store, http = served
    root = {"Authorization": f"Bearer {issue_token(store, 'root')}", "User-Agent": "tests/1"}
    issue_token(store, "erin")
    with store.transaction() as tx:
        hook = webhooks.create(tx, "erin", "http://127.0.0.1:9/h", ("created",), store.now())
    listed = http.get("/api/admin/overview", headers=root).json()
    [token] = [t for t in listed["tokens"] if t["owner"] == "erin"]
    for path, body in CHANGES:
        ids = {"TOKEN": token["id"], "WEBHOOK": hook.id}
        body = {k: ids.get(v, v) if isinstance(v, str) else v for k, v in body.items()}
        done = http.post(path, json=body, headers=root)
        assert done.status_code == 200, (path, done.text)
    after = http.get("/api/admin/overview", headers=root).json()
    assert {u["id"]: u["role"] for u in after["users"]}["dora"] == "admin"
    assert [t for t in after["tokens"] if t["owner"] == "erin"] == []
    assert after["webhooks"] == [] and after["options"] == {"link_signin": False}
    with store.transaction(write=False) as tx:
        trail = list(roles.trail(tx, roles.AuditFilter(actor="root")))
    assert [e["action"] for e in trail] == [
        "user.add",
        "user.role",
        "user.revoke_tokens",
        "user.disable",
        "user.enable",
        "group.add",
        "group.remove",
        "delegation.add",
        "delegation.revoke",
        "token.revoke",
        "webhook.remove",
        "options.link_signin",
    ]
    assert all(e["address"] == "testclient" and e["user_agent"] == "tests/1" for e in trail)
    assert trail[0]["target"] == "dora" and trail[0]["detail"]["via"] == "api"


def test_a_member_gets_403_on_every_admin_action_and_nothing_changes(served: Any) -> None:
    store, http = served
    issue_token(store, "root")  # the first user: the admin
    member = {"Authorization": f"Bearer {issue_token(store, 'mel')}"}
    assert http.get("/api/session", headers=member).json()["role"] == "member"
    for path, body in [*CHANGES, ("/api/admin/approval_rules/revoke", {"id": "x"})]:
        assert http.post(path, json=body, headers=member).status_code == 403, path
    for path in ("/api/admin/overview", "/api/admin/audit", "/api/admin/audit?format=csv"):
        assert http.get(path, headers=member).status_code == 403, path
    assert http.post("/api/actions/list_groups", json={}, headers=member).status_code == 403
    with store.transaction(write=False) as tx:
        assert roles.user(tx, "dora") is None
        assert list(roles.trail(tx, roles.AuditFilter())) == []


def test_the_audit_trail_is_filtered_and_exported_as_json_lines_and_csv(served: Any) -> None:
    store, http = served
    root = {"Authorization": f"Bearer {issue_token(store, 'root')}"}
    for name in ("ava", "ben"):
        assert http.post("/api/admin/users/add", json={"name": name}, headers=root).is_success
    http.post("/api/admin/users/role", json={"name": "ben", "role": "admin"}, headers=root)
    found = http.get("/api/admin/audit?user=ben", headers=root).json()["entries"]
    assert [(e["action"], e["target"]) for e in found] == [
        ("user.add", "ben"),
        ("user.role", "ben"),
    ]
    picked = http.get("/api/admin/audit?action=user.role", headers=root).json()["entries"]
    assert [e["target"] for e in picked] == ["ben"]
    late = http.get("/api/admin/audit?since=2999-01-01T00:00:00Z", headers=root).json()
    assert late["entries"] == []
    bad = http.get("/api/admin/audit?since=yesterday", headers=root)
    assert bad.status_code in (400, 422) and "since" in bad.text
    lines = http.get("/api/admin/audit?format=jsonl&user=ava", headers=root)
    assert lines.headers["content-type"].startswith("application/x-ndjson")
    assert [json.loads(line)["target"] for line in lines.text.splitlines()] == ["ava"]
    table = http.get("/api/admin/audit?format=csv&action=user.add", headers=root)
    rows = list(csv.DictReader(io.StringIO(table.text)))
    assert [(r["actor"], r["action"], r["target"]) for r in rows] == [
        ("root", "user.add", "ava"),
        ("root", "user.add", "ben"),
    ]
    # Exporting is itself an admin action on the trail.
    exported = http.get("/api/admin/audit?action=audit.export", headers=root).json()
    assert [e["detail"]["format"] for e in exported["entries"]] == ["jsonl", "csv"]


def test_the_last_admin_cannot_be_made_a_member(served: Any) -> None:
    store, http = served
    root = {"Authorization": f"Bearer {issue_token(store, 'root')}"}
    refused = http.post(
        "/api/admin/users/role", json={"name": "root", "role": "member"}, headers=root
    )
    assert refused.status_code == 409 and "last admin" in refused.text


def test_pawflow_users_add_admin_makes_an_admin_and_says_so_in_the_trail(tmp_path: Path) -> None:
    from typer.testing import CliRunner  # noqa: PLC0415

    from pawflow.cli import app  # noqa: PLC0415
    from pawflow.store import open_store  # noqa: PLC0415

    db = f"sqlite:///{tmp_path / 'p.db'}"
    for args in (["users", "add", "first"], ["users", "add", "gus", "--admin"]):
        result = CliRunner().invoke(app, [*args, "--db", db])
        assert result.exit_code == 0, result.output
    assert "gus is an admin." in result.output
    with open_store(db) as store, store.transaction(write=False) as tx:
        assert roles.admins(tx) == ["first", "gus"]
        [entry] = list(roles.trail(tx, roles.AuditFilter(target="gus")))
        assert (entry["actor"], entry["action"], entry["detail"]["via"]) == (
            "cli",
            "user.role",
            "cli",
        )


def test_the_actions_on_groups_and_others_delegations_are_audited_too(served: Any) -> None:
    store, http = served
    root = {"Authorization": f"Bearer {issue_token(store, 'root')}"}
    issue_token(store, "hal")
    for action, body in (
        ("add_to_group", {"name": "ops", "users": ["hal"]}),
        ("remove_from_group", {"name": "ops", "users": ["hal"]}),
        ("delegate", {"principal": "hal", "to": "root", "until": "2099-01-01T00:00:00Z"}),
    ):
        assert http.post(f"/api/actions/{action}", json=body, headers=root).status_code == 200
    with store.transaction(write=False) as tx:
        trail = list(roles.trail(tx, roles.AuditFilter(actor="root")))
    assert [(e["action"], e["target"]) for e in trail] == [
        ("group.add", "group:ops"),
        ("group.remove", "group:ops"),
        ("delegation.add", "hal"),
    ]


def test_the_audit_trail_carries_each_requests_steps_filtered_by_request(served: Any) -> None:
    store, http = served
    root = {"Authorization": f"Bearer {issue_token(store, 'root')}"}
    made = http.post("/api/actions/create_conversation", json={"title": "t"}, headers=root)
    conversation = made.json()["conversation"]["id"]
    ids = []
    for message in ("First?", "Second?"):
        asked = http.post(
            "/api/actions/request_interaction",
            json={"conversation_id": conversation, "kind": "confirm", "message": message},
            headers=root,
        )
        ids.append(asked.json()["interaction"]["id"])
    found = http.get(f"/api/admin/audit?request={ids[1]}", headers=root).json()["entries"]
    assert [(e["kind"], e["action"], e["target"]) for e in found] == [
        ("request", "created", ids[1])
    ]
    everything = http.get("/api/admin/audit?action=created", headers=root).json()["entries"]
    assert [e["target"] for e in everything] == ids

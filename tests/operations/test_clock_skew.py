"""Two servers on one PostgreSQL database, one with a clock two minutes ahead.

The fast one says so — a warning in its log, ``/healthz``, ``/metrics`` — and keeps the
database's time instead of its own: it takes no lease the other still holds (the two share
the deployments), the deadlines of its leases are the database's time plus their time to
live, its sweeper expires a request asked through the other with ``expires_in: 90s`` no
earlier than that, a request asked through it expires 90 s after the database's now, and
once it is killed its deployment moves back within a few times to live.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from pawflow import Store, open_store
from pawflow.flow import deployments as deps
from pawflow.server.credentials import issue_token
from pawflow.store.engine.database import sql
from pawflow.testing import eventually, throwaway_postgres
from tests.conftest import require_postgres
from tests.served import Served

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.timeout(240)]

FIXTURE = Path(__file__).parent.parent / "fixtures" / "skewed_serve.py"
AHEAD = 120
TTL = 4
SETTINGS = {
    "PAWFLOW_LEASE_TTL": str(TTL),
    "PAWFLOW_MAX_CLOCK_SKEW": "1",
    "PAWFLOW_LOG_LEVEL": "info",
    "PAWFLOW_METRICS": "on",
}
FLOW = """
name: quiet-{n}
tasks:
  tell:
    type: notifyUser
    properties: {{message: "{n}"}}
"""


def holders(store: Store, prefix: str) -> dict[str, str]:
    with store.unit(write=False) as u:
        return {lease.name: lease.owner for lease in u.leases.held(prefix)}


def ask(served: Served, token: str, conversation: str, expires_in: str) -> str:
    response = httpx.post(
        f"{served.url}/api/actions/request_interaction",
        json={
            "conversation_id": conversation,
            "kind": "confirm",
            "message": f"Within {expires_in}?",
            "expires_in": expires_in,
        },
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    request_id: str = response.json()["interaction"]["id"]
    return request_id


def database_rows(store: Store, query: str) -> list[dict[str, Any]]:
    with store.transaction(write=False) as tx:
        return sql(tx).all(query)


def test_a_server_whose_clock_is_ahead_says_so_and_keeps_the_databases_time(
    tmp_path: Path,
) -> None:
    require_postgres()
    with throwaway_postgres() as url, open_store(url) as store:
        token = issue_token(store, "alice")
        conversation = store.create_conversation("alice", "Clocks").id
        for n in range(2):
            deps.deploy(store, FLOW.format(n=n), conversation_id=conversation)
        right = Served(url, tmp_path, env={**SETTINGS, "PAWFLOW_SWEEP_INTERVAL": "3600"})
        fast = Served(
            url,
            tmp_path,
            env={**SETTINGS, "PAWFLOW_SWEEP_INTERVAL": "0.2"},
            program=(str(FIXTURE), str(AHEAD)),
        )
        try:
            right.start()
            assert right.process is not None
            mine = f":{right.process.pid}:"
            eventually(lambda: len(holders(store, "flow:")) == 2, timeout=60)
            assert all(mine in owner for owner in holders(store, "flow:").values())
            outbox = holders(store, "channels:")
            assert mine in outbox["channels:outbox"]
            fast.start()
            assert fast.process is not None
            theirs = f":{fast.process.pid}:"

            # Told: in its log, on /healthz, in /metrics; the other's clock is right.
            health = httpx.get(f"{fast.url}/healthz", timeout=10).json()
            assert health["clock"]["status"] == "skewed"
            assert AHEAD - 5 < health["clock"]["offset_seconds"] < AHEAD + 5
            assert "ahead of the database's" in health["clock"]["detail"]
            assert httpx.get(f"{right.url}/healthz", timeout=10).json()["clock"]["status"] == "ok"
            assert any("PAWFLOW_MAX_CLOCK_SKEW" in line for line in fast.output)
            metrics = httpx.get(f"{fast.url}/metrics", timeout=10).text
            offset = next(
                float(line.split()[-1])
                for line in metrics.splitlines()
                if line.startswith("pawflow_clock_offset_seconds ")
            )
            assert AHEAD - 5 < offset < AHEAD + 5
            assert "pawflow_clock_skewed 1.0" in metrics

            # It takes only what the other gives up: one deployment each, and the outbox
            # stays where it was; its leases end a time to live after the database's now.
            def shared() -> bool:
                owners = list(holders(store, "flow:").values())
                return sorted(theirs in o for o in owners) == [False, True]

            eventually(shared, timeout=60)
            assert holders(store, "channels:") == outbox
            leases = database_rows(
                store,
                "SELECT owner, expires_at,"
                " CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) AS now"
                " FROM leases",
            )
            ahead = [row for row in leases if theirs in row["owner"]]
            assert ahead
            assert all(row["expires_at"] - row["now"] <= (TTL + 2) * 1000 for row in ahead)

            # Its sweeper expires what is due by the database's clock, and nothing sooner.
            soon = ask(right, token, conversation, "1s")
            later = ask(right, token, conversation, "90s")
            eventually(
                lambda: store.get_interaction(soon, user="alice").status == "expired", timeout=60
            )
            assert store.get_interaction(later, user="alice").status == "pending"
            through_fast = store.get_interaction(
                ask(fast, token, conversation, "90s"), user="alice"
            )
            expires_at = through_fast.expires_at
            assert expires_at is not None
            assert abs(expires_at - (store.now() + timedelta(seconds=90))) < timedelta(seconds=5)

            # Killed: its deployment moves back within a few times to live.
            fast.kill()
            eventually(
                lambda: (
                    all(mine in o for o in holders(store, "flow:").values())
                    and len(holders(store, "flow:")) == 2
                ),
                timeout=8 * TTL,
                interval=0.1,
            )
        finally:
            fast.kill()
            right.kill()

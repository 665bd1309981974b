"""Three ``pawflow serve`` processes on one PostgreSQL database: the agents are spread over
them, and when the owner of one is killed its agent moves within 15 s and its queued turns
and parked questions complete, each exactly once."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest

from pawflow.server.credentials import issue_token
from pawflow.store import Store, open_store
from pawflow.store.engine.database import sql
from pawflow.store.runtime.leases import Lease
from pawflow.testing import eventually, throwaway_postgres
from tests.chat.processes import agents_file, gated_model, post, serving
from tests.conftest import require_postgres

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.timeout(150)]

USER = "alice"
AGENTS = ["a1", "a2", "a3", "a4", "a5"]  # besides the demo's agents


def agent_leases(store: Store) -> dict[str, Lease]:
    with store.unit(write=False) as u:
        return {lease.name.removeprefix("agent:"): lease for lease in u.leases.held("agent:")}


def assistant_replies(store: Store, conversation_id: str) -> list[str]:
    with store.unit(write=False) as u:
        return [
            m.content
            for m in u.messages.history(conversation_id, user=USER)
            if m.role == "assistant"
        ]


def test_agents_spread_and_move_when_their_process_dies(tmp_path: Path) -> None:
    require_postgres()
    with throwaway_postgres() as db, gated_model() as model, open_store(db) as store:
        token = issue_token(store, USER)
        agents = agents_file(tmp_path, model, AGENTS)
        with serving(db, agents, tmp_path / "serve.log", count=3) as servers:
            pids = {served.process.pid: served for served in servers}

            def spread() -> dict[str, Lease] | None:
                leases = agent_leases(store)
                per_owner = Counter(lease.owner for lease in leases.values())
                counts = sorted(per_owner.values())
                everyone = set(AGENTS) <= set(leases) and len(counts) == 3
                fair = everyone and counts[-1] - counts[0] <= 1
                return leases if fair else None

            leases = eventually(spread, timeout=40, interval=0.2)
            victim = next(name for name in AGENTS if name in leases)
            owner = leases[victim].owner
            doomed = pids[int(owner.rsplit("-", 2)[1])]
            survivor = next(served for served in servers if served is not doomed)

            conversations = []
            for number in range(3):
                conversation = store.create_conversation(USER, f"c{number}").id
                with store.unit() as u:
                    u.turns.assign_agent(conversation, victim)
                conversations.append(conversation)
            # A question the victim asks, parked before the kill, answered after it.
            model.gate.set()
            parked = conversations[0]
            post(survivor, token, "send_message", conversation_id=parked, content="ask first")
            [question] = eventually(
                lambda: store.list_interactions(user=USER, status="pending"),
                timeout=30,
                interval=0.1,
            )
            model.gate.clear()
            # Two messages per conversation: one in the model call, one queued behind it.
            for conversation in conversations:
                for text in ("one", "two"):
                    post(
                        survivor, token, "send_message", conversation_id=conversation, content=text
                    )
            eventually(lambda: model.waiting >= 3, timeout=30)

            doomed.kill()
            killed = time.monotonic()
            model.gate.set()
            post(survivor, token, "respond_interaction", request_id=question.id, answer=True)

            def moved() -> str | None:
                lease = agent_leases(store).get(victim)
                return lease.owner if lease is not None and lease.owner != owner else None

            new_owner = eventually(moved, timeout=20, interval=0.2)
            assert time.monotonic() - killed < 15
            assert new_owner != owner

            def finished() -> bool:
                return all(
                    len(assistant_replies(store, c)) == (4 if c == parked else 2)
                    for c in conversations
                )

            eventually(finished, timeout=30, interval=0.2)
            # The two survivors now share every agent.
            eventually(
                lambda: len({lease.owner for lease in agent_leases(store).values()}) == 2,
                interval=0.1,
            )

        for conversation in conversations:
            replies = assistant_replies(store, conversation)
            echoes = [r for r in replies if r.startswith("echo: user:")]
            assert echoes == ["echo: user: one", "echo: user: two"], replies
        asked = [r for r in assistant_replies(store, parked) if "I've asked: Proceed?" in r]
        woken = [r for r in assistant_replies(store, parked) if '"status": "answered"' in r]
        assert len(asked) == 1 and len(woken) == 1 and "true" in woken[0]
        with store.transaction(write=False) as tx:
            rows = sql(tx).all("SELECT status, count(*) AS n FROM chat_turns GROUP BY status")
        assert {row["status"]: row["n"] for row in rows} == {"done": 8}

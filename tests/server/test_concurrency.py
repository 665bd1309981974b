"""Concurrent answers over HTTP: exactly one wins, the others learn what happened."""

from __future__ import annotations

import threading
from collections import Counter

import httpx

from pawflow.server.testing import LiveServer
from pawflow.store.engine.database import sql
from tests.server.conftest import Api, unique

ANSWERERS = 16


def test_sixteen_concurrent_answers_one_wins(live: LiveServer) -> None:
    owner = Api(live, unique("owner"))
    asked = owner.ask(owner.conversation(), "choice", options=[str(i) for i in range(ANSWERERS)])
    token = live.token(owner.user)
    clients = [
        httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
        for _ in range(ANSWERERS)
    ]
    start = threading.Barrier(ANSWERERS)
    results: list[httpx.Response] = []
    lock = threading.Lock()

    def answer(index: int) -> None:
        body = {"request_id": asked["id"], "answer": str(index)}
        start.wait()
        response = clients[index].post("/api/actions/respond_interaction", json=body)
        with lock:
            results.append(response)

    threads = [threading.Thread(target=answer, args=(i,)) for i in range(ANSWERERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for client in clients:
        client.close()
    assert Counter(r.status_code for r in results) == {200: 1, 409: ANSWERERS - 1}
    winner = next(r for r in results if r.status_code == 200).json()["interaction"]
    for loser in (r for r in results if r.status_code == 409):
        assert loser.json() == {
            "error": "interaction is no longer pending: it is answered",
            "status": "answered",
        }
    stored = owner.ok("get_interaction", request_id=asked["id"])["interaction"]
    assert stored["answer"] == winner["answer"]
    with live.store.transaction(write=False) as tx:
        fired = sql(tx).one(
            "SELECT fire_count FROM signals WHERE signal_id = ?", (asked["signal_id"],)
        )
    assert fired is not None and fired["fire_count"] == 1  # the requester resumes once
    owner.close()

"""What the store tells ``/metrics``: gauges of the waiting work read in one statement, kept
a few seconds; counters of outcomes counted once their transaction commits."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pawflow import telemetry
from pawflow.clock import FakeClock
from pawflow.errors import InvalidInput
from pawflow.store import Delivery, Question, Store
from pawflow.store.engine.database import sql
from pawflow.store.engine.metrics import QUERIES, GaugeQuery, StoreGauges, add_gauges, read
from pawflow.store.reach import addresses, outbox
from pawflow.telemetry import Family, Sample


def values(samples: list[Sample], name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {
        tuple(sorted(sample.labels.items())): sample.value
        for sample in samples
        if sample.name == name
    }


def nonzero(samples: list[Sample], name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {labels: value for labels, value in values(samples, name).items() if value}


def test_gauges_count_the_waiting_work_by_kind_age_and_deadline(
    store: Store, clock: FakeClock
) -> None:
    conversation = store.create_conversation("ada").id
    old = store.ask(Question("ada", conversation, "confirm", "Old?")).interaction
    clock.advance("2h")
    store.ask(Question("ada", conversation, "text", "Name?", expires_in="10m"))
    store.ask(Question("ada", conversation, "text", "Other?"))
    done = store.ask(Question("ada", conversation, "text", "Done?")).interaction
    store.respond_interaction(done.id, "yes", user="ada")
    clock.advance("30m")  # "Name?" is past its deadline; no sweep has expired it yet
    store.park("job:1", signal_id="sig:1")
    store.notify_signal("sig:1")  # resolved, and no handler here: it waits for delivery
    with store.unit() as u:
        u.leases.acquire("flow:d1", "host:1:abc", timedelta(seconds=30))
    store.post_message(conversation, "hello", user="ada")  # queues a turn

    samples = StoreGauges(store).samples()

    assert nonzero(samples, "pawflow_requests_pending") == {
        (("kind", "confirm"),): 1,
        (("kind", "text"),): 2,
    }
    assert values(samples, "pawflow_requests_pending")[(("kind", "form"),)] == 0  # every kind
    oldest = values(samples, "pawflow_requests_oldest_pending_age_seconds")
    assert oldest[(("kind", "confirm"),)] == pytest.approx(9000)
    assert oldest[(("kind", "text"),)] == pytest.approx(1800)
    assert nonzero(samples, "pawflow_requests_overdue") == {(("kind", "text"),): 1}
    buckets = values(samples, "pawflow_requests_pending_age_seconds_bucket")
    assert buckets[(("kind", "text"), ("le", "900"))] == 0
    assert buckets[(("kind", "text"), ("le", "3600"))] == 2
    assert buckets[(("kind", "confirm"), ("le", "3600"))] == 0
    assert buckets[(("kind", "confirm"), ("le", "14400"))] == 1
    assert buckets[(("kind", "confirm"), ("le", "+Inf"))] == 1
    gsum = values(samples, "pawflow_requests_pending_age_seconds_gsum")
    assert gsum[(("kind", "text"),)] == pytest.approx(3600)
    assert values(samples, "pawflow_deliveries_waiting") == {(("target", "job"),): 1}
    assert values(samples, "pawflow_lease_held") == {
        (("holder", "host:1:abc"), ("lease", "flow:d1")): 1
    }
    assert nonzero(samples, "pawflow_turn_queue") == {
        (("kind", "message"), ("status", "queued")): 1
    }
    assert values(samples, "pawflow_store_up") == {(): 1}
    assert old.id  # the answered one is not counted anywhere among the gauges


def test_a_scrape_reads_the_store_once_per_ttl(store: Store, clock: FakeClock) -> None:
    conversation = store.create_conversation("ada").id
    gauges = StoreGauges(store, ttl=timedelta(seconds=5))
    assert nonzero(gauges.samples(), "pawflow_requests_pending") == {}
    store.ask(Question("ada", conversation, "confirm", "Go?"))
    assert nonzero(gauges.samples(), "pawflow_requests_pending") == {}  # cached
    assert gauges.reads == 1
    clock.advance("5s")
    assert nonzero(gauges.samples(), "pawflow_requests_pending") == {(("kind", "confirm"),): 1}
    assert gauges.reads == 2


def test_another_module_adds_its_gauges_to_the_same_statement(store: Store) -> None:
    family = Family("pawflow_test_users", "gauge", "Users (a test's part).")
    part = GaugeQuery(
        "test_users",
        "SELECT '' AS a, '' AS b, '' AS c, COUNT(*) AS n, CAST(NULL AS BIGINT) AS t,"
        " CAST(NULL AS BIGINT) AS s FROM users",
        (family,),
        lambda rows, now: [Sample(family.name, {}, int(rows["test_users"][0]["n"]))],
    )
    add_gauges(part)
    add_gauges(part)  # once, however often
    try:
        store.ensure_user("ada")
        gauges = StoreGauges(store)
        assert family in gauges.families()
        assert values(gauges.samples(), "pawflow_test_users") == {(): 1}
        with store.transaction(write=False) as tx:
            assert set(read(tx, store.now(), QUERIES)) == {q.name for q in QUERIES}
    finally:
        QUERIES.remove(part)


def test_outcomes_are_counted_when_their_transaction_commits(store: Store) -> None:
    conversation = store.create_conversation("ada").id
    created = telemetry.REQUESTS_CREATED.value(kind="integer")
    answered = telemetry.REQUESTS_CLOSED.value(kind="integer", outcome="answered", via="cli")
    cancelled = telemetry.REQUESTS_CLOSED.value(kind="integer", outcome="cancelled", via="")

    first = store.ask(Question("ada", conversation, "integer", "How many?")).interaction
    second = store.ask(Question("ada", conversation, "integer", "How many more?")).interaction
    again = store.ask(
        Question("ada", conversation, "integer", "Keyed?", idempotency_key="k")
    ).interaction
    store.ask(Question("ada", conversation, "integer", "Keyed?", idempotency_key="k"))
    assert telemetry.REQUESTS_CREATED.value(kind="integer") == created + 3  # a repeat is not new

    def refuse(tx: object, record: object) -> None:
        raise InvalidInput("no")

    with pytest.raises(InvalidInput):  # rolled back: not counted
        store.respond_interaction(first.id, 3, user="ada", via="cli", also=refuse)
    assert telemetry.REQUESTS_CLOSED.value(kind="integer", outcome="answered", via="cli") == (
        answered
    )
    store.respond_interaction(first.id, 3, user="ada", via="cli")
    store.cancel_interaction(second.id, user="ada")
    assert telemetry.REQUESTS_CLOSED.value(kind="integer", outcome="answered", via="cli") == (
        answered + 1
    )
    assert telemetry.REQUESTS_CLOSED.value(kind="integer", outcome="cancelled", via="") == (
        cancelled + 1
    )
    assert again.status == "pending"


def test_deliveries_are_counted_by_target_and_result(store: Store) -> None:
    delivered = telemetry.DELIVERIES.value(target="metricjob", result="delivered")
    deferred = telemetry.DELIVERIES.value(target="metricjob", result="deferred")
    tries: list[str] = []

    def handler(delivery: Delivery) -> None:
        tries.append(delivery.continuation.id)
        if len(tries) == 1:
            raise RuntimeError("not now")

    store.register_handler("metricjob", handler)
    store.park("metricjob:1", signal_id="metric:1")
    store.notify_signal("metric:1")
    assert telemetry.DELIVERIES.value(target="metricjob", result="deferred") == deferred + 1
    assert telemetry.DELIVERIES.value(target="metricjob", result="delivered") == delivered
    store.clock.advance("1m")  # type: ignore[attr-defined]
    store.deliver_due()
    assert telemetry.DELIVERIES.value(target="metricjob", result="delivered") == delivered + 1


def test_no_part_of_the_scrape_scans_a_table_that_keeps_history(sqlite_store: Store) -> None:
    """SQLite's plan: every table that keeps history is read through an index (a partial
    one on what waits), never scanned whole."""
    with sqlite_store.transaction(write=False) as tx:
        parts: list[str] = []
        params: list[object] = []
        for index, query in enumerate(QUERIES):
            parts.append(f"SELECT a, b, c, n, t, s FROM ({query.sql}) AS part{index}")
            params.extend(query.params(0))
        plan = sql(tx).all("EXPLAIN QUERY PLAN " + " UNION ALL ".join(parts), params)
    details = [str(row["detail"]) for row in plan]
    for table in ("interactions", "continuations", "chat_turns", "outbox"):
        reads = [d for d in details if f" {table}" in d]
        assert reads, details
        assert all("USING INDEX" in d or "USING COVERING INDEX" in d for d in reads), reads
    # Not an index over every continuation either: the parked ones may be a million.
    assert not [d for d in details if "continuations_target" in d], details


def test_the_outbox_shows_what_waits_by_channel_and_counts_what_was_sent(
    store: Store, clock: FakeClock
) -> None:
    store.ensure_user("mia")
    with store.transaction() as tx:
        addresses.set_reach(tx, "mia", email="mia@example.org", now=store.now())
    conversation = store.create_conversation("mia", "m")
    for n in range(2):
        store.ask(Question("mia", conversation.id, "confirm", f"Ship {n}?"))
    clock.advance("90s")

    def gauge(name: str) -> float:
        [found] = [
            s.value
            for s in StoreGauges(store, ttl=timedelta(0)).samples()
            if s.name == name and s.labels == {"channel": "email"}
        ]
        return found

    assert gauge("pawflow_outbox_queued") == 2
    assert gauge("pawflow_outbox_oldest_seconds") == 90
    sent = telemetry.NOTIFICATIONS.value(channel="email", result="sent")
    retried = telemetry.NOTIFICATIONS.value(channel="email", result="retried")
    with store.transaction() as tx:
        # One at a time to the mail relay: the second claim takes the next one.
        (first,) = outbox.claim_due(tx, store.now(), 10)
        (second,) = outbox.claim_due(tx, store.now(), 10)
        outbox.mark_sent(tx, first, None, store.now())
        outbox.mark_failed(tx, second, "SMTP 451", store.now())
    assert telemetry.NOTIFICATIONS.value(channel="email", result="sent") == sent + 1
    assert telemetry.NOTIFICATIONS.value(channel="email", result="retried") == retried + 1
    assert gauge("pawflow_outbox_queued") == 1  # the one to try again

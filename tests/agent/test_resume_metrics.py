"""An agent's resume on an answer is timed from the answer: the latency histogram counts it
under ``requester="agent"``, measured on the store's clock."""

from __future__ import annotations

from pawflow import telemetry
from pawflow.chat.service import ChatService
from pawflow.clock import FakeClock
from pawflow.records import Conversation
from pawflow.store import Store
from tests.agent.conftest import USER, say


def test_the_agent_resumes_and_the_wait_since_the_answer_is_observed(
    store: Store, service: ChatService, conversation: Conversation, clock: FakeClock
) -> None:
    histogram = telemetry.RESUME_LATENCY

    def between_2_5_and_5_s() -> float:
        buckets = {
            s.labels["le"]: s.value
            for s in histogram.samples()
            if s.name.endswith("_bucket")
            and (s.labels["requester"], s.labels["outcome"]) == ("agent", "answered")
        }
        return buckets.get("5", 0) - buckets.get("2.5", 0)

    before = histogram.count(requester="agent", outcome="answered")
    within = between_2_5_and_5_s()
    say(store, service, conversation.id, "Please deploy the app")
    [request] = store.list_interactions(user=USER, status="pending")
    store.respond_interaction(request.id, "staging", user=USER)
    assert histogram.count(requester="agent", outcome="answered") == before  # not resumed yet

    clock.advance("3s")
    assert service.run_due() == 1

    assert histogram.count(requester="agent", outcome="answered") == before + 1
    assert between_2_5_and_5_s() == within + 1  # 3 s on the store's clock

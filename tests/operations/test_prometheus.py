"""A real Prometheus scrapes a real ``pawflow serve``: through Prometheus's own HTTP API, the
series move as requests are made, answered and expire, and as a flow resumes on an answer.

Prometheus is Debian's ``prometheus`` package (``make test`` installs it as it installs
chromium); without it the test is skipped locally and fails in CI.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pawflow import open_store
from pawflow.client import Client
from pawflow.flow import FlowFile
from pawflow.flow import deployments as deps
from pawflow.testing import eventually
from tests.operations.prom import METRICS_TOKEN, becomes, prometheus, query
from tests.served import Served

pytestmark = pytest.mark.slow

FLOW = """
name: ask-and-tell
tasks:
  ask:
    type: requestConfirmation
    properties: {message: "Ship ${n}?"}
    next: wait
  wait:
    type: durableWait
    next: tell
  tell:
    type: notifyUser
    properties: {message: "shipped ${n}"}
"""


@pytest.mark.timeout(120)
def test_prometheus_sees_requests_made_answered_and_expired(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'pawflow.db'}"
    served = Served(
        db,
        tmp_path,
        env={
            "PAWFLOW_METRICS": "on",
            "PAWFLOW_METRICS_TOKEN": METRICS_TOKEN,
            "PAWFLOW_METRICS_CACHE": "0.1",
            "PAWFLOW_SWEEP_INTERVAL": "0.5",  # the sweeper expires what is due
        },
    )
    served.start()
    try:
        token = served.token("ada")
        with (
            prometheus(tmp_path, f"127.0.0.1:{served.port}") as prom,
            Client(served.url, token) as client,
        ):
            becomes(prom, 'up{job="pawflow"}', 1)
            becomes(prom, 'pawflow_requests_pending{kind="confirm"}', 0)
            created = 'pawflow_requests_created_total{kind="confirm"}'
            becomes(prom, created, 0)

            conversation = client.create_conversation("Releases").id
            first = client.request_interaction(conversation, "confirm", "Ship it?")
            client.request_interaction(conversation, "confirm", "Soon?", expires_in="2s")
            becomes(prom, created, 2)
            becomes(prom, 'pawflow_requests_pending{kind="confirm"}', 2)
            becomes(
                prom, 'pawflow_requests_pending_age_seconds_bucket{kind="confirm",le="+Inf"}', 2
            )

            client.respond_interaction(first.id, True, via="cli")
            becomes(
                prom,
                'pawflow_requests_closed_total{kind="confirm",outcome="answered",via="cli"}',
                1,
            )
            becomes(prom, 'pawflow_requests_pending{kind="confirm"}', 1)

            # The second one runs out; the sweeper expires it.
            becomes(
                prom, 'pawflow_requests_closed_total{kind="confirm",outcome="expired",via=""}', 1
            )
            becomes(prom, 'pawflow_requests_pending{kind="confirm"}', 0)
            becomes(prom, 'pawflow_requests_oldest_pending_age_seconds{kind="confirm"}', 0)

            # A flow asks, is answered, and resumes: the latency histogram counts the resume.
            with open_store(db) as store:
                deployment, _ = deps.deploy(store, FLOW, conversation_id=conversation)
                deps.inject(store, deployment.id, FlowFile.create(attributes={"n": "7"}))
            becomes(
                prom, f'pawflow_flow_queue{{deployment_id="{deployment.id}",status="parked"}}', 1
            )
            asked = eventually(
                lambda: [
                    i for i in client.iter_interactions(status="pending") if i.message == "Ship 7?"
                ]
            )[0]
            client.respond_interaction(asked.id, True)
            becomes(
                prom,
                'pawflow_resume_latency_seconds_count{requester="flow",outcome="answered"}',
                1,
            )
            becomes(prom, 'pawflow_deliveries_total{target="flow",result="delivered"}', 2)
            becomes(prom, f'absent(pawflow_flow_queue{{deployment_id="{deployment.id}"}})', 1)
            lease = query(prom, f'pawflow_lease_held{{lease="flow:{deployment.id}"}}')
            assert list(lease.values()) == [1]
    finally:
        served.kill()

"""Helpers for flow tests: a started FlowService and deploying flows written inline."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from pawflow.flow import Ending, FlowInstance, FlowService
from pawflow.flow import deployments as deps
from pawflow.flow.deployments import Deployment
from pawflow.store import Store
from pawflow.testing import eventually


@dataclass
class Deployed:
    deployment: Deployment
    service: FlowService

    @property
    def id(self) -> str:
        return self.deployment.id

    @property
    def instance(self) -> FlowInstance:
        found = self.service.instance(self.deployment.id)
        assert found is not None, "the instance is not running"
        return found

    def endings(self, task: str | None = None, relationship: str | None = None) -> list[Ending]:
        return [
            e
            for e in self.instance.endings()
            if (task is None or e.task_id == task)
            and (relationship is None or e.relationship == relationship)
        ]

    def wait_endings(
        self, count: int, task: str | None = None, rel: str | None = None
    ) -> list[Ending]:
        def enough() -> list[Ending] | None:
            found = self.endings(task, rel)
            return found if len(found) >= count else None

        return eventually(enough)


@pytest.fixture
def service(store: Store) -> Iterator[FlowService]:
    running = FlowService(store, reconcile_interval=None)
    running.start()
    yield running
    running.stop()


@pytest.fixture
def conversation(store: Store) -> str:
    return store.create_conversation("alice", "Flows").id


def deploy(service: FlowService, text: str, conversation: str, user: str | None = None) -> Deployed:
    deployment, _ = deps.deploy(service.store, text, conversation_id=conversation, user=user)
    service.reconcile()
    return Deployed(deployment, service)


def parked(store: Store, target: str, count: int = 1) -> int:
    return eventually(lambda: store.pending_continuations(target) >= count and count)

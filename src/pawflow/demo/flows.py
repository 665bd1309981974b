"""The example flows (package data) and the demo's expense form."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from pawflow.flow import deployments
from pawflow.flow.flowfile import FlowFile
from pawflow.store import Store

FLOWS = Path(str(resources.files("pawflow.demo").joinpath("flows")))
"""The folder of the example flows."""
DEMO_FLOW = FLOWS / "expense_approval.yaml"


def deploy_expense_demo(
    store: Store, user: str, conversation_id: str, *, path: Path = DEMO_FLOW
) -> None:
    """Deploy the expense example into the demo conversation and have it ask once.

    Idempotent: a restart finds the deployment and asks nothing more, whether the first
    expense form is still pending, answered, or not asked yet.
    """
    deployment, created = deployments.deploy(
        store,
        path.read_text(encoding="utf-8"),
        conversation_id=conversation_id,
        user=user,
        base_dir=path.parent,
    )
    if created:
        deployments.inject(store, deployment.id, FlowFile.create(attributes={"employee": user}))

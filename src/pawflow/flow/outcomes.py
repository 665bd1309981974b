"""What a task of a durable flow did with one FlowFile besides emitting (:class:`Outcome`),
recorded with its batch, and the payload of a queue row (:func:`encode`, :func:`decode`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from pawflow import durations
from pawflow.errors import InvalidInput, PayloadTooLarge
from pawflow.flow.engine import PARK_MODE_RESUME, Item
from pawflow.flow.flowfile import FlowFile
from pawflow.flow.task import Parker, Resumption

if TYPE_CHECKING:
    from pawflow.store import Store


class Holder(Protocol):
    """What an outcome needs of its engine (a ``DurableEngine``)."""

    store: Store

    def release_held(self, task_id: str, item: Item) -> None: ...

    def wait_on_board(
        self, key: str, deadline: datetime | None, release: Callable[[Resumption], None]
    ) -> Resumption | None: ...


def encode(flowfile: FlowFile, resumption: Resumption | None) -> bytes:
    """A queue row's payload: the FlowFile, and why it came back to its task, if it did."""
    if resumption is None:
        return flowfile.encode()
    return flowfile.encode(
        {
            "resumption": {
                "outcome": resumption.outcome,
                "signal_id": resumption.signal_id,
                "value": resumption.value,
            }
        }
    )


def decode(payload: bytes) -> tuple[FlowFile, Resumption | None]:
    flowfile, header = FlowFile.decode(payload)
    resumed = header.get("resumption")
    if not isinstance(resumed, dict):
        return flowfile, None
    return flowfile, Resumption(
        str(resumed.get("outcome") or "signaled"), resumed.get("signal_id"), resumed.get("value")
    )


@dataclass(frozen=True)
class Park:
    task_id: str
    flowfile: FlowFile
    signal_id: str | None
    deadline: datetime | None
    payload: bytes
    hops: int


class Outcome(Parker):
    """What a task did with one FlowFile besides emitting: recorded with the batch."""

    def __init__(self, engine: Holder, item: Item) -> None:
        self.engine = engine
        self.item = item
        self.parks: list[Park] = []
        self.held = False

    def park(
        self,
        task_id: str,
        flowfile: FlowFile,
        *,
        signal_id: str | None = None,
        timeout: str | None = None,
        until: str | datetime | None = None,
    ) -> None:
        # Checked now, so that recording the outcome cannot fail on them.
        store = self.engine.store
        if timeout is not None and until is not None:
            raise InvalidInput("give a timeout or an until, not both")
        deadline = (
            durations.parse_deadline(until)
            if until is not None
            else durations.deadline_after(store.now(), timeout)
        )
        if signal_id is None and deadline is None:
            raise InvalidInput("a continuation needs a signal, a deadline, or both")
        if signal_id is not None and not signal_id:
            raise InvalidInput("signal_id must not be empty")
        payload = flowfile.encode(
            {"task": task_id, "mode": PARK_MODE_RESUME, "hops": self.item.hops}
        )
        if len(payload) > store.payload_cap:
            raise PayloadTooLarge(
                f"the parked FlowFile takes {len(payload)} bytes; the cap is {store.payload_cap}"
            )
        self.parks.append(Park(task_id, flowfile, signal_id, deadline, payload, self.item.hops))

    def hold(
        self, task_id: str, flowfile: FlowFile, key: str, deadline: datetime | None
    ) -> Resumption | None:
        item = self.item

        def release(resumed: Resumption) -> None:
            # Its row stays running: the released FlowFile goes on with the same row.
            self.engine.release_held(
                task_id, Item(flowfile, resumed, item.hops, item.row_id, item.attempts, True)
            )

        resumed = self.engine.wait_on_board(key, deadline, release)
        self.held = resumed is None
        return resumed

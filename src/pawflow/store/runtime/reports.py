"""What a sweeper pass reports, and the batch its steps work in."""

from __future__ import annotations

from dataclasses import dataclass, field

SWEEP_BATCH = 500
"""The most rows one transaction of a sweep step changes: a step runs batch after batch
until one falls short."""


@dataclass
class SweepReport:
    """What one pass did, by step: ``expired``, ``released``, ``delivered``, …"""

    counts: dict[str, int] = field(default_factory=dict)

    def __getitem__(self, key: str) -> int:
        return self.counts.get(key, 0)

    def add(self, counts: dict[str, int]) -> None:
        for key, value in counts.items():
            self.counts[key] = self.counts.get(key, 0) + value

    @property
    def total(self) -> int:
        return sum(self.counts.values())

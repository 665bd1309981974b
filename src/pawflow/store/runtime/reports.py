"""What a sweeper pass reports."""

from __future__ import annotations

from dataclasses import dataclass, field


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

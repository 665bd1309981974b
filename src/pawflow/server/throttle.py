"""Throttling failed authentication by client address.

Every failed token, session-cookie or sign-in-link guess takes a token from the address's
bucket; an empty bucket refuses further attempts from that address with a 429 until it
refills. Successful requests cost nothing here (the per-user rate limit covers them), so a
guesser is slowed to ``per_minute`` guesses while legitimate clients never notice.
"""

from __future__ import annotations

from pawflow.server.errors import HTTPProblem
from pawflow.server.limits import TokenBuckets


class FailureThrottle(TokenBuckets):
    """A token bucket per client address, spent only by failed authentication."""

    def check(self, address: str) -> None:
        """Raise a 429 while ``address`` has used up its failed attempts."""
        wait = self.waiting(address)
        if wait is not None:
            raise HTTPProblem(
                429,
                f"too many failed sign-in attempts: retry in {wait} s",
                headers={"Retry-After": str(wait)},
            )

    def failed(self, address: str) -> None:
        """Count one failed attempt from ``address``."""
        self.spend(address)

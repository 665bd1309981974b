"""Which live process runs which agent: a lease per agent, spread over the live processes.

Every process that runs agents keeps a presence lease ``process:<id>`` and, for each agent
it owns, the lease ``agent:<name>``, all renewed by one heartbeat. The agents are shared
out so each live process gets its fair share: sorted by id, the first ``k mod n`` of ``n``
processes run ``k // n + 1`` of the ``k`` agents, the others ``k // n``. A process above its
share gives up the agents it prefers least; one below it takes free agents, those it prefers
most first (a hash of process and agent, so processes prefer different agents). When a
process dies its leases run out within one time to live, the others count one process less,
and its agents are taken over at their next heartbeat. Several processes on one SQLite file
share agents the same way.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import socket
import threading
from collections.abc import Callable, Iterable
from datetime import timedelta

from pawflow.store import LEASE_TTL as DEFAULT_TTL
from pawflow.store import Store

log = logging.getLogger("pawflow.chat.ownership")

AGENT_PREFIX = "agent:"
PROCESS_PREFIX = "process:"


def process_id() -> str:
    """This process, as lease owners name it: host, pid and a random part."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


def share(agents: int, processes: list[str], me: str) -> int:
    """How many of ``agents`` the process ``me`` runs, of the live ``processes``."""
    ranked = sorted(set(processes) | {me})
    base, extra = divmod(agents, len(ranked))
    return base + (1 if ranked.index(me) < extra else 0)


def preference(owner: str, agent: str) -> str:
    return hashlib.sha256(f"{owner}\n{agent}".encode()).hexdigest()


class AgentOwnership:
    """The agent leases of one process; :meth:`beat` keeps them and rebalances."""

    def __init__(
        self,
        store: Store,
        agents: Callable[[], Iterable[str]],
        *,
        owner: str | None = None,
        ttl: timedelta = DEFAULT_TTL,
    ) -> None:
        self.store = store
        self.owner = owner or process_id()
        self.ttl = ttl
        self._agents = agents
        self._held: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    @property
    def held(self) -> list[str]:
        """The agents this process runs now."""
        return sorted(self._held)

    def owns(self, agent: str) -> bool:
        return agent in self._held

    def beat(self) -> list[str]:
        """Renew this process's leases, take or give up agents; returns the agents held."""
        with self._lock:
            store, me = self.store, self.owner
            with store.unit() as u:
                u.leases.acquire(PROCESS_PREFIX + me, me, self.ttl)
                processes = [lease.owner for lease in u.leases.held(PROCESS_PREFIX)]
                leases = {
                    lease.name.removeprefix(AGENT_PREFIX): lease.owner
                    for lease in u.leases.held(AGENT_PREFIX)
                }
            names = sorted(set(self._agents()))
            target = share(len(names), processes, me)
            mine = sorted(
                (name for name in names if leases.get(name) == me),
                key=lambda name: preference(me, name),
                reverse=True,
            )
            held: set[str] = set()
            for name in mine:
                if len(held) >= target:
                    with store.unit() as u:
                        u.leases.release(AGENT_PREFIX + name, me)  # above our share
                elif self._acquire(name):
                    held.add(name)
            free = sorted(
                (name for name in names if name not in leases),
                key=lambda name: preference(me, name),
                reverse=True,
            )
            for name in free:
                if len(held) >= target:
                    break
                if self._acquire(name):
                    held.add(name)
            if held != self._held:
                log.info("process %s runs agents %s", me, ", ".join(sorted(held)) or "none")
            self._held = frozenset(held)
            return sorted(held)

    def _acquire(self, name: str) -> bool:
        """Take or renew the lease of the agent ``name``; False while another holds it."""
        with self.store.unit() as u:
            return u.leases.acquire(AGENT_PREFIX + name, self.owner, self.ttl)

    def release(self) -> None:
        """Give every lease up (a clean stop): others take the agents over at once."""
        with self._lock:
            for name in self._held:
                with self.store.unit() as u:
                    u.leases.release(AGENT_PREFIX + name, self.owner)
            with self.store.unit() as u:
                u.leases.release(PROCESS_PREFIX + self.owner, self.owner)
            self._held = frozenset()

"""The store's runtime: requests, waits and the work that carries on when they resolve.

``interactions`` (publish, read, the one way out of ``pending``), ``asking`` and
``answering``, ``continuations`` (durable signals and what is parked on them),
``delivery`` and ``dispatch`` (handing what resolved to its handler, once), ``turns`` (the
durable turn queue), ``queues`` (a deployed flow's FlowFiles), ``leases``,
``checkpoints``, ``sessions``, ``deployments``, ``idempotency``, ``mcp_rounds`` and
``reports`` (what a sweep reports). It may import every other wing; no wing imports it.
"""

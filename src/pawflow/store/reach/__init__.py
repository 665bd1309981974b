"""The store's reach: what leaves for people and systems outside, and the links that come back.

``outbox`` (where users are reached, one row per notification), ``lanes`` (one delivery in
flight per destination), ``webhooks``, ``a2a_tasks`` and ``a2a_push`` (A2A tasks and their
pushes), ``web_push`` (VAPID keys and browsers' subscriptions), ``answer_links`` (answering
without signing in) and ``file_links`` (which answer refers to which upload). It imports
the engine and the ledger.
"""

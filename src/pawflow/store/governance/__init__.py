"""The store's governance: who answers a request, and what happens when nobody does.

``policies`` (a request's policy, read and checked when it is made), ``assignments``
(claims, reassignment, the inbox, reminders and escalations), ``approvals`` (tool approval
rules and the calls they let through), ``accountability`` (a request's claims, hand-overs
and details: ``u.accountability``) and ``administration`` (what the admin page reads across
every user). It imports the engine, the ledger, people and reach.
"""

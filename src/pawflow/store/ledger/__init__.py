"""The store's ledger: who is in a conversation, what was said in it and what happened.

``conversations`` (users, conversations and their members, uploads), ``messages`` (the
history, notifications and who has a live client), ``events`` (the durable event log every
stream reads) and ``audit`` (the append-only trail of requests). Every other wing writes
to it; it imports only the engine.
"""

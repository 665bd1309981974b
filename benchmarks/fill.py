"""Many rows written in one statement each, as the API would have written them one by one.

A million parked continuations or answered requests through the API take minutes on a
PostgreSQL server; one ``INSERT … SELECT`` over ``generate_series`` (PostgreSQL) or a
recursive CTE (SQLite) writes them in seconds. Each row holds what the API writes:

- a parked continuation as ``Store.park`` writes it (``store/runtime/continuations.py``):
  a random 22-character id, the target ``bench:<key>``, parked on the signal
  ``confirmation:<key>`` of a request, an empty payload (``park``'s default), status
  ``parked``, no outcome, no value, no attempts, no delivery time, no error, created now; a
  deadline on every ``deadline_every``-th row (none on the others);
- an answered request as ``Store.ask`` then an answer leave it (``interactions``): a
  confirmation with its signal ``confirmation:<id>``, answered ``true`` through the API.

The keys are random (hex, 22 characters, within the alphabet of :func:`pawflow.ids.new_id`),
so the indexes on ids, targets and signals grow as they do under real traffic, not in order.
"""

from __future__ import annotations

from pawflow.store.engine.database import Tx, sql

_CONTINUATIONS = (
    "INSERT INTO continuations (id, target, signal_id, deadline, payload, status, outcome,"
    " value, attempts, next_attempt_at, last_error, created_at, resolved_at)"
)
_SQLITE_KEY = "lower(hex(randomblob(11)))"
_SQLITE_KEYS = (
    " WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?),"
    " keys AS MATERIALIZED (SELECT i, {key} FROM n)"
)
"""The numbers 0 … count - 1 with their random keys, each drawn once (a key used twice in a
row is one value: the CTE is materialized, not folded into the statement that reads it)."""
_POSTGRES_KEY = "substr(md5(random()::text), 1, 22)"

_SQLITE_PARKED = (
    _CONTINUATIONS
    + _SQLITE_KEYS.format(key=f"{_SQLITE_KEY} AS id, {_SQLITE_KEY} AS k")
    + " SELECT id, 'bench:' || k, CASE WHEN ? THEN 'confirmation:' || k END,"
    " CASE WHEN i % ? = ? - 1 THEN ? END, x'', 'parked', NULL, NULL, 0, NULL, NULL, ?, NULL"
    " FROM keys"
)
_POSTGRES_PARKED = (
    _CONTINUATIONS + " SELECT id, 'bench:' || k, CASE WHEN ?::boolean THEN 'confirmation:' || k"
    " END, CASE WHEN i % ?::integer = ?::integer - 1 THEN ?::bigint END, '\\x'::bytea,"
    " 'parked', NULL, NULL, 0, NULL, NULL, ?::bigint, NULL"
    f" FROM (SELECT i, {_POSTGRES_KEY} AS id, {_POSTGRES_KEY} AS k"
    " FROM generate_series(0, ?::integer - 1) AS i) AS keys"
)


def parked(
    tx: Tx,
    dialect: str,
    count: int,
    *,
    now: int,
    deadline: int | None,
    deadline_every: int = 1,
    on_signal: bool = True,
) -> None:
    """``count`` parked continuations, created at ``now`` (epoch ms): each on a request's
    signal (unless not ``on_signal``), every ``deadline_every``-th one with ``deadline``."""
    if deadline is None:
        deadline_every = count + 1  # no row's turn comes
    if not on_signal and deadline_every != 1:
        raise ValueError("a continuation needs a signal, a deadline, or both")
    if dialect == "sqlite":
        sql(tx).execute(
            _SQLITE_PARKED, (count, on_signal, deadline_every, deadline_every, deadline, now)
        )
    else:
        sql(tx).execute(
            _POSTGRES_PARKED, (on_signal, deadline_every, deadline_every, deadline, now, count)
        )


_INTERACTIONS = (
    "INSERT INTO interactions (id, kind, message, response_schema, owner, conversation_id,"
    " requester, signal_id, status, answer, answered_by, answered_at, answered_via, created_at)"
)
_SQLITE_ANSWERED = (
    _INTERACTIONS
    + _SQLITE_KEYS.format(key=f"{_SQLITE_KEY} AS k")
    + " SELECT k, 'confirm', 'Go', '{}', ?, ?, '{}', 'confirmation:' || k, 'answered', 'true', ?,"
    " ? + i, 'api', ? + i FROM keys"
)
_POSTGRES_ANSWERED = (
    _INTERACTIONS + " SELECT k, 'confirm', 'Go', '{}', ?, ?, '{}', 'confirmation:' || k,"
    " 'answered', 'true', ?, ?::bigint + i, 'api', ?::bigint + i"
    f" FROM (SELECT i, {_POSTGRES_KEY} AS k FROM generate_series(0, ?::integer - 1) AS i)"
    " AS keys"
)


def answered(
    tx: Tx, dialect: str, count: int, *, owner: str, conversation: str, start: int
) -> None:
    """``count`` confirmations ``owner`` asked in ``conversation`` and answered, one a
    millisecond from ``start`` (epoch ms)."""
    if dialect == "sqlite":
        sql(tx).execute(_SQLITE_ANSWERED, (count, owner, conversation, owner, start, start))
    else:
        sql(tx).execute(_POSTGRES_ANSWERED, (owner, conversation, owner, start, start, count))

"""Store calls that refuse to wait: how a short call may run on an event loop.

A store call on a worker thread costs two hand-overs between the loop and the thread, which
on a busy server cost as much as the call itself. On the loop, though, a wait stalls every
connection the loop serves. Inside :func:`refusing_waits`, the store runs a call only as
far as it can without waiting: where a write transaction would wait for another writer (of
this process or another), or would hand what it resolved to a handler of this process
(which may take as long as it likes: an agent's run resumed, a model called), it raises
:class:`WouldWait` before anything of it is committed, and the caller runs the whole call
again on a worker thread, where waiting is fine.

Only until a write of the call has committed: a call cannot be run again once part of it
stands, so a later transaction of the same call waits, as it would anywhere. What a commit
of it sets off in this process that may take long (the handlers here delivering what its
notice says may be due) runs on a thread instead (:func:`within`).

Where a transaction waits at all is the backend's to say: SQLite in WAL mode reads without
waiting and queues its writers on locks it can try; PostgreSQL waits on the network for
every statement, so its store is not called on a loop (``Database.reads_wait``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar


class WouldWait(BaseException):
    """The call would have waited where waiting is refused; nothing of it was committed.

    Not one of PawFlow's errors (:mod:`pawflow.errors`): nobody sees it but the code that
    refused the wait, which runs the call again where it may wait. A ``BaseException``, so
    that code between the two which catches errors to go on without them (``except
    Exception``) lets it through rather than go on with part of a call undone.
    """


class _Refusal:
    __slots__ = ("committed",)

    def __init__(self) -> None:
        self.committed = False


_REFUSAL: ContextVar[_Refusal | None] = ContextVar("pawflow_refusing_waits", default=None)


@contextlib.contextmanager
def refusing_waits() -> Iterator[None]:
    """Within the block (this context: the task of an event loop), store calls refuse to
    wait and raise :class:`WouldWait` instead, until one of their writes has committed."""
    token = _REFUSAL.set(_Refusal())
    try:
        yield
    finally:
        _REFUSAL.reset(token)


def refusing() -> bool:
    """Whether a wait here must be refused: inside :func:`refusing_waits`, before any write
    of it has committed."""
    refusal = _REFUSAL.get()
    return refusal is not None and not refusal.committed


def within() -> bool:
    """Whether the caller runs inside :func:`refusing_waits` (on an event loop), whether or
    not a write of it has committed: what it would set off that takes long (a handler's
    delivery after its commit) goes to a thread."""
    return _REFUSAL.get() is not None


def committed() -> None:
    """A write committed: from now on, the block's waits are waited out (what it did
    stands, so the call cannot be run again)."""
    refusal = _REFUSAL.get()
    if refusal is not None:
        refusal.committed = True


def refuse_wait() -> None:
    """Raise :class:`WouldWait` where a wait must be refused (see :func:`refusing`)."""
    if refusing():
        raise WouldWait

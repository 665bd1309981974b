"""How a unit's tables are made: a table function ``fn(tx, …)`` becomes a method of a table
bound to one transaction (:class:`bound`); a function that also takes ``now`` is written out
as a method that passes the unit's clock (``self.now()``), so callers never pass it."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from pawflow.store.engine.database import Tx

if TYPE_CHECKING:
    from pawflow.store.unit import Unit

P = ParamSpec("P")
R = TypeVar("R")

NO_CLOCK = "this unit was made without the store's clock: Unit(tx, now) gives it one"


class bound(Generic[P, R]):
    """A table function ``fn(tx, …)`` as a method of a table bound to one transaction."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[Concatenate[Tx, P], R]) -> None:
        self.fn = fn

    @overload
    def __get__(self, table: None, owner: type[Any]) -> bound[P, R]: ...

    @overload
    def __get__(self, table: Table, owner: type[Any]) -> Callable[P, R]: ...

    def __get__(self, table: Table | None, owner: type[Any]) -> bound[P, R] | Callable[P, R]:
        if table is None:
            return self
        return functools.partial(self.fn, table.tx)


class Table:
    """A table's functions, bound to the transaction ``tx`` and to the unit's ``clock``."""

    __slots__ = ("_clock", "tx")

    def __init__(self, tx: Tx, clock: Callable[[], datetime] | None = None) -> None:
        self.tx = tx
        self._clock = clock

    def now(self) -> datetime:
        """The unit's clock: what the methods pass their function as ``now``."""
        if self._clock is None:
            raise RuntimeError(NO_CLOCK)
        return self._clock()


T = TypeVar("T", bound=Table)


class tables(Generic[T]):
    """A table of the unit, made on first use and kept for the rest of the unit."""

    def __init__(self, table: type[T]) -> None:
        self.table = table

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.name = name

    @overload
    def __get__(self, unit: None, owner: type[Any]) -> tables[T]: ...

    @overload
    def __get__(self, unit: Unit, owner: type[Any]) -> T: ...

    def __get__(self, unit: Unit | None, owner: type[Any]) -> tables[T] | T:
        if unit is None:
            return self
        made = unit.__dict__[self.name] = self.table(unit.tx, unit.clock)
        return made

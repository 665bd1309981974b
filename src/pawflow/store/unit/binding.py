"""How a unit's tables are made: a table function ``fn(tx, …)`` becomes a method of a table
bound to one transaction (:class:`bound`); a function that also takes ``now`` is written out
as a method that passes the unit's clock (``self.now()``), so callers never pass it.

And what the door checks. Every method of a table, and of the ``Store`` (:func:`door`),
refuses text it cannot store — NUL, lone surrogates, more than :data:`MAX_TEXT` characters
— in its arguments, once per value, with an ``InvalidInput`` naming the argument: text in a
string, a list or tuple of them, or a record's fields (``rows[0].task``; a record given
alone, as ``Store.ask``'s question, by its fields' names). Values kept as JSON (arguments
typed ``Any``, ``dict``, ``Mapping``, a payload) are not looked into: JSON spells NUL
``\\u0000``, which both databases keep alike. Nothing above the store writes otherwise, so
the database backends scan no statement's parameters."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import operator
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from pawflow.errors import FieldError, InvalidInput
from pawflow.interactions.problems import UNSTORABLE, invalid, join_path
from pawflow.store.engine.database import Tx

if TYPE_CHECKING:
    from pawflow.store.unit import Unit

P = ParamSpec("P")
R = TypeVar("R")

MAX_TEXT = 1024 * 1024
"""The most characters a text argument may hold (a parked payload's default cap): the
tables' own limits, tighter (a name's 200, a message's 100,000), still hold."""
TOO_LONG = f"at most {MAX_TEXT} characters"
JSON_VALUES = ("Any", "dict[", "Mapping[", "Payload", "object")
"""What an argument's annotation says when it is kept as JSON: not looked into."""
_PLAIN = frozenset({int, float, bool, bytes, type(None), datetime})

Checked = tuple[tuple[str | None, ...], frozenset[str]]
"""A function's arguments the door looks at: by position (None: not looked at), by name."""


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return UNSTORABLE
    if len(text) > MAX_TEXT:
        return TOO_LONG
    return None if text.isascii() or _encodes(text) else UNSTORABLE


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_RECORDS: dict[type, tuple[str, ...]] = {}
"""A record type's fields the door looks at (its fields not kept as JSON), once known."""


def _fields(kind: type) -> tuple[str, ...]:
    found = _RECORDS.get(kind)
    if found is None:
        fields: dict[str, dataclasses.Field[Any]] = getattr(kind, "__dataclass_fields__", {})
        found = _RECORDS[kind] = tuple(n for n, f in fields.items() if not _is_json(f.type))
    return found


_GETTERS: dict[type, Callable[[Any], tuple[object, ...]]] = {}
"""A record type's looked-at fields, read as a tuple (:func:`_clean`), once known."""


def _getter(kind: type) -> Callable[[Any], tuple[object, ...]]:
    fields = _fields(kind)
    if len(fields) > 1:
        found: Callable[[Any], tuple[object, ...]] = operator.attrgetter(*fields)
    else:
        found = lambda record: tuple(getattr(record, name) for name in fields)  # noqa: E731
    _GETTERS[kind] = found
    return found


def _clean(value: object) -> bool:
    """Whether ``value`` holds only text the store can keep: the door's every look.

    A list, tuple or record is looked through a level at a time, and the texts found checked
    as one (a NUL or a lone surrogate in one text is in their join; only a join longer than
    a text may be has each text's length looked at): no call per value, so a batch of 256
    queue rows costs a quarter of what it did.
    """
    kind = type(value)
    if kind is str:
        text: str = value  # type: ignore[assignment]
        return "\x00" not in text and len(text) <= MAX_TEXT and (text.isascii() or _encodes(text))
    if kind in _PLAIN:
        return True
    texts: list[str] = []
    level: list[object] = [value]
    while level:
        deeper: list[object] = []
        for item in level:
            kind = type(item)
            if kind is str:
                texts.append(item)  # type: ignore[arg-type]
            elif kind in _PLAIN:
                continue
            elif kind is list or kind is tuple:
                deeper += item  # type: ignore[arg-type]
            else:
                deeper += (_GETTERS.get(kind) or _getter(kind))(item)
        level = deeper
    joined = "".join(texts)
    if "\x00" in joined or not (joined.isascii() or _encodes(joined)):
        return False
    return len(joined) <= MAX_TEXT or max(map(len, texts)) <= MAX_TEXT


def unstorable(value: object, path: str, *, record_bare: bool = False) -> FieldError | None:
    """Where ``value`` holds text the store cannot keep, if anywhere (``path`` names it; a
    record's fields go by their own names if ``record_bare``)."""
    if type(value) is str:
        problem = _text_problem(value)
        return None if problem is None else FieldError(path, problem)
    if type(value) is list or type(value) is tuple:
        for index, item in enumerate(value):
            found = unstorable(item, join_path(path, [index]))
            if found is not None:
                return found
        return None
    for name in () if type(value) in _PLAIN else _fields(type(value)):
        at = name if record_bare else join_path(path, [name])
        found = unstorable(getattr(value, name), at)
        if found is not None:
            return found
    return None


def _is_json(annotation: object) -> bool:
    noted = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return any(mark in noted for mark in JSON_VALUES)


def checked(fn: Callable[..., Any]) -> Checked:
    """Which arguments of ``fn`` (after its first: ``self`` or ``tx``) the door looks at."""
    named = list(inspect.signature(fn).parameters.values())[1:]
    looked = [None if _is_json(p.annotation) else p.name for p in named]
    return tuple(looked), frozenset(name for name in looked if name is not None)


def refuse_unstorable(where: Checked, args: Iterable[object], kwargs: dict[str, Any]) -> None:
    """Raise ``InvalidInput`` naming the first argument whose text cannot be stored."""
    positional, keywords = where
    for name, value in zip(positional, args, strict=False):
        if name is not None and not _clean(value):
            raise _refused(value, name)
    for name, value in kwargs.items():
        if name in keywords and not _clean(value):
            raise _refused(value, name)


def _refused(value: object, name: str) -> InvalidInput:
    found = unstorable(value, name, record_bare=True) or FieldError(name, UNSTORABLE)
    return invalid("invalid input", [found])


def door(fn: Callable[Concatenate[Any, P], R]) -> Callable[Concatenate[Any, P], R]:
    """``fn`` (a method) checking its arguments' text first (:func:`refuse_unstorable`)."""
    where = checked(fn)

    @functools.wraps(fn)
    def at_the_door(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        refuse_unstorable(where, args, kwargs)
        return fn(self, *args, **kwargs)

    at_the_door.__door__ = True  # type: ignore[attr-defined]
    return at_the_door


C = TypeVar("C", bound=type)


def doors(cls: C) -> C:
    """Every public method of ``cls`` behind the :func:`door`."""
    for name, attr in list(vars(cls).items()):
        if not name.startswith("_") and inspect.isfunction(attr):
            setattr(cls, name, door(attr))
    return cls


class bound(Generic[P, R]):
    """A table function ``fn(tx, …)`` as a method of a table bound to one transaction."""

    __slots__ = ("fn", "where")
    __door__ = True

    def __init__(self, fn: Callable[Concatenate[Tx, P], R]) -> None:
        self.fn = fn
        self.where = checked(fn)

    @overload
    def __get__(self, table: None, owner: type[Any]) -> bound[P, R]: ...

    @overload
    def __get__(self, table: Table, owner: type[Any]) -> Callable[P, R]: ...

    def __get__(self, table: Table | None, owner: type[Any]) -> bound[P, R] | Callable[P, R]:
        if table is None:
            return self
        fn, tx, where = self.fn, table.tx, self.where

        def at_the_door(*args: P.args, **kwargs: P.kwargs) -> R:
            refuse_unstorable(where, args, kwargs)
            return fn(tx, *args, **kwargs)

        return at_the_door


class Table:
    """A table's functions, bound to the transaction ``tx`` and to the unit's ``clock``."""

    __slots__ = ("_clock", "tx")

    def __init__(self, tx: Tx, clock: Callable[[], datetime]) -> None:
        self.tx = tx
        self._clock = clock

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        doors(cls)  # the methods written out; a bound function checks when it is called

    def now(self) -> datetime:
        """The unit's clock: what the methods pass their function as ``now``."""
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

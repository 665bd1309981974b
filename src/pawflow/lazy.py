"""Names a package exports but loads on first use (PEP 562).

A package's ``__init__`` that imports everything it exports makes every import of any of its
modules pay for all of them: ``pawflow --help`` would load the store, and ``pawflow users``
the HTTP framework. Such a package binds the names it exports lazily instead::

    __getattr__, __dir__ = lazy.exports(__name__, {"Store": "pawflow.store", ...})

and imports them under ``typing.TYPE_CHECKING`` for type checkers.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def exports(
    package: str, names: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, which exports each of ``names``
    from the module it maps to. A name is imported on its first lookup and then bound in the
    package, so later lookups are plain ones."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__

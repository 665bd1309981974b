"""The public API is curated: a sorted ``__all__`` that this test pins, in every public
package, and one error tree that ``pawflow`` exports whole."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import pawflow
from pawflow import errors

PACKAGES = [
    "pawflow",
    "pawflow.store",
    "pawflow.agent",
    "pawflow.chat",
    "pawflow.channels",
    "pawflow.flow",
    "pawflow.interactions",
    "pawflow.server",
    "pawflow.demo",
]

PUBLIC = [
    "CONTRACT",
    "AlreadyVoted",
    "ApiError",
    "Asked",
    "Clock",
    "ConfigError",
    "Conflict",
    "Continuation",
    "Conversation",
    "Delivery",
    "DeliveryError",
    "DeliveryHandler",
    "EgressRefused",
    "Event",
    "ExpressionError",
    "FakeClock",
    "FieldError",
    "FileRef",
    "FlowDefinitionError",
    "Forbidden",
    "HTTPProblem",
    "Halt",
    "HopLimitReached",
    "Interaction",
    "InvalidAnswer",
    "InvalidDuration",
    "InvalidInput",
    "InvalidPattern",
    "Kind",
    "LeaseLost",
    "Message",
    "MigrationError",
    "MissingExtra",
    "ModelError",
    "NotFound",
    "NotPending",
    "Option",
    "Park",
    "PawFlowError",
    "PayloadTooLarge",
    "Question",
    "QueueFull",
    "Requester",
    "ServerUnreachable",
    "SignInProblem",
    "SignalValue",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "SweepReport",
    "Sweeper",
    "SystemClock",
    "TaskFailed",
    "TokenRefused",
    "UndecodableCheckpoint",
    "Undeliverable",
    "__version__",
    "deadline_after",
    "default_url",
    "open_store",
    "parse_deadline",
    "parse_duration",
]


def isort_style(name: str) -> tuple[int, str]:
    """Constants, then classes, then the rest, each alphabetically."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_public_names_are_pinned_and_sorted() -> None:
    assert pawflow.__all__ == PUBLIC
    assert pawflow.__all__ == sorted(pawflow.__all__, key=isort_style)
    assert all(hasattr(pawflow, name) for name in pawflow.__all__)


def test_every_error_descends_from_one_base() -> None:
    for name in pawflow.__all__:
        value = getattr(pawflow, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, pawflow.PawFlowError)


@pytest.mark.parametrize("name", PACKAGES)
def test_every_package_exports_exactly_its_public_names(name: str) -> None:
    """A name a package binds is private (``_name``) or listed in ``__all__``, and only
    names it binds are listed: nothing is public by accident. A package that loads its names
    on first use (``pawflow.lazy``) binds each one when it is first looked up."""
    package = importlib.import_module(name)
    for listed_name in package.__all__:
        getattr(package, listed_name)  # an unknown name is an AttributeError
    public = {
        key
        for key, value in vars(package).items()
        if not key.startswith("_") and not inspect.ismodule(value) and key != "annotations"
    }
    listed = package.__all__
    assert sorted(public) == sorted(set(listed) - {"__version__"})
    assert listed == sorted(listed, key=isort_style)
    assert len(set(listed)) == len(listed)


def test_every_error_class_is_in_the_tree_and_exported() -> None:
    found = {
        value
        for value in vars(errors).values()
        if isinstance(value, type) and issubclass(value, Exception)
    }
    assert found == {
        getattr(pawflow, name)
        for name in pawflow.__all__
        if isinstance(getattr(pawflow, name), type)
        and issubclass(getattr(pawflow, name), Exception)
    }
    for error in found:
        assert issubclass(error, pawflow.PawFlowError)
        assert error.__name__ in (errors.__doc__ or ""), f"{error.__name__} is not drawn"


def test_no_error_class_lives_outside_the_tree() -> None:
    outside = []
    for module_info in pkgutil.walk_packages(pawflow.__path__, "pawflow."):
        if module_info.name.endswith("__main__"):  # runs the command line when imported
            continue
        try:
            module = importlib.import_module(module_info.name)
        except ModuleNotFoundError as missing:
            if module_info.name == "pawflow.bridges.crewai" and missing.name == "crewai":
                continue  # its framework lives in a venv of its own (docs/bridges.md#crewai)
            raise
        for key, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, Exception)
                and value.__module__ == module.__name__
                and not key.startswith("_")  # private control flow, never seen outside
                and module is not errors
            ):
                outside.append(f"{module.__name__}.{key}")
    assert outside == []


def test_the_store_and_every_public_method_of_it_say_what_they_do() -> None:
    assert pawflow.Store.__doc__
    undocumented = [
        key
        for cls in pawflow.Store.__mro__[:-1]  # the facade and the parts it is built of
        for key, value in vars(cls).items()
        if not key.startswith("_")
        and not (value.fget if isinstance(value, property) else value).__doc__
    ]
    assert undocumented == []

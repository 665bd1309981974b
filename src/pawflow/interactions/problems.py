"""How the contract words a problem: field paths, clipped names, and text it can store."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pawflow.errors import FieldError, InvalidInput


def invalid(what: str, errors: list[FieldError]) -> InvalidInput:
    """One ``InvalidInput`` whose message summarizes the first few field errors."""
    return InvalidInput(summarize(what, errors), errors)


def summarize(what: str, errors: list[FieldError]) -> str:
    shown = "; ".join(f"{e.path}: {e.message}" if e.path else e.message for e in errors[:3])
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return f"{what}: {shown}{more}"


def clip(text: str, limit: int = 40) -> str:
    """Shorten user-controlled text before it goes into a message or a path."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def name_of(key: object) -> str:
    """A dict key as it reads in a path; keys that are not text come from Python callers."""
    if isinstance(key, str):
        return clip(key)
    try:
        return clip(repr(key))
    except ValueError:  # an int too long to print
        return "<key>"


def join_path(prefix: str, parts: Iterable[str | int]) -> str:
    """``"a"`` + ``["b", 1]`` → ``"a.b[1]"``: the path form every FieldError uses."""
    path = prefix
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    return path


def is_clean_text(text: str) -> bool:
    """False for NUL and lone surrogates, which neither UTF-8 nor PostgreSQL can store."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


UNSTORABLE = "NUL characters and lone surrogates cannot be stored"
NO_NUL = r"^[^\x00]*$"
"""As a JSON Schema pattern: text without NUL."""
NOT_BLANK = r"^[^\x00]*[^ \t\n\r\f\v\x00][^\x00]*$"
"""As a JSON Schema pattern: text with something besides spaces, and no NUL. The spaces are
named rather than left to the engine's class of spaces, on which engines disagree (U+0085 is
one in Python and Rust, not in ECMAScript): a client reads the pattern as the server does."""


def unstorable_text(value: object, path: str) -> FieldError | None:
    """Where in a JSON-like ``value`` some text (a string or a key) cannot be stored, if
    anywhere: the one check every surface's questions pass, so all refuse them alike."""
    stack: list[tuple[object, str]] = [(value, path)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            if not is_clean_text(item):
                return FieldError(at, UNSTORABLE)
        elif isinstance(item, Mapping):
            for key, child in item.items():
                if isinstance(key, str) and not is_clean_text(key):
                    return FieldError(join_path(at, ["<key>"]), UNSTORABLE)
                stack.append((child, join_path(at, [name_of(key)])))
        elif isinstance(item, list | tuple):
            stack.extend((child, join_path(at, [index])) for index, child in enumerate(item))
    return None

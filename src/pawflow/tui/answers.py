"""Reading what a person typed into the JSON value a request's kind expects, and back.

Nothing here decides whether an answer is valid: text that does not read as the kind's type
is sent as typed, and the server's field errors say what is wrong. Dates and times are
entered in the local time zone and sent in UTC.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pawflow.errors import InvalidInput
from pawflow.interactions import Kind, kind_of_property
from pawflow.interactions.money import money
from pawflow.records import OptionItem

KIND_NAMES = {
    "confirm": "Yes or no",
    "choice": "Choice",
    "multi": "Several choices",
    "text": "Text",
    "multiline": "Long text",
    "integer": "Whole number",
    "decimal": "Number",
    "date": "Date",
    "datetime": "Date and time",
    "file": "File",
    "form": "Form",
}
"""Each kind as the block's tag says it (the web chat's KIND_NAMES, format.js)."""
APPROVAL_TAG = "Approval"
"""The tag of a tool approval, whatever its kind (a confirm)."""

PLACEHOLDERS = {
    "integer": "a whole number",
    "decimal": "a number, such as 12.50",
    "date": "YYYY-MM-DD",
    "datetime": "YYYY-MM-DD HH:MM (local time)",
    "file": "path of the file to upload",
}

_INTEGER = re.compile(r"[+-]?\d+")


@dataclass(frozen=True)
class Choice:
    value: str
    label: str


@dataclass(frozen=True)
class PathToUpload:
    """A file answer before its upload: the path the person typed."""

    path: Path


@dataclass(frozen=True)
class FormField:
    name: str
    kind: str
    label: str
    required: bool
    schema: Mapping[str, Any]


def local_zone_name() -> str:
    return datetime.now().astimezone().tzname() or "local time"


def integer_value(text: str) -> Any:
    text = text.strip()
    return int(text) if _INTEGER.fullmatch(text) else text


def datetime_value(text: str) -> str:
    """Local wall-clock text as an ISO-8601 instant in UTC; unreadable text as typed.

    An explicit offset in the text is kept (``2025-03-01T10:00+02:00``); a naive time is
    read in the local zone, with the offset that zone has on that day.
    """
    text = text.strip()
    try:
        moment = datetime.fromisoformat(text.replace("/", "-"))
    except ValueError:
        return text
    if moment.tzinfo is None:
        moment = moment.astimezone()  # interpreted as local time, DST of that date included
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def local_datetime_text(iso: str) -> str:
    """An ISO instant as the local wall clock, for showing an answer."""
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    return moment.astimezone().strftime("%Y-%m-%d %H:%M %Z").strip()


def scalar_value(kind: str, text: str, *, in_form: bool = False) -> Any:
    """The value to send for text typed into a single-line input of ``kind``.

    In a form an empty input means the field is left out (``None``).
    """
    if in_form and text.strip() == "":
        return None
    if kind == "integer":
        return integer_value(text)
    if kind == "decimal" or kind == "date":
        return text.strip()
    if kind == "datetime":
        return datetime_value(text)
    if kind == "file":
        return PathToUpload(Path(text.strip()).expanduser())
    return text


def options_of(record_options: Sequence[OptionItem] | None) -> list[Choice]:
    return [Choice(o["value"], o.get("label") or o["value"]) for o in record_options or []]


def enum_choices(schema: Mapping[str, Any]) -> list[Choice]:
    """A form field's choices: ``enum`` (of the field or its items) with ``enumNames``."""
    raw_items = schema.get("items")
    items: Mapping[str, Any] = raw_items if isinstance(raw_items, Mapping) else {}
    values = schema.get("enum") or items.get("enum") or []
    names = schema.get("enumNames") or items.get("enumNames") or []
    return [
        Choice(str(value), str(names[i]) if i < len(names) else str(value))
        for i, value in enumerate(values)
    ]


def form_fields(schema: Mapping[str, Any]) -> list[FormField]:
    """The fields of a form request, in the schema's order; unreadable ones are skipped."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    required = set(schema.get("required") or [])
    fields = []
    for name, prop in properties.items():
        try:
            kind = kind_of_property(dict(prop))
        except InvalidInput:
            continue
        label = str(prop.get("title") or name)
        fields.append(FormField(str(name), kind.value, label, name in required, prop))
    return fields


def field_of(path: str) -> str:
    """The form field a server error path is about: ``start`` of ``start`` or ``tags[1]``."""
    return re.split(r"[.\[]", path, maxsplit=1)[0]


def hints(kind: str, schema: Mapping[str, Any]) -> list[str]:
    """What the schema asks for, in words, so nobody has to learn it from an error."""
    found: list[str] = []
    if schema.get("description"):
        found.append(str(schema["description"]))
    if kind in ("text", "multiline"):
        if schema.get("minLength"):
            found.append(f"at least {schema['minLength']} characters")
        if schema.get("maxLength"):
            found.append(f"at most {schema['maxLength']} characters")
        if schema.get("format") == "email":
            found.append("an email address")
    if kind in ("integer", "decimal"):
        if "minimum" in schema:
            found.append(f"at least {schema['minimum']}")
        if "maximum" in schema:
            found.append(f"at most {schema['maximum']}")
    if kind == "multi":
        if schema.get("minItems"):
            found.append(f"choose at least {schema['minItems']}")
        if schema.get("maxItems"):
            found.append(f"choose at most {schema['maxItems']}")
    if kind in ("date", "datetime"):
        found.append(PLACEHOLDERS[kind])
        if kind == "datetime":
            found.append(f"in your time zone ({local_zone_name()})")
    if kind == "file":
        types = schema.get("mediaTypes")
        if isinstance(types, list) and types and types != ["*/*"]:
            found.append("type: " + ", ".join(str(t) for t in types))
        if schema.get("maxBytes"):
            found.append(f"at most {schema['maxBytes']} bytes")
    return found


def answer_text(
    kind: str,
    answer: Any,
    options: Sequence[Choice] = (),
    schema: Mapping[str, Any] | None = None,
) -> str:
    """A normalized answer as a person reads it: labels for values, a form's field titles."""
    labels = {o.value: o.label for o in options}
    schema = schema or {}
    if answer is None:
        return "—"
    if kind == "confirm":
        return "Yes" if answer else "No"
    if kind == "choice":
        return labels.get(str(answer), str(answer))
    if kind == "multi" and isinstance(answer, list):
        return ", ".join(labels.get(str(v), str(v)) for v in answer) or "none"
    if kind == "datetime" and isinstance(answer, str):
        return local_datetime_text(answer)
    if kind == "file" and isinstance(answer, Mapping):
        return f"{answer.get('name')} ({answer.get('size')} bytes)"
    if kind in ("integer", "decimal") and schema.get("x-pawflow-currency"):
        return money(answer, str(schema["x-pawflow-currency"]))
    if kind == "form" and isinstance(answer, Mapping):
        return form_answer_text(answer, schema)
    return str(answer)


def form_answer_text(answer: Mapping[str, Any], schema: Mapping[str, Any]) -> str:
    """``Title: value`` for each answered field, in the form's order, each in words."""
    fields = {field.name: field for field in form_fields(schema)}
    names = [name for name in fields if name in answer]
    names += [name for name in answer if name not in fields]
    parts = []
    for name in names:
        field = fields.get(name)
        if field is None:
            parts.append(f"{name}: {answer[name]}")
            continue
        shown = answer_text(field.kind, answer[name], enum_choices(field.schema), field.schema)
        parts.append(f"{field.label}: {shown}")
    return ", ".join(parts)


def is_known_kind(kind: object) -> bool:
    return isinstance(kind, str) and kind in {k.value for k in Kind}

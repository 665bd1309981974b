"""The web chat's copy of the contract is the contract: ``static/js/contract.js`` is generated
from the server's own definitions, and this test fails while the file is behind them.

The page imports every kind, status, channel and surface name from that one module, and
TypeScript (``make lint``) checks the page against the shapes it declares: what each action
takes and answers (from the server's OpenAPI document) and the surfaces. After a change to
the contract or the API, write the module again with::

    .venv/bin/python -m tests.server.test_webchat_contract
"""

from __future__ import annotations

import json
import tempfile
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel

import pawflow.server
from pawflow.interactions import CONTRACT, SCALAR_KINDS, Kind
from pawflow.interactions.surfaces import (
    SURFACE_CONTRACT,
    CardSurface,
    TableSurface,
)
from pawflow.records import CHANNELS, CLIENT_CHANNELS, Status
from pawflow.server.app import create_app
from pawflow.testing import temporary_store

SCRIPTS = Path(pawflow.server.__file__).parent / "static" / "js"
CONTRACT_JS = SCRIPTS / "contract.js"
REGENERATE = ".venv/bin/python -m tests.server.test_webchat_contract"
ACTIONS = "/api/actions/"

HEADER = f"""\
// @ts-check
// The contract as the web chat needs it: the names of the kinds, statuses, answer channels
// and surfaces, what each action takes and answers, and the shapes of the records. Generated
// from the server's own definitions (pawflow.interactions, pawflow.records, its OpenAPI
// document): do not edit. After a change there, write it again with
// `{REGENERATE}`
// (tests/server/test_webchat_contract.py fails while this file is behind).
"""

GUARD = """\
/**
 * Whether ``value`` is one of ``names`` (and so of their type).
 * @template {string} T
 * @param {readonly T[]} names
 * @param {unknown} value
 * @returns {value is T}
 */
export function oneOf(names, value) {
  return typeof value === "string" && /** @type {readonly string[]} */ (names).includes(value);
}
"""

# (constant, its type, what it lists, the names), in the order the module declares them.
LISTS: tuple[tuple[str, str, str, Sequence[str]], ...] = (
    ("KINDS", "Kind", "Every kind of request.", [kind.value for kind in Kind]),
    (
        "SCALAR_KINDS",
        "ScalarKind",
        "The kinds a field of a form can have (every kind but form).",
        [kind.value for kind in Kind if kind in SCALAR_KINDS],
    ),
    ("STATUSES", "Status", "Where a request stands.", get_args(Status)),
    (
        "CHANNELS",
        "Channel",
        "Where an answer came from (a record's answered_via).",
        CHANNELS,
    ),
    (
        "CLIENT_CHANNELS",
        "ClientChannel",
        "The channels a client may declare when it answers.",
        CLIENT_CHANNELS,
    ),
)

# Surfaces travel as a request's free-form ui_surface: their shapes come from their models.
SURFACES: tuple[type[BaseModel], ...] = (TableSurface, CardSurface)


def _list(constant: str, type_name: str, doc: str, names: Sequence[str]) -> str:
    items = ", ".join(json.dumps(name) for name in names)
    if len(f"export const {constant} = /** @type {{const}} */ ([{items}]);") > 100:
        items = "".join(f"\n  {json.dumps(name)}," for name in names) + "\n"
    return (
        f"/** {doc} */\n"
        f"export const {constant} = /** @type {{const}} */ ([{items}]);\n"
        f"/** @typedef {{(typeof {constant})[number]}} {type_name} */\n"
    )


def _comment(lines: Sequence[str]) -> str:
    wrapped = [part for line in lines for part in textwrap.wrap(line, 96, subsequent_indent="  ")]
    text = "\n".join(f" * {line}" for line in wrapped)
    assert "*/" not in text, f"a description would end the comment: {text}"
    return f"/**\n{text}\n */\n"


def _words(node: dict[str, Any]) -> list[str]:
    return str(node.get("description", "")).replace("``", "`").splitlines()


class _Shapes:
    """JSDoc typedefs of JSON Schemas (as the server sends and takes them)."""

    def __init__(self) -> None:
        self.named = {tuple(names): type_name for _, type_name, _, names in LISTS}
        self.written: dict[str, str] = {}
        self.expanding: set[str] = set()  # named non-object schemas being written out
        self.recursive: set[str] = set()

    def type_of(self, node: dict[str, Any], defs: dict[str, Any]) -> str:
        if "$ref" in node:
            name = str(node["$ref"]).rsplit("/", 1)[-1]
            return self.shape(name, defs[name], defs)
        if "anyOf" in node:
            return " | ".join(dict.fromkeys(self.type_of(part, defs) for part in node["anyOf"]))
        if "const" in node:
            return json.dumps(node["const"])
        if "enum" in node:
            values = tuple(node["enum"])
            return self.named.get(values) or " | ".join(json.dumps(v) for v in values)
        match node.get("type"):
            case "string":
                return "string"
            case "integer" | "number":
                return "number"
            case "boolean":
                return "boolean"
            case "null":
                return "null"
            case "array":
                return f"Array<{self.type_of(node['items'], defs)}>"
            case "object" if "properties" in node:
                fields = ", ".join(
                    f"{key}{'' if key in node.get('required', ()) else '?'}: "
                    f"{self.type_of(value, defs)}"
                    for key, value in node["properties"].items()
                )
                return f"{{{fields}}}"
            case "object":
                extra = node.get("additionalProperties", True)
                value = "unknown" if extra is True else self.type_of(extra, defs)
                return f"Record<string, {value}>"
            case None:
                return "unknown"  # any JSON value
        raise AssertionError(f"no JSDoc type for {node}")

    def shape(self, name: str, schema: dict[str, Any], defs: dict[str, Any]) -> str:
        """The typedef of one object schema (written once), or the type it names."""
        if "properties" not in schema:
            # A value defined by itself (any JSON value) has no finite JSDoc type: unknown.
            if name in self.expanding:
                self.recursive.add(name)
                return "unknown"
            self.expanding.add(name)
            try:
                written = self.type_of(schema, defs)
            finally:
                self.expanding.discard(name)
            return "unknown" if name in self.recursive else written
        if not schema["properties"] and schema.get("additionalProperties") is False:
            self.written[name] = f"/** @typedef {{Record<string, never>}} {name} */\n"
        if name not in self.written:
            self.written[name] = ""  # taken: a definition may refer to itself
            required = set(schema.get("required", ()))
            lines = [*_words(schema), f"@typedef {{object}} {name}"]
            for key, node in schema["properties"].items():
                field = key if key in required else f"[{key}]"
                words = " ".join(_words(node))
                about = f" - {words}" if words else ""
                lines.append(f"@property {{{self.type_of(node, defs)}}} {field}{about}")
            self.written[name] = _comment(lines)
        return name


def _openapi() -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory() as directory,
        temporary_store("sqlite", Path(directory)) as store,
    ):
        return create_app(store).openapi()


def _json_schema(part: dict[str, Any]) -> dict[str, Any] | None:
    schema: dict[str, Any] | None = (
        part.get("content", {}).get("application/json", {}).get("schema")
    )
    return schema


def _actions(document: dict[str, Any], shapes: _Shapes) -> str:
    """The Actions typedef: each action's body and result; the types they name are written."""
    defs = document["components"]["schemas"]
    lines = [
        "What each action takes and answers: `POST /api/actions/NAME` with `body`; its",
        "`result` (null: an empty answer).",
        "@typedef {object} Actions",
    ]
    for path, operations in document["paths"].items():
        if not path.startswith(ACTIONS):
            continue
        operation = operations["post"]
        body = _json_schema(operation["requestBody"])
        assert body is not None, path
        answers = [
            _json_schema(response)
            for status, response in operation["responses"].items()
            if status.startswith("2")
        ]
        result = " | ".join(shapes.type_of(a, defs) if a else "null" for a in answers)
        name = path.removeprefix(ACTIONS)
        lines.append(
            f"@property {{{{body: {shapes.type_of(body, defs)}, result: {result}}}}} {name}"
        )
    return _comment(lines)


def _endpoints(document: dict[str, Any], shapes: _Shapes) -> None:
    """The shapes the other JSON endpoints answer (the session, an upload)."""
    defs = document["components"]["schemas"]
    for path, operations in document["paths"].items():
        for operation in operations.values():
            for status, response in operation["responses"].items():
                answer = _json_schema(response)
                if status.startswith("2") and answer and not path.startswith(ACTIONS):
                    shapes.type_of(answer, defs)


def render() -> str:
    """The text of ``contract.js`` as the contract and the API stand."""
    constants = (
        f"export const CONTRACT = {json.dumps(CONTRACT)};\n"
        f"export const SURFACE_CONTRACT = {json.dumps(SURFACE_CONTRACT)};\n"
    )
    document = _openapi()
    shapes = _Shapes()
    actions = _actions(document, shapes)
    _endpoints(document, shapes)
    for model in SURFACES:
        schema = model.model_json_schema(mode="serialization")
        shapes.shape(model.__name__, schema, schema.get("$defs", {}))
    typedefs = [shapes.written[name] for name in sorted(shapes.written)]
    return "\n".join(
        [HEADER, constants, *(_list(*entry) for entry in LISTS), GUARD, actions, *typedefs]
    )


def test_the_web_chat_declares_the_contract_as_the_server_does() -> None:
    assert CONTRACT_JS.read_text(encoding="utf-8") == render(), (
        f"{CONTRACT_JS.name} is behind the contract: run {REGENERATE}"
    )


def test_the_kinds_are_listed_once_in_the_web_chat() -> None:
    """Every other script takes the kinds from contract.js rather than listing them again."""
    listed = ",".join(json.dumps(kind.value) for kind in (Kind.DATE, Kind.DATETIME, Kind.FILE))
    for script in sorted(set(SCRIPTS.glob("*.js")) - {CONTRACT_JS}):
        text = "".join(script.read_text(encoding="utf-8").split())
        assert listed not in text, f"{script.name} lists the kinds: import them from contract.js"


def test_every_web_chat_script_is_type_checked() -> None:
    """``make lint`` runs TypeScript over them; the pragma makes editors check them too."""
    for script in sorted(SCRIPTS.glob("*.js")):
        assert script.read_text(encoding="utf-8").startswith("// @ts-check\n"), script.name


if __name__ == "__main__":
    CONTRACT_JS.write_text(render(), encoding="utf-8")
    print(f"wrote {CONTRACT_JS}")

"""The MCP App's page: one self-contained HTML document built from the web chat's own modules.

An MCP App is a single HTML resource that a host renders in a sandboxed iframe, with no
server of its own to load scripts or styles from. The page is therefore assembled here, once
per process, from the files the web chat serves: its ES modules (``server/static/js``: blocks,
fields, surfaces, formats, the contract) and its stylesheet, plus the app's own modules
(``mcp/app``: the host bridge, ``main.js``, and an ``api.js`` that takes the place of the web
chat's, sending each action through the host instead of ``fetch``).

The modules are linked into one script: each becomes a function scope, run in dependency
order, whose exports its importers read. The linker takes the modules' plain form only —
``import {…} from "./x.js"``, ``import * as x from "./x.js"``, ``export`` before a
``function``, ``class`` or ``const`` — and refuses anything else (a default export, an
exported ``let``, ``import.meta``, a cycle) rather than guess. The page carries its own
content-security policy, as strict as the page allows: its one script and its one style
element by their SHA-256, no network, no frames, no forms sent anywhere.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import posixpath
import re
from dataclasses import dataclass
from importlib import resources

ENTRY = "mcp/app/main.js"
"""The app's entry module, a path in the pawflow package."""
SUBSTITUTES = {"server/static/js/api.js": "mcp/app/api.js"}
"""Modules of the web chat the app replaces with its own (same exports, another transport)."""
STYLESHEETS = ("server/static/app.css", "mcp/app/app.css")

_IMPORT = re.compile(
    r"^import\s+(?P<what>\{[^}]*\}|\*\s+as\s+(?P<space>[A-Za-z_$][\w$]*))"
    r'\s+from\s+"(?P<src>[^"]+)";?[ \t]*$',
    re.MULTILINE,
)
_EXPORT = re.compile(
    r"^export\s+(?P<kind>(?:async\s+)?function\*?|class|const)\s+(?P<name>[A-Za-z_$][\w$]*)",
    re.MULTILINE,
)
_LEFT_OVER = re.compile(r"^(?:import|export)\b|\bimport\.meta\b", re.MULTILINE)
_NAME = re.compile(r"[A-Za-z_$][\w$]*")


class _Unlinkable(RuntimeError):
    """The package's own modules cannot be linked into one page: a form the linker does not
    take was added to them (a fault of this package, never of a caller's input)."""


@dataclass(frozen=True)
class _Module:
    path: str
    body: str
    imports: list[tuple[str, str]]
    """(binding statement, path of the module it reads)."""
    exports: list[str]


def _read(path: str) -> str:
    return resources.files("pawflow").joinpath(path).read_text(encoding="utf-8")


def _resolve(importer: str, specifier: str) -> str:
    if not specifier.startswith("./") and not specifier.startswith("../"):
        raise _Unlinkable(f"{importer}: only relative imports can be linked, not {specifier!r}")
    path = posixpath.normpath(posixpath.join(posixpath.dirname(importer), specifier))
    if path.startswith("../"):
        raise _Unlinkable(f"{importer}: {specifier!r} leaves the package")
    return SUBSTITUTES.get(path, path)


def _bindings(what: str, space: str | None, source: str) -> str:
    """The statement that binds an import's names from the module object ``source``."""
    if space is not None:
        return f"const {space} = {source};"
    parts = []
    for item in what.strip("{} \n").split(","):
        words = item.split()
        if not words:
            continue
        if len(words) == 3 and words[1] == "as":
            parts.append(f"{words[0]}: {words[2]}")
        elif len(words) == 1:
            parts.append(words[0])
        else:
            raise _Unlinkable(f"cannot link the import {item.strip()!r}")
        for word in (words[0], words[-1]):
            if not _NAME.fullmatch(word):
                raise _Unlinkable(f"cannot link the import {item.strip()!r}")
    return f"const {{ {', '.join(parts)} }} = {source};"


def _parse(path: str) -> _Module:
    text = _read(path)
    imports: list[tuple[str, str]] = []

    def take_import(match: re.Match[str]) -> str:
        target = _resolve(path, match["src"])
        imports.append((_bindings(match["what"], match["space"], _variable(target)), target))
        return ""

    body = _IMPORT.sub(take_import, text)
    exports = [match["name"] for match in _EXPORT.finditer(body)]
    body = _EXPORT.sub(lambda m: f"{m['kind']} {m['name']}", body)
    left = _LEFT_OVER.search(body)
    if left is not None:
        line = body[: left.start()].count("\n") + 1
        raise _Unlinkable(f"{path}:{line}: the linker does not take {left.group(0)!r} here")
    return _Module(path, body, imports, exports)


def _variable(path: str) -> str:
    return "__pawflow_" + re.sub(r"\W", "_", path.removesuffix(".js"))


def _ordered(entry: str) -> list[_Module]:
    """The modules ``entry`` needs, each after the ones it imports."""
    done: dict[str, _Module] = {}
    visiting: list[str] = []

    def visit(path: str) -> None:
        if path in done:
            return
        if path in visiting:
            raise _Unlinkable(f"the modules import each other: {' -> '.join([*visiting, path])}")
        visiting.append(path)
        module = _parse(path)
        for _, needed in module.imports:
            visit(needed)
        visiting.pop()
        done[path] = module

    visit(entry)
    return list(done.values())


def link(entry: str = ENTRY) -> str:
    """One script running ``entry`` and every module it imports, in dependency order."""
    chunks = []
    for module in _ordered(entry):
        exported = ", ".join(f"get {name}() {{ return {name}; }}" for name in module.exports)
        chunks.append(
            f"// {module.path}\n"
            f"const {_variable(module.path)} = (() => {{\n"
            + "".join(f"{binding}\n" for binding, _ in module.imports)
            + f"{module.body.strip()}\n"
            f"return Object.freeze({{ {exported} }});\n"
            "})();\n"
        )
    return "\n".join(chunks)


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def policy(script: str, style: str) -> str:
    """The page's own content-security policy: its script and style, and nothing else."""
    return "; ".join(
        (
            "default-src 'none'",
            f"script-src {_digest(script)}",
            f"style-src {_digest(style)}",
            "img-src data:",
            "connect-src 'none'",
            "frame-src 'none'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'none'",
        )
    )


def _inline(text: str, tag: str) -> str:
    if f"</{tag}" in text.lower():
        raise _Unlinkable(f"the {tag} would end its element early: it holds '</{tag}'")
    return text


@functools.cache
def page() -> str:
    """The app's HTML document (built once per process: its parts are package files)."""
    script = _inline("\n" + link(), "script")
    style = _inline("\n" + "\n".join(_read(path) for path in STYLESHEETS), "style")
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy(script, style)}">\n'
        "<title>PawFlow</title>\n"
        f"<style>{style}</style>\n"
        "</head>\n<body>\n"
        '<main id="app" class="mcp-app"><p class="loading" role="status">Loading…</p></main>\n'
        '<div class="sr-only" id="announcer" role="status" aria-live="polite"></div>\n'
        f'<script type="module">{script}</script>\n'
        "</body>\n</html>\n"
    )

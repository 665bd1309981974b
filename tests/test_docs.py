"""The README and every page of docs/ work as written.

- ```python blocks run, each page's in order in one namespace, in a temporary directory
  (so the stores they open are temporary SQLite files);
- ```console blocks run their ``$ pawflow …`` commands through the CLI from the repository
  root, and what they print must match (random ids aside);
- ```yaml blocks that hold a flow (a ``tasks`` mapping) must load, and one named like an
  example flow must be that file;
- every relative link leads to a file that exists, and its ``#anchor`` to a heading there.

Other blocks (```text, ```sh, ```json) are illustrations and are not run.
"""

from __future__ import annotations

import gc
import re
import shlex
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pawflow.cli import app
from pawflow.flow import parse_flow
from pawflow.flow.registry import default_registry
from pawflow.server.app import _openapi, create_app
from pawflow.server.models import RequestInteraction
from pawflow.server.settings import ServerSettings
from pawflow.testing import temporary_store

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
EXAMPLE_FLOWS = ROOT / "src" / "pawflow" / "demo" / "flows"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
# A 16-character FlowFile id or a 22-character record id, as the CLI prints them.
RANDOM_ID = re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[A-Z])(?=[\w-]*[a-z])[\w-]{16}(?:[\w-]{6})?\b")
LOG_LINE = re.compile(r"^\[[\w.-]+\] ")  # a flow's log lines go to stderr

runner = CliRunner()


def name(page: Path) -> str:
    return str(page.relative_to(ROOT))


def blocks(page: Path, language: str) -> list[str]:
    text = page.read_text(encoding="utf-8")
    return [body for lang, body in FENCE.findall(text) if lang == language]


def pages_with(language: str) -> list[Path]:
    return [page for page in PAGES if blocks(page, language)]


def test_the_readme_stays_short() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


def test_the_index_lists_every_page() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    linked = {target.split("#")[0] for target in LINK.findall(index)}
    pages = {str(page.relative_to(DOCS)) for page in DOCS.rglob("*.md")} - {"index.md"}
    assert pages <= linked


def test_the_readme_s_manual_names_every_page_of_the_index() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    manual = readme[readme.index("## The manual") :]
    listed = {target.removeprefix("docs/").split("#")[0] for target in LINK.findall(manual)}
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    indexed = {target.split("#")[0] for target in LINK.findall(index) if target.endswith(".md")}
    assert sorted(indexed - {"../README.md"} - listed) == []


@pytest.mark.parametrize("page", pages_with("python"), ids=name)
def test_python_blocks_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # A page may register task types; they leave with the page, not into later tests.
    monkeypatch.setattr(default_registry, "_types", dict(default_registry._types))
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem.replace('-', '_')}"}
    for number, code in enumerate(blocks(page, "python"), start=1):
        exec(compile(code, f"{name(page)} (python block {number})", "exec"), namespace)
    # Whatever a page leaves open is reported here, against that page, not a later test.
    namespace.clear()
    gc.collect()


def expected_pattern(line: str) -> re.Pattern[str]:
    parts = RANDOM_ID.split(line)
    ids = RANDOM_ID.findall(line)
    pattern = re.escape(parts[0])
    for found, rest in zip(ids, parts[1:], strict=True):
        pattern += rf"[\w-]{{{len(found)}}}" + re.escape(rest)
    return re.compile(pattern)


def console_commands(block: str) -> list[tuple[str, list[str]]]:
    """``$`` commands with the lines they print."""
    commands: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            commands.append((line.removeprefix("$ "), []))
        else:
            assert commands, f"console output before any command: {line!r}"
            commands[-1][1].append(line)
    return commands


@pytest.mark.parametrize("page", pages_with("console"), ids=name)
def test_console_blocks_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # paths in the examples are relative to a checkout
    monkeypatch.setenv("PAWFLOW_DB", f"sqlite:///{tmp_path / 'docs.db'}")
    for block in blocks(page, "console"):
        for command, shown in console_commands(block):
            words = shlex.split(command)
            assert words[0] == "pawflow", f"{name(page)}: not a pawflow command: {command}"
            result = runner.invoke(app, words[1:])
            assert result.exit_code == 0, (command, result.output)
            printed = result.stdout.splitlines()
            expected = [line for line in shown if not LOG_LINE.match(line)]
            assert len(printed) == len(expected), (command, result.stdout)
            for got, want in zip(printed, expected, strict=True):
                assert expected_pattern(want).fullmatch(got), (command, got, want)


def flows_in(page: Path) -> list[str]:
    found = []
    for text in blocks(page, "yaml"):
        document = yaml.safe_load(text)
        if isinstance(document, dict) and isinstance(document.get("tasks"), dict):
            found.append(text)
    return found


@pytest.mark.parametrize("page", [p for p in PAGES if flows_in(p)], ids=name)
def test_flows_are_valid(page: Path) -> None:
    for text in flows_in(page):
        flow = parse_flow(text)
        assert flow.tasks
        shipped = EXAMPLE_FLOWS / f"{flow.name}.yaml"
        if shipped.exists():  # an example flow shown on a page is the shipped file
            assert text == shipped.read_text(encoding="utf-8")


def anchor(heading: str) -> str:
    """The anchor a heading gets on GitHub."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {anchor(heading) for heading in HEADING.findall(text)}


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_links_resolve(page: Path) -> None:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # an outside address
        path, _, fragment = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{name(page)}: {target} leads nowhere"
        if fragment:
            assert fragment in anchors(linked), f"{name(page)}: no heading for {target}"


def test_the_server_api_table_names_every_action_and_every_request_field(
    tmp_path: Path,
) -> None:
    """docs/server-api.md lists every action the server has, and every field of
    ``request_interaction`` (its policy and ``notify`` included) in that action's row."""
    with temporary_store("sqlite", tmp_path) as store:
        paths = _openapi(create_app(store, settings=ServerSettings()))["paths"]
    actions = {path.removeprefix("/api/actions/") for path in paths if "/actions/" in path}
    page = (DOCS / "server-api.md").read_text(encoding="utf-8")
    table = page[page.index("## Actions") : page.index("## Errors")]
    rows = [line.split("|") for line in table.splitlines() if line.startswith("| `")]
    named = {name for row in rows for name in re.findall(r"`([a-z_]+)`", row[1])}
    assert sorted(actions - named) == []
    [asking] = [row for row in rows if row[1].strip() == "`request_interaction`"]
    fields = {field.alias or name for name, field in RequestInteraction.model_fields.items()} - {
        "policy"
    }  # the one refused with where its fields go
    assert sorted(f for f in fields if f"`{f}`" not in asking[2]) == []

"""The tree keeps its shape: modules of one concept each, no stray files at the root."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]
MAX_LINES = 600


def test_no_module_is_over_the_limit() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in (ROOT / "src" / "pawflow").rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_the_root_holds_only_what_belongs() -> None:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    at_root = {name for name in tracked if "/" not in name}
    expected = {".gitignore", "Makefile", "README.md", "pyproject.toml"}
    assert at_root == expected


def test_the_embedded_store_never_loads_psycopg(tmp_path: Path) -> None:
    check = (
        "import sys; from pawflow import open_store; import pawflow.cli, pawflow.serve\n"
        f"open_store('sqlite:///{tmp_path / 'p.db'}').close()\n"
        "assert 'psycopg' not in sys.modules, 'psycopg was imported'\n"
    )
    subprocess.run([sys.executable, "-c", check], check=True, timeout=60)


def test_the_terminal_client_contract_names_every_other_package() -> None:
    """``pawflow.tui`` may import the HTTP client and the bottom layer only: its contract
    forbids every other module of the package, one added later included."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    [layers] = [c for c in contracts if c.get("containers") == ["pawflow"]]
    [tui] = [c for c in contracts if c.get("source_modules") == ["pawflow.tui"]]
    bottom = {name.strip() for row in layers["layers"][-2:] for name in row.split(":")}
    package = ROOT / "src" / "pawflow"
    modules = {p.stem for p in package.glob("*.py")} | {
        p.name for p in package.iterdir() if (p / "__init__.py").is_file()
    }
    # pawflow.extras: the check that says which extra to install when Textual is missing;
    # pawflow.reading: the one reader of typed answers, on the contract floor.
    allowed = {"__init__", "__main__", "tui", "client", "extras", "reading"} | bottom
    assert {m.removeprefix("pawflow.") for m in tui["forbidden_modules"]} == modules - allowed


def test_the_one_door_contract_names_every_part_of_the_store() -> None:
    """Above the store only ``pawflow.store`` itself may be imported: the one-door contract
    forbids each module at its top and each of its wings, one added later included, and
    the wings' contract places every one of them."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    [door] = [c for c in contracts if c["name"].startswith("One door into the store")]
    [wings] = [c for c in contracts if c.get("containers") == ["pawflow.store"]]
    store = ROOT / "src" / "pawflow" / "store"
    parts = {p.stem for p in store.glob("*.py")} - {"__init__"}
    parts |= {p.name for p in store.iterdir() if (p / "__init__.py").is_file()}
    assert {m.removeprefix("pawflow.store.") for m in door["forbidden_modules"]} == parts
    placed = {name.strip() for row in wings["layers"] for name in row.split("|")}
    assert placed == parts


def test_above_the_store_transactions_open_only_as_units() -> None:
    """One door: a package above the store opens a transaction with ``Store.unit()`` (or
    through one of the store's methods), never a bare ``Store.transaction()``."""
    bare = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in (ROOT / "src" / "pawflow").rglob("*.py")
        if "store" not in path.relative_to(ROOT / "src" / "pawflow").parts[:1]
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if ".transaction(" in line
    ]
    assert bare == []


def test_the_agent_never_reaches_into_the_chat_turn_queue() -> None:
    """``pawflow.agent`` knows nothing of chats: no ``<unit>.turns.<...>`` and no import of
    a ``turns`` module; what a run needs of a chat, its caller hands it (``ToolContext``)."""
    found = []
    for path in (ROOT / "src" / "pawflow" / "agent").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules: list[str] = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [alias.name for alias in node.names]
                modules = [f"{node.module or ''}.{name}" for name in names]
            reaches = (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Attribute)
                and node.value.attr == "turns"
            )
            if reaches or any("turns" in module.split(".") for module in modules):
                found.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}")
    assert found == []

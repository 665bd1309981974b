"""Starting loads what is used, and nothing else: ``pawflow --help`` loads none of the server,
``inbox`` and ``answer`` only the HTTP client, ``users`` only the store, and a server loads
the MCP SDK on the first request to ``/mcp``, not to answer its first ``/healthz``.

Each check runs in a fresh interpreter and reads ``sys.modules``: a list of modules, never a
time (``make bench`` measures the time).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from importlib.metadata import version
from pathlib import Path

import pytest
from typer.testing import CliRunner

import pawflow
from pawflow.cli import app
from pawflow.flow.engine import DEFAULT_MAX_HOPS
from pawflow.mcp.backend import DEFAULT_CONVERSATION
from tests.served import Served

# Runs `pawflow ARGS…` as the console script does, then writes the modules it loaded.
PROBE = """
import atexit, json, sys
path = sys.argv[1]
atexit.register(lambda: open(path, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["pawflow", *sys.argv[2:]]
from pawflow.cli import main
main()
"""

# The packages a command may load besides the standard library: `import pawflow.cli` and
# `--help` load typer and its dependencies only.
CLI = {"pawflow", "typer", "shellingham", "annotated_doc"}
# A command's options are read through pydantic by typer (and the records are pydantic models).
PYDANTIC = {
    "pydantic",
    "pydantic_core",
    "annotated_types",
    "typing_extensions",
    "typing_inspection",
}
COMMAND = CLI | PYDANTIC
# `inbox` and `answer` add the HTTP client, the records it reads and what they need.
CLIENT = COMMAND | {
    # httpx, its transport and its optional decoders
    *("httpx", "httpcore", "h11", "h2", "hpack", "hyperframe", "anyio", "sniffio"),
    *("certifi", "idna", "zstandard", "brotli", "brotlicffi", "socksio"),
    # httpx's command line (loaded by httpx itself) and the tables the commands print
    *("click", "rich", "pygments", "markdown_it", "mdurl"),
    # what the records need besides pydantic
    *("dateutil", "six", "re2"),
}
# pawflow.extras: the command says which extra to install when typer is missing.
PAWFLOW_CLI = {"pawflow", "pawflow.errors", "pawflow.extras", "pawflow.lazy", "pawflow.redaction"}
PAWFLOW_CLIENT = PAWFLOW_CLI | {
    *("pawflow.client", "pawflow.records", "pawflow.clock", "pawflow.durations"),
    *("pawflow.interactions", "pawflow.interactions.kinds", "pawflow.interactions.patterns"),
    "pawflow.interactions.problems",
    # The one reader of typed answers: "yse" reads as a yes in pawflow answer too.
    *("pawflow.reading", "pawflow.reading.typed", "pawflow.reading.words"),
}
# Never for these commands: the server, the MCP SDK, the terminal app, the database drivers
# beyond SQLite, telemetry.
HEAVY = {
    *("fastapi", "starlette", "uvicorn", "mcp", "mcp_types", "textual", "cryptography"),
    *("psycopg", "psycopg_pool", "prometheus_client", "opentelemetry", "yaml", "jsonschema"),
}


def loaded(
    tmp_path: Path, *args: str, env: Mapping[str, str] | None = None
) -> tuple[set[str], set[str], str]:
    """(third-party top-level packages, pawflow modules, standard output) of ``pawflow ARGS``
    in a fresh interpreter."""
    out = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(out), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return (*split(json.loads(out.read_text())), done.stdout)


def split(modules: list[str]) -> tuple[set[str], set[str]]:
    """(third-party top-level packages, pawflow modules) of ``modules``."""
    outside = {
        top
        for top in (name.partition(".")[0] for name in modules)
        if top not in sys.stdlib_module_names
        and not top.startswith("_sysconfigdata")  # the platform's sysconfig data
        and top not in {"__main__", "_distutils_hack"}  # every interpreter of this venv
    }
    return outside, {name for name in modules if name.split(".")[0] == "pawflow"}


def cli_modules(ours: set[str]) -> set[str]:
    return {name for name in ours if not name.startswith("pawflow.cli")}


def test_importing_the_command_line_loads_typer_and_nothing_of_the_server() -> None:
    check = "import json, sys, pawflow.cli; print(json.dumps(sorted(sys.modules)))"
    modules = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    outside, ours = split(json.loads(modules))
    assert outside <= CLI, f"import pawflow.cli loaded {sorted(outside - CLI)}"
    assert cli_modules(ours) <= PAWFLOW_CLI, sorted(cli_modules(ours) - PAWFLOW_CLI)


def test_help_loads_the_command_line_only(tmp_path: Path) -> None:
    outside, ours, printed = loaded(tmp_path, "--help")
    assert "Show this message and exit." in printed and "inbox" in printed
    assert outside <= CLI, f"pawflow --help loaded {sorted(outside - CLI)}"
    assert cli_modules(ours) <= PAWFLOW_CLI, sorted(cli_modules(ours) - PAWFLOW_CLI)


def test_version_is_printed_by_the_command_line_only(tmp_path: Path) -> None:
    outside, ours, printed = loaded(tmp_path, "--version")
    # One version: the package's, which its metadata (pip, the server, /healthz) also says.
    assert printed == f"pawflow {pawflow.__version__}\n" == f"pawflow {version('pawflow')}\n"
    assert outside <= CLI, f"pawflow --version loaded {sorted(outside - CLI)}"
    assert cli_modules(ours) <= PAWFLOW_CLI, sorted(cli_modules(ours) - PAWFLOW_CLI)


def test_every_command_s_help_loads_none_of_what_it_runs(tmp_path: Path) -> None:
    for command in (["serve"], ["users", "add"], ["flow", "run"], ["mcp"], ["chat"]):
        outside, ours, printed = loaded(tmp_path, *command, "--help")
        assert "--help" in printed
        assert outside <= COMMAND, (command, sorted(outside - COMMAND))
        assert cli_modules(ours) <= PAWFLOW_CLI, (command, sorted(cli_modules(ours)))


def test_help_shows_the_defaults_the_commands_use() -> None:
    """Two defaults are written out in the commands, so that --help loads nothing."""
    runner = CliRunner()
    shown = runner.invoke(app, ["mcp", "--help"]).output
    assert f"default: {DEFAULT_CONVERSATION}]" in " ".join(shown.split())
    shown = runner.invoke(app, ["flow", "run", "--help"]).output
    assert f"default: {DEFAULT_MAX_HOPS};" in " ".join(shown.split())


def test_users_load_the_store_and_never_the_server(tmp_path: Path) -> None:
    db = ["--db", f"sqlite:///{tmp_path / 'p.db'}"]
    outside, ours, printed = loaded(tmp_path, "users", "add", "ada", *db)
    assert printed.strip().splitlines()[-1].startswith("pf_")
    # The store checks answers against their schemas, and marks its work with spans through
    # the OpenTelemetry API (never its SDK or an exporter: pawflow.observability, to serve).
    heavy = HEAVY - {"jsonschema", "opentelemetry"}
    assert not outside & heavy, sorted(outside & heavy)
    assert not {"pawflow.server.app", "pawflow.observability"} & ours
    assert "httpx" not in outside
    outside, _, printed = loaded(tmp_path, "users", "revoke", "ada", *db)
    assert printed.strip() == "revoked 1 token(s) of ada and ended their browser sessions"
    assert not outside & heavy, sorted(outside & heavy)


@pytest.mark.slow
def test_inbox_and_answer_load_the_http_client_only(tmp_path: Path) -> None:
    served = Served(f"sqlite:///{tmp_path / 'pawflow.db'}", tmp_path, args=("--demo",))
    served.start()
    try:
        env = {
            **os.environ,
            "PAWFLOW_SERVER": served.url,
            "PAWFLOW_TOKEN": served.printed("export PAWFLOW_TOKEN="),
        }
        outside, ours, printed = loaded(tmp_path, "inbox", "--json", env=env)
        pending = json.loads(printed)["interactions"]
        assert outside <= CLIENT, f"pawflow inbox loaded {sorted(outside - CLIENT)}"
        assert cli_modules(ours) <= PAWFLOW_CLIENT, sorted(cli_modules(ours) - PAWFLOW_CLIENT)

        question = next(
            i for i in pending if i["message"] == "Is the PawFlow server running for you?"
        )
        outside, ours, printed = loaded(tmp_path, "answer", question["id"], "yes", env=env)
        assert f"Answered {question['id']}: true" in printed
        assert outside <= CLIENT, f"pawflow answer loaded {sorted(outside - CLIENT)}"
        assert cli_modules(ours) <= PAWFLOW_CLIENT, sorted(cli_modules(ours) - PAWFLOW_CLIENT)
    finally:
        served.kill()


# Serves as `pawflow serve` does (its modules loaded, /mcp mounted), then asks over MCP.
SERVER_PROBE = """
import json, sys
import httpx
import pawflow.serve
from pawflow.mcp.mounting import mount
from pawflow.server.testing import live_server
from pawflow.store import open_store

seen = {}
with open_store(sys.argv[1]) as store, live_server(store, endpoints=[mount]) as server:
    seen["healthz"] = httpx.get(server.url + "/healthz").status_code
    seen["before"] = "mcp" in sys.modules or "mcp_types" in sys.modules
    hello = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "probe", "version": "1"}},
    }
    headers = {"Authorization": "Bearer " + server.token("ada"),
               "Accept": "application/json, text/event-stream"}
    answered = httpx.post(server.url + "/mcp", json=hello, headers=headers, timeout=60)
    seen["mcp"] = answered.status_code
    seen["server_info"] = "serverInfo" in answered.text
    seen["after"] = "mcp" in sys.modules
print(json.dumps(seen))
"""


def test_a_server_loads_the_mcp_sdk_on_the_first_request_to_mcp(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SERVER_PROBE, f"sqlite:///{tmp_path / 'p.db'}"],
        capture_output=True,
        text=True,
        timeout=100,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {
        "healthz": 200,
        "before": False,
        "mcp": 200,
        "server_info": True,
        "after": True,
    }

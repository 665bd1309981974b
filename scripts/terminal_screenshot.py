"""Take the terminal client's screenshot for docs/terminal.md from the real app.

Serves a fresh store on a loopback port, fills a conversation, runs ``pawflow chat``'s app
headless against it and writes an SVG::

    .venv/bin/python scripts/terminal_screenshot.py [--out docs/img/terminal.svg]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from pawflow.server.tour import EXAMPLES

from pawflow.client import Client
from pawflow.server.settings import ServerSettings
from pawflow.server.testing import live_server
from pawflow.store import open_store
from pawflow.tui import ChatApp

USER = "ada"


def example(kind: str, title: str | None = None) -> dict[str, object]:
    return next(
        dict(e)
        for e in EXAMPLES
        if e["kind"] == kind and (title is None or e.get("title") == title)
    )


async def shoot(client: Client, conversation: str, out: Path) -> None:
    app = ChatApp(client, conversation_id=conversation)
    async with app.run_test(size=(130, 44)) as pilot:
        deadline = time.monotonic() + 20
        while not (app.hydrations and app.connection.value == "live"):
            if time.monotonic() > deadline:
                raise RuntimeError("the app did not load")
            await pilot.pause(0.05)
        await pilot.press("ctrl+n")
        await pilot.pause(0.3)
        app.save_screenshot(filename=out.name, path=str(out.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("docs/img/terminal.svg"))
    out = parser.parse_args().out
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as directory:
        store = open_store(f"sqlite:///{Path(directory) / 'pawflow.db'}")
        settings = ServerSettings(sweep_interval=3600)
        with (
            store,
            live_server(store, settings=settings) as server,
            Client(server.url, server.token(USER)) as client,
        ):
            ops = client.create_conversation("Release 2.4").id
            client.create_conversation("Weekly report")
            store.messages.append(ops, "Ship **release 2.4** today?", role="user", author=USER)
            store.messages.append(
                ops,
                "Checks passed. Two things need you:\n\n1. the deploy\n2. the flight",
                role="assistant",
                author="planner",
            )
            for found in (example("confirm", "Deploy"), example("choice", "Flight")):
                kind, message = str(found.pop("kind")), str(found.pop("message"))
                client.request_interaction(ops, kind, message, **found)
            asyncio.run(shoot(client, ops, out))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

"""MCP clients of a real server: the SDK's own client, over streamable HTTP and stdio."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from pawflow.server.testing import LiveServer
from tests.server.conftest import QUIET, Api, api, live, make_server, server_backend, unique

__all__ = ["QUIET", "Api", "api", "live", "make_server", "server_backend", "unique"]


@asynccontextmanager
async def http_client(server: LiveServer, token: str, **options: Any) -> AsyncIterator[Client]:
    """The SDK's client on ``/mcp`` with a bearer token."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    async with http:
        transport = streamable_http_client(f"{server.url}/mcp", http_client=http)
        async with Client(transport, **options) as client:
            yield client


@asynccontextmanager
async def stdio_client(server: LiveServer, token: str, **options: Any) -> AsyncIterator[Client]:
    """The SDK's client launching ``pawflow mcp`` against ``server``."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "pawflow", "mcp", "--server", server.url],
        env={**os.environ, "PAWFLOW_TOKEN": token},  # never on the command line
    )
    async with Client(params, **options) as client:
        yield client


def structured(result: Any) -> dict[str, Any]:
    """A tool result's structured content, checked against its text twin."""
    assert not result.is_error, result.content
    body: dict[str, Any] = result.structured_content
    assert json.loads(result.content[0].text.split("\n", 1)[1]) == body
    return body


def error_text(result: Any) -> str:
    assert result.is_error
    return str(result.content[0].text)


@pytest.fixture
def user_api(api: Callable[[str], Api]) -> Iterator[Callable[[str], tuple[Api, str]]]:
    """A new user's action-API client and a token of theirs for MCP."""

    def make(name: str) -> tuple[Api, str]:
        client = api(name)
        return client, client.server.token(client.user)

    yield make

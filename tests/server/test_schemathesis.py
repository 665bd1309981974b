"""Property-based checks of the whole API against its own OpenAPI document: generated
requests, valid and deliberately invalid, never cause a server error, and every response
is one the document declares, in the shape it declares."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from pawflow.server.testing import LiveServer, live_server
from pawflow.testing import temporary_store
from tests.server.conftest import QUIET

pytestmark = pytest.mark.slow

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
EXAMPLES = 20


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, str]]:
    with (
        temporary_store("sqlite", tmp_path_factory.mktemp("fuzz")) as store,
        live_server(store, settings=QUIET) as server,
    ):
        yield server, server.token("fuzzer")


Operation = schemathesis.APIOperation[Any, Any, Any, Any]


def operations(server: LiveServer, token: str) -> list[Operation]:
    schema = schemathesis.openapi.from_url(
        f"{server.url}/openapi.json", headers={"Authorization": f"Bearer {token}"}
    ).exclude(path="/api/events")  # a stream that never ends by itself
    found: list[Operation] = []
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result
        found.append(result.ok())
    return found


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_api_conforms_to_its_schema(fuzzed: tuple[LiveServer, str], mode: GenerationMode) -> None:
    server, token = fuzzed
    auth = {"Authorization": f"Bearer {token}"}
    found = operations(server, token)
    assert len(found) >= 17
    tested = 0
    for operation in found:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def check(case: schemathesis.Case[Operation]) -> None:
            case.call_and_validate(headers=auth, checks=CHECKS)

        try:
            check()
        except Unsatisfiable:
            # Nothing to get wrong: an operation without parameters has no invalid input.
            assert mode is GenerationMode.NEGATIVE, operation.label
            continue
        tested += 1
    assert tested >= 15

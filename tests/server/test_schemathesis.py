"""Property-based checks of the whole API against its own OpenAPI document, with every check
schemathesis has (``--checks all``): generated requests, valid and deliberately invalid,
never cause a server error; every response is one the document declares, in the shape it
declares; a request the document says is invalid is refused, and one it says is valid is
accepted — the document states what the server enforces (patterns, lengths, bounds, which
fields go together).

The one thing JSON Schema cannot state is how the parts of a ``response_schema``, a
``ui_surface`` or a list of ``options`` agree with each other (a minimum not above its
maximum, one label per enum value, form fields that exist, a surface that fits its kind,
option values that differ): the contract checks those (docs/contract.md) and names each
problem in a 422. Nor can it state where a webhook's ``url``, a ``notify_url`` or a push
``endpoint`` leads (whether Apprise reads it, whether its host resolves inside the server's
network), nor whether a channel named in ``set_notifications``'s ``notify`` is one this
server sends: the server checks that too, with a 422 on the field. Only such a 422 may answer
a request the document admits."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS as REGISTERED_CHECKS
from schemathesis.checks import load_all_checks
from schemathesis.core.failures import Failure
from schemathesis.core.result import Ok

from pawflow.server.testing import LiveServer, live_server
from pawflow.testing import temporary_store
from tests.server.conftest import QUIET

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # a hang guard, not a speed

load_all_checks()
EXAMPLES = 4
CONTRACT_FIELDS = re.compile(
    r"(response_schema|ui_surface|options|on_expire)([.\[]|$)|(notify_)?url$|notify$|endpoint$|expires$"
)
"""Fields whose inner agreement the contract checks, beyond what JSON Schema can say (an
``on_expire`` answer must be a valid answer of the request, which needs a deadline; where a
webhook's, a notification URL's or a push endpoint's host resolves; whether a token's
lifetime fits the server's PAWFLOW_TOKEN_MAX_AGE; whether this server sends the channels a
user's ``notify`` names)."""


def schema_valid_requests_are_accepted(ctx: Any, response: Any, case: Any) -> bool | None:
    """``positive_data_acceptance``, with the one exception the module's docstring names."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return None
    if response.status_code not in (400, 422):
        return None
    paths = [error.get("path", "") for error in (response.json().get("errors") or [])]
    if response.status_code == 422 and paths and all(CONTRACT_FIELDS.match(p) for p in paths):
        return None
    raise Failure(
        operation=case.operation.label,
        title="Schema-valid request rejected",
        message=f"{response.status_code}: {response.text[:500]}",
    )


def _negative_data_rejection(ctx: Any, response: Any, case: Any) -> bool | None:
    """``negative_data_rejection``, except for an upload whose ``file`` part was "made" a
    number or a boolean: multipart carries bytes only, so the server receives a valid file
    (``8765`` is a four-byte file), and accepting it is right."""
    body = case.body
    if (
        case.operation.path == "/api/files"
        and str(case.media_type or "").startswith("multipart/")
        and isinstance(body, dict)
        and "file" in body
        and not isinstance(body["file"], bytes | str)
        and response.status_code < 400
    ):
        return None
    rejects: Any = REJECTS_NEGATIVE  # schemathesis types its checks loosely
    result: bool | None = rejects(ctx, response, case)
    return result


REPLACED = {"positive_data_acceptance", "negative_data_rejection"}
[REJECTS_NEGATIVE] = [
    c for c in REGISTERED_CHECKS.get_all() if c.__name__ == "negative_data_rejection"
]
CHECKS = [check for check in REGISTERED_CHECKS.get_all() if check.__name__ not in REPLACED] + [
    schema_valid_requests_are_accepted,
    _negative_data_rejection,
]


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, str, str]]:
    with (
        temporary_store("sqlite", tmp_path_factory.mktemp("fuzz")) as store,
        live_server(store, settings=QUIET) as server,
    ):
        conversation = store.create_conversation("fuzzer", "fuzzed").id
        yield server, server.token("fuzzer"), conversation


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
def test_api_conforms_to_its_schema(
    fuzzed: tuple[LiveServer, str, str], mode: GenerationMode
) -> None:
    server, token, conversation = fuzzed
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
            body = case.body
            if (
                mode is GenerationMode.POSITIVE
                and isinstance(body, dict)
                and isinstance(body.get("conversation_id"), str)
            ):
                # A conversation of the caller's: past the 404, to the rules of the fields.
                body["conversation_id"] = conversation
            case.call_and_validate(headers=auth, checks=CHECKS)

        try:
            check()
        except Unsatisfiable:
            # Nothing to get wrong: an operation without parameters has no invalid input.
            assert mode is GenerationMode.NEGATIVE, operation.label
            continue
        tested += 1
    assert tested >= 15

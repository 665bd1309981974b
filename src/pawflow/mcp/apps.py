"""MCP Apps (``io.modelcontextprotocol/ui``): a PawFlow question answered inside the host.

A client negotiates the extension by listing ``text/html;profile=mcp-app`` under
``capabilities.extensions["io.modelcontextprotocol/ui"].mimeTypes``. To such a host:

- the asking tools (``request_confirmation``, ``request_user_input``) are linked to the app
  (``_meta.ui.resourceUri``), whose page the host renders in a sandboxed iframe with the
  tool's result: the request's block, drawn by the web chat's own modules
  (:mod:`pawflow.mcp.app_page`);
- the resource is served as ``text/html;profile=mcp-app`` with ``_meta.ui.csp`` declaring no
  domain at all: the page loads nothing and connects nowhere (its own policy says the same);
- two tools are listed for the app only (``_meta.ui.visibility: ["app"]``: the host keeps them
  from the model): ``app_action`` runs one of the web chat's actions on a request
  (``respond_interaction`` — recorded as ``answered_via: "mcp-app"`` —,
  ``cancel_interaction``, ``get_interaction``, ``claim_interaction``,
  ``release_interaction``), with the action API's body and result, and ``app_upload`` keeps a
  file for a file answer (its bytes in base64). Both go to the same store calls as every
  client, so validation, assignees, quorum and the audit trail apply; a refusal carries the
  action API's error body and status (``code``).

An asking tool called by such a host publishes the request and returns it at once, pending:
the app is where the person answers (nothing is elicited, ``wait_seconds`` is not waited).
The request stays durable: the page closed, it waits and can be answered anywhere; answered
elsewhere, the page (reading it now and then with ``get_interaction``) shows who answered and
how.
A client without the extension sees none of this: the six tools and the pending list, as
before.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Annotated, Any, Literal

import mcp_types as types
from mcp.server.apps import APP_MIME_TYPE, ResourceCsp, client_supports_apps
from mcp.server.apps import EXTENSION_ID as EXTENSION_ID
from mcp.server.context import ServerRequestContext
from pydantic import BaseModel, Field, StrictStr, ValidationError
from starlette.exceptions import HTTPException

from pawflow.errors import (
    ApiError,
    FieldError,
    HTTPProblem,
    InvalidInput,
    PawFlowError,
    ServerUnreachable,
)
from pawflow.mcp.app_page import page
from pawflow.mcp.backend import Backend
from pawflow.mcp.tools import ASKING, result
from pawflow.server import models as m
from pawflow.server.bodies import parse_json
from pawflow.server.errors import pawflow_error_response, problem_response, validation_errors
from pawflow.server.governance import ClaimBody
from pawflow.server.models import in_words

APP_URI = "ui://pawflow/question.html"
VIA = "mcp-app"
"""``answered_via`` of an answer given in the app (and ``via`` of its claims)."""
ACTION_TOOL = "app_action"
UPLOAD_TOOL = "app_upload"
APP_TOOLS = frozenset({ACTION_TOOL, UPLOAD_TOOL})

AppActionName = Literal[
    "respond_interaction",
    "cancel_interaction",
    "get_interaction",
    "claim_interaction",
    "release_interaction",
]
_BODIES: dict[str, type[BaseModel]] = {
    "respond_interaction": m.Respond,
    "cancel_interaction": m.RequestRef,
    "get_interaction": m.RequestRef,
    "claim_interaction": ClaimBody,
    "release_interaction": ClaimBody,
}


class AppAction(m.Body):
    """One of the web chat's actions on a request, as its page sends it."""

    action: AppActionName = Field(description="The action, named as in the action API.")
    body: dict[str, Any] = Field(description="The action's body, as the action API takes it.")


class AppUpload(m.Body):
    """A file for a request's file answer (or a form's file field), its bytes in base64."""

    request_id: m.Id
    field: Annotated[StrictStr, Field(max_length=64, pattern=m.NO_NUL)] | None = None
    name: Annotated[StrictStr, Field(max_length=1000)] = Field(description="The file's name.")
    media_type: Annotated[StrictStr, Field(max_length=255)] | None = None
    content: StrictStr = Field(description="The file's bytes, base64-encoded.")


def negotiated(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the caller's host renders MCP Apps (it declared the extension and its type)."""
    return client_supports_apps(ctx)


def _ui(**fields: Any) -> dict[str, Any]:
    return {"ui": fields}


def linked(tools: list[types.Tool]) -> list[types.Tool]:
    """``tools`` with the asking ones linked to the app, then the app's own tools."""
    found = [
        tool.model_copy(update={"meta": {**(tool.meta or {}), **_ui(resourceUri=APP_URI)}})
        if tool.name in ASKING
        else tool
        for tool in tools
    ]
    only_app = _ui(resourceUri=APP_URI, visibility=["app"])
    found.append(
        types.Tool(
            name=ACTION_TOOL,
            title="PawFlow app: act on a request",
            description="For PawFlow's app only (the model does not call it): run one of the "
            "web chat's actions on a request - answer it (answered_via mcp-app), cancel it, "
            "read it with its policy and audit trail, claim or release it.",
            input_schema=AppAction.model_json_schema(),
            _meta=only_app,
        )
    )
    found.append(
        types.Tool(
            name=UPLOAD_TOOL,
            title="PawFlow app: upload a file",
            description="For PawFlow's app only (the model does not call it): keep a file, "
            "its bytes in base64, for a request's file answer.",
            input_schema=AppUpload.model_json_schema(),
            _meta=only_app,
        )
    )
    return found


def _resource_meta() -> dict[str, Any]:
    # No domain of any kind: the page loads nothing and connects nowhere (the host's default
    # policy, and the page's own, forbid the rest). It draws its own border.
    csp = ResourceCsp(connect_domains=[], resource_domains=[], frame_domains=[])
    return _ui(csp=csp.model_dump(by_alias=True, exclude_none=True), prefersBorder=False)


def resource() -> types.Resource:
    """The app's entry in ``resources/list``."""
    return types.Resource(
        uri=APP_URI,
        name="question",
        title="PawFlow question",
        description="A PawFlow request drawn as the web chat draws it, answerable in place.",
        mime_type=APP_MIME_TYPE,
        _meta=_resource_meta(),
    )


def read() -> types.ReadResourceResult:
    """``resources/read`` of the app: its one self-contained page."""
    contents = types.TextResourceContents(
        uri=APP_URI, mime_type=APP_MIME_TYPE, text=page(), _meta=_resource_meta()
    )
    return types.ReadResourceResult(contents=[contents])


# -- the app's tools ---------------------------------------------------------------------------


class _Refused(Exception):
    """An app call refused with the action API's status and error body."""

    def __init__(self, code: int, body: dict[str, Any]) -> None:
        super().__init__(body.get("error"))
        self.code = code
        self.body = body


def _parsed(model: type[BaseModel], value: Any, *, arguments: bool = False) -> Any:
    """``value`` as ``model``; else a 422 naming each field, as the action API's: paths
    relative to the action's body, or to the tool's ``arguments``."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        if arguments:
            errors = [
                FieldError(".".join(str(p) for p in e["loc"]), in_words(e)) for e in exc.errors()
            ]
        else:
            errors = validation_errors(exc.errors())
        summary = "; ".join(f"{e.path or 'body'}: {e.message}" for e in errors[:3])
        raise InvalidInput(f"invalid request: {summary}", errors) from None


def _as_read(body: dict[str, Any]) -> Any:
    """``body`` read as the action API reads a body: storable text only, bounded nesting, and
    fractional numbers as exact decimals."""
    try:
        raw = json.dumps(body, ensure_ascii=True, allow_nan=False).encode()
        return parse_json(raw, exact=True)
    except ValueError as exc:  # a number JSON cannot hold
        raise _Refused(400, {"error": f"the body is not valid JSON: {exc}"}) from None
    except HTTPException as exc:
        raise _Refused(400, {"error": str(exc.detail)}) from None


def _refusal(exc: _Refused | PawFlowError) -> _Refused:
    """What the action API would have answered, as status and body."""
    if isinstance(exc, _Refused):
        return exc
    if isinstance(exc, ApiError):  # the HTTP API's own answer (``pawflow mcp``)
        body = exc.body if isinstance(exc.body, dict) else {"error": exc.message}
        return _Refused(exc.status, body)
    if isinstance(exc, ServerUnreachable):
        return _Refused(503, {"error": "the PawFlow server cannot be reached; try again"})
    if isinstance(exc, HTTPProblem):
        response = problem_response(exc)
    else:
        response = pawflow_error_response(exc)
    return _Refused(response.status_code, json.loads(bytes(response.body)))


async def _act(backend: Backend, call: AppAction) -> tuple[dict[str, Any], str]:
    body = _parsed(_BODIES[call.action], _as_read(call.body))
    if call.action == "respond_interaction":
        record = await backend.respond(body.request_id, body.answer, via=VIA)
        return {"interaction": record.to_dict()}, f"request {record.id} is {record.status}"
    if call.action == "cancel_interaction":
        record = await backend.cancel(body.request_id)
        return {"interaction": record.to_dict()}, f"request {record.id} is {record.status}"
    if call.action == "get_interaction":
        found = await backend.details(body.request_id)
    else:
        release = call.action == "release_interaction"
        found = await backend.claim(body.request_id, release=release, via=VIA)
    return found, f"request {body.request_id}: {len(found.get('audit', []))} step(s)"


async def _upload(backend: Backend, call: AppUpload) -> tuple[dict[str, Any], str]:
    try:
        content = base64.b64decode(call.content, validate=True)
    except (binascii.Error, ValueError):
        message = "must be the file's bytes in base64"
        raise InvalidInput(f"content: {message}", [FieldError("content", message)]) from None
    ref = await backend.upload(call.request_id, call.field, call.name, call.media_type, content)
    return {"file": ref.to_dict()}, f"kept {ref.name} ({ref.size} bytes)"


async def call_app_tool(
    backend: Backend, name: str, arguments: dict[str, Any] | None
) -> types.CallToolResult:
    """Run one of the app's tools: the action API's result, or its refusal (``is_error``,
    with ``code`` and the error body as structured content)."""
    try:
        if name == ACTION_TOOL:
            call = _parsed(AppAction, arguments or {}, arguments=True)
            found, summary = await _act(backend, call)
        else:
            upload = _parsed(AppUpload, arguments or {}, arguments=True)
            found, summary = await _upload(backend, upload)
    except (_Refused, PawFlowError) as exc:  # every refusal the store, the API or a model gives
        refused = _refusal(exc)
        text = "\n".join(
            [str(refused.body.get("error", "refused"))]
            + [f"{e.get('path') or 'answer'}: {e.get('message')}" for e in _errors(refused.body)]
        )
        return types.CallToolResult(
            content=[types.TextContent(text=text)],
            structured_content={"code": refused.code, **refused.body},
            is_error=True,
        )
    return result(found, summary)


def _errors(body: dict[str, Any]) -> list[dict[str, Any]]:
    found = body.get("errors")
    return [e for e in found if isinstance(e, dict)] if isinstance(found, list) else []

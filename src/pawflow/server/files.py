"""Uploads for ``file`` answers: ``POST /api/files`` and ``GET /api/files/{id}``.

An upload names, optionally, the request it is meant for; it is then checked against that
request's file constraints (``maxBytes``, ``mediaTypes``) before it is stored, so a
wrong file is refused at once rather than when the answer is sent. An answer may only
refer to an upload its answerer made (the contract's answer check asks the store).
"""

from __future__ import annotations

import mimetypes
import posixpath
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, File, Form, Path, Request, UploadFile
from fastapi.responses import JSONResponse, Response

from pawflow.errors import FieldError, InvalidInput, PayloadTooLarge
from pawflow.interactions import Kind, kind_of_property
from pawflow.interactions.answers import media_type_matches
from pawflow.interactions.kinds import MEDIA_TYPE
from pawflow.interactions.problems import is_clean_text
from pawflow.records import FileRef, Interaction
from pawflow.server import models as m
from pawflow.server.auth import Principal, caller
from pawflow.server.context import ServerContext, context_of
from pawflow.server.errors import ERROR_RESPONSES
from pawflow.store import Store

router = APIRouter(prefix="/api/files", tags=["files"])

Caller = Annotated[Principal, Depends(caller)]


def _refuse(path: str, message: str) -> InvalidInput:
    return InvalidInput(message, [FieldError(path, message)])


def _file_constraints(record: Interaction, field: str | None) -> list[dict[str, Any]]:
    """The schemas an upload for ``record`` (and form ``field``) may satisfy."""
    schema = record.response_schema
    if record.kind == Kind.FILE.value:
        if field is not None:
            raise _refuse("field", "only form requests have fields")
        return [schema]
    if record.kind != Kind.FORM.value:
        raise _refuse("request_id", "that request does not take a file")
    properties = schema.get("properties", {})
    names = [field] if field is not None else list(properties)
    found = []
    for name in names:
        prop = properties.get(name)
        if isinstance(prop, dict) and kind_of_property(prop) is Kind.FILE:
            found.append(prop)
    if not found:
        raise _refuse("field" if field else "request_id", "no file field to upload for")
    return found


def _check_against(constraints: list[dict[str, Any]], size: int, media_type: str) -> None:
    problems = []
    for schema in constraints:
        limit = schema.get("maxBytes")
        accepted = schema.get("mediaTypes", ["*/*"])
        if isinstance(limit, int) and size > limit:
            problems.append(f"the file must be at most {limit} bytes")
        elif not media_type_matches(media_type, accepted):
            problems.append(f"the file type must be one of: {', '.join(accepted)}")
        else:
            return
    raise _refuse("file", problems[0])


def _answerable(store: Store, request_id: str, user: str) -> Interaction:
    return store.answerable_interaction(request_id, user=user)


def _media_type(declared: str | None, name: str) -> str:
    media = (declared or "").split(";", 1)[0].strip().lower()
    if not media or media == "application/octet-stream":
        media = (mimetypes.guess_type(name)[0] or "application/octet-stream").lower()
    if not MEDIA_TYPE.fullmatch(media) or "*" in media:
        raise _refuse("file", "the file's media type is not a valid type such as image/png")
    return media


def _file_name(raw: str | None) -> str:
    name = posixpath.basename((raw or "").replace("\\", "/")).strip()
    if not name:
        return "upload"
    if len(name) > 200 or not is_clean_text(name) or not name.isprintable():
        raise _refuse("file", "the file name is too long or has invalid characters")
    return name


@router.post(
    "",
    summary="Upload a file to answer a file request with",
    status_code=201,
    # A field names a part of a request's form: it comes with the request. (An empty form
    # value counts as absent.)
    openapi_extra={
        "requestBody": {
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "if": {"required": ["field"], "properties": {"field": {"minLength": 1}}},
                        "then": {
                            "required": ["request_id"],
                            "properties": {"request_id": {"minLength": 1}},
                        },
                    }
                }
            }
        }
    },
    response_model=m.FileEnvelope,
    responses={
        k: v for k, v in ERROR_RESPONSES.items() if k in (400, 401, 403, 404, 413, 422, 429)
    },
)
def upload(
    principal: Caller,
    request: Request,
    file: Annotated[UploadFile, File(description="The file's bytes")],
    request_id: Annotated[str | None, Form(max_length=200, pattern=m.NO_NUL)] = None,
    field: Annotated[str | None, Form(max_length=64, pattern=m.NO_NUL)] = None,
) -> JSONResponse:
    ctx = context_of(request)
    content = file.file.read(upload_cap(ctx) + 1)
    ref = accept_upload(
        ctx, principal.user, content, file.filename, file.content_type, request_id, field
    )
    return JSONResponse({"file": ref.to_dict()}, status_code=201)


def upload_cap(ctx: ServerContext) -> int:
    """The most bytes an upload may have: the server's setting, within the store's cap."""
    return min(ctx.settings.max_upload, ctx.store.file_cap)


def accept_upload(
    ctx: ServerContext,
    user: str,
    content: bytes,
    filename: str | None,
    declared_type: str | None,
    request_id: str | None,
    field: str | None,
) -> FileRef:
    """Keep ``content`` as an upload of ``user``, checked as ``POST /api/files`` checks it
    (its size, name and type, and the file constraints of the request it is for)."""
    store = ctx.store
    cap = upload_cap(ctx)
    if len(content) > cap:
        raise PayloadTooLarge(f"the file exceeds the cap of {cap} bytes")
    name = _file_name(filename)
    media_type = _media_type(declared_type, name)
    if request_id is not None:
        record = _answerable(store, request_id, user)
        _check_against(_file_constraints(record, field), len(content), media_type)
    elif field is not None:
        raise _refuse("field", "give request_id with field")
    return store.add_file(user, name, media_type, content)


@router.get(
    "/{file_id}",
    summary="Download an upload",
    response_class=Response,
    responses={
        200: {"content": {"application/octet-stream": {"schema": {"type": "string"}}}},
        **{k: v for k, v in ERROR_RESPONSES.items() if k in (401, 404, 429)},
    },
)
def download(
    file_id: Annotated[str, Path(pattern=m.NO_NUL)], principal: Caller, request: Request
) -> Response:
    store = context_of(request).store
    # The uploader, or whoever may read a request it answers: one indexed lookup, so an
    # unknown id and someone else's answer alike (same body, same cost).
    ref = store.readable_file(file_id, user=principal.user)
    with store.unit(write=False) as u:
        content = u.conversations.file_content(ref.id)
    # Served as an attachment, never rendered here: an upload must not run as this origin.
    return Response(
        content,
        media_type="application/octet-stream",
        headers={
            "Content-Disposition": f"attachment; filename*=UTF-8''{quote(ref.name, safe='')}",
            "Content-Security-Policy": "sandbox",
            "X-PawFlow-Media-Type": ref.media_type,
            "X-PawFlow-SHA256": ref.sha256,
        },
    )

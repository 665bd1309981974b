"""Answer links: ``GET /a/<token>`` shows a question, ``POST /a/<token>`` answers it.

A link answers one request as one user, without signing in
(:mod:`pawflow.store.reach.answer_links`). Opening it never answers: mail scanners fetch every
link they see. The page shows the question with a control for its kind, labelled as in the
web chat; a confirm's or a choice's one-click button from a mail opens
``/a/<token>/confirm?pick=N``, a page whose button posts that answer. A tool approval shows
the call and a form per decision the tool offers (:mod:`pawflow.server.answer_approvals`).
The POST goes through ``respond_interaction``'s own validation (``answered_via: "link"``)
and spends the link in the answer's transaction; a refused answer shows its field errors (or
whom the request waits for) and leaves the link as it was, keeping none of the files it
carried. A link whose user's tokens were revoked answers nothing. Once the request is
settled, from anywhere, the page says who answered, when and how. Nothing a visitor sends
can point a link at another request, and the secret in the path is masked in every log line
(:mod:`pawflow.redaction`).
"""

from __future__ import annotations

import html
from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from starlette.datastructures import FormData, UploadFile

from pawflow.channels import settled_text
from pawflow.channels.base import VOTE_COUNTED, buttons_for
from pawflow.errors import AlreadyVoted, Conflict, Forbidden, InvalidInput, NotFound, NotPending
from pawflow.interactions import Kind
from pawflow.interactions.kinds import kind_of_property
from pawflow.interactions.tool_approval import is_tool_approval
from pawflow.interactions.tool_approval import outcome as decision_text
from pawflow.records import Interaction
from pawflow.server import answer_approvals
from pawflow.server.auth import client_address
from pawflow.server.context import context_of
from pawflow.server.signin_page import page
from pawflow.store import AnswerLink, Store, Unit

router = APIRouter(include_in_schema=False)

LABELS = {
    "text": "Your answer",
    "multiline": "Your answer",
    "integer": "Whole number",
    "decimal": "Number",
    "date": "Date",
    "datetime": "Date and time",
    "file": "File",
}
"""The web chat's labels (static/js/fields.js), so a question reads the same everywhere."""
_INPUT_TYPES = {"integer": "number", "decimal": "text", "date": "date", "datetime": "text"}
_PLACEHOLDERS = {"datetime": "2026-11-29T10:00:00Z", "decimal": "12.50"}
_PLACEHOLDER_HINTS = {
    "datetime": "A date and time with its zone, such as 2026-11-29T10:00:00Z",
    "decimal": "A number, such as 12.50",
}
_UNUSABLE = (
    "<h1>This link cannot answer anything</h1><p>It is unknown or was mistyped. "
    "Open the question in PawFlow instead.</p>"
)


def _grant(request: Request, token: str) -> tuple[AnswerLink, Interaction] | None:
    """What the link grants; an unknown secret counts as a failed guess from its address."""
    ctx = context_of(request)
    address = client_address(request)
    ctx.auth_failures.check(address)
    with ctx.store.unit(write=False) as u:
        grant = u.answer_links.find(token)
        if grant is None:
            ctx.auth_failures.failed(address)
            return None
        return grant, u.outbox.request_of(grant.request_id)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _question(request: Interaction) -> str:
    title = f"<h1>{_e(request.title)}</h1>" if request.title else "<h1>A question for you</h1>"
    body = "".join(f"<p>{_e(p)}</p>" for p in request.message.split("\n\n") if p.strip())
    return title + body


def _outcome(
    request: Interaction, grant: AnswerLink, store: Store, *, deadline: bool = True
) -> str | None:
    """The page of a settled request or a link that can no longer answer; None if it can."""
    if request.status != "pending":
        return (
            f'<p class="note"><strong>{_e(settled_text(request))}.</strong>{_decided(request)}</p>'
        )
    if grant.revoked_at is not None:
        return '<p class="note">This link no longer answers: its access was revoked.</p>'
    if grant.used_at is not None:
        return '<p class="note">This link was used already.</p>'
    if deadline and grant.expired(store.now()):
        return '<p class="note">This request has expired.</p>'
    return None


def _decided(request: Interaction) -> str:
    """A tool approval's decision, after the line on who answered (else nothing)."""
    said = decision_text(request.answer) if is_tool_approval(request.ui_surface) else ""
    return f" {_e(said)}." if said else ""


def _field_of(path: str) -> str:
    """The field a problem's path names (``/amount``, ``answer.amount``: ``amount``)."""
    return path.strip("/").removeprefix("answer").strip("./").split("/")[0].split(".")[0]


def _errors(problems: list[tuple[str, str]]) -> str:
    """The problems no field shows beside itself, above the form."""
    if not problems:
        return ""
    items = "".join(f"<li>{_e(f'{p}: ' if p else '')}{_e(m)}</li>" for p, m in problems)
    return f'<div class="error" role="alert"><p>Not answered:</p><ul>{items}</ul></div>'


def _titles(schema: dict[str, Any]) -> tuple[list[Any], list[str]]:
    """The values a choice offers and their titles (``oneOf`` titles, ``enumNames``)."""
    one_of = [o for o in schema.get("oneOf", []) if isinstance(o, dict) and "const" in o]
    if one_of:
        return [o["const"] for o in one_of], [str(o.get("title", o["const"])) for o in one_of]
    choices = list(schema.get("enum", []))
    names = schema.get("enumNames")
    named = isinstance(names, list) and len(names) == len(choices)
    titles = [str(n) for n in names] if named else []  # type: ignore[union-attr]
    return choices, titles or [str(c) for c in choices]


def _label(label: str, required: bool) -> str:
    mark = ' <span class="required" aria-hidden="true">*</span>' if required else ""
    return _e(label) + mark


def _input(
    kind: str,
    name: str,
    label: str,
    schema: dict[str, Any],
    value: str = "",
    *,
    required: bool = False,
    error: str = "",
) -> str:
    """One field as the web chat draws it: its label (``*`` when required), its hint, its
    control, and the server's problem with it beside it, in words."""
    ident = f"f-{_e(name)}"
    hint_text = str(schema.get("description") or _PLACEHOLDER_HINTS.get(kind, ""))
    hint = f'<span class="hint" id="{ident}-hint">{_e(hint_text)}</span>' if hint_text else ""
    problem = f'<span class="field-error" id="{ident}-error">{_e(error)}</span>' if error else ""
    described = " ".join(
        part for part, there in ((f"{ident}-hint", hint), (f"{ident}-error", problem)) if there
    )
    aria = f' aria-describedby="{described}"' if described else ""
    aria += ' aria-required="true"' if required else ""
    aria += ' aria-invalid="true"' if error else ""
    if kind == "confirm":
        return (
            f'<div class="field"><label><input type="checkbox" name="{_e(name)}" value="yes"{aria}>'
            f" {_label(label, required)}</label>{hint}{problem}</div>"
        )
    if kind in ("choice", "multi"):
        items = schema.get("items", {}) if kind == "multi" else schema
        choices, titles = _titles(items)
        kind_input = "checkbox" if kind == "multi" else "radio"
        boxes = "".join(
            f'<label class="option"><input type="{kind_input}" name="{_e(name)}" value="{_e(v)}">'
            f" {_e(t)}</label>"
            for v, t in zip(choices, titles, strict=False)
        )
        return (
            f'<fieldset class="field"{aria}><legend>{_label(label, required)}</legend>{hint}'
            f"{boxes}{problem}</fieldset>"
        )
    head = f'<label for="{ident}">{_label(label, required)}</label>{hint}'
    if kind == "multiline":
        control = f'<textarea id="{ident}" name="{_e(name)}" rows="5"{aria}>{_e(value)}</textarea>'
    elif kind == "file":
        control = f'<input id="{ident}" type="file" name="{_e(name)}"{aria}>'
    else:
        kind_type = _INPUT_TYPES.get(kind, "text")
        placeholder = _PLACEHOLDERS.get(kind)
        more = f' placeholder="{_e(placeholder)}"' if placeholder else ""
        control = (
            f'<input id="{ident}" type="{kind_type}" name="{_e(name)}" value="{_e(value)}"'
            f"{more}{aria}>"
        )
    return f'<div class="field">{head}{control}{problem}</div>'


def _controls(
    request: Interaction,
    action: str,
    values: FormData | None,
    problems: list[tuple[str, str]] | None = None,
) -> str:
    """The question's controls, labelled as in the web chat; ``problems`` beside their
    fields, the others above the form."""
    if is_tool_approval(request.ui_surface):
        return _errors(problems or []) + answer_approvals.controls(
            request.ui_surface or {}, action, values
        )
    kind = request.kind.value
    multipart = ' enctype="multipart/form-data"' if _has_file(request) else ""
    start = f'<form method="post" action="{_e(action)}"{multipart}>'
    if kind == "confirm":
        return _errors(problems or []) + (
            start + '<div class="actions"><button type="submit" name="answer" value="yes"'
            ' class="primary">Yes</button>'
            '<button type="submit" name="answer" value="no">No</button></div></form>'
        )
    if kind == "choice":
        buttons = "".join(
            f'<button type="submit" name="answer" value="{_e(o["value"])}">{_e(o["label"])}'
            "</button>"
            for o in request.options or []
        )
        return _errors(problems or []) + (
            start + f'<div class="actions" role="group" aria-label="Options">{buttons}</div></form>'
        )
    schema = request.response_schema
    errors: dict[str, str] = {}
    for path, message in problems or []:
        field = _field_of(path) if kind == "form" else ""
        errors[field] = f"{errors[field]}; {message}" if field in errors else message
    if kind == "multi":
        fields = _input(
            "multi", "answer", "Choose any that apply", schema, error=errors.pop("", "")
        )
    elif kind == "form":
        fields = ""
        required = set(schema.get("required", []))
        for name, prop in schema.get("properties", {}).items():
            previous = "" if values is None else str(values.get(f"f.{name}") or "")
            label = prop.get("title") or name
            fields += _input(
                kind_of_property(prop).value,
                f"f.{name}",
                label,
                prop,
                previous,
                required=name in required,
                error=errors.pop(name, ""),
            )
    else:
        previous = "" if values is None else str(values.get("answer") or "")
        label = LABELS.get(kind, "Your answer")
        fields = _input(kind, "answer", label, schema, previous, error=errors.pop("", ""))
    top = _errors([(path, message) for path, message in errors.items()])
    return top + start + fields + '<button type="submit" class="primary">Submit</button></form>'


def _has_file(request: Interaction) -> bool:
    if request.kind == Kind.FILE:
        return True
    properties = request.response_schema.get("properties", {}) if request.kind == Kind.FORM else {}
    return any(kind_of_property(p) == Kind.FILE for p in properties.values())


def _show(grant: AnswerLink, request: Interaction, token: str, store: Store) -> HTMLResponse:
    ended = _outcome(request, grant, store)
    body = _question(request) + (ended or _controls(request, f"/a/{token}", None))
    return page("Answer", body)


@router.get("/a/{token}")
def show(request: Request, token: str) -> HTMLResponse:
    store = context_of(request).store
    found = _grant(request, token)
    if found is None:
        return page("Answer", _UNUSABLE, status=404)
    return _show(*found, token, store)


@router.get("/a/{token}/confirm")
def confirm_page(request: Request, token: str, pick: str = "") -> HTMLResponse:
    """The page a mail's one-click button opens: it asks, and only its POST answers."""
    store = context_of(request).store
    found = _grant(request, token)
    if found is None:
        return page("Answer", _UNUSABLE, status=404)
    grant, record = found
    ended = _outcome(record, grant, store)
    buttons = buttons_for(record, "")
    index = int(pick) if pick.isdigit() and len(pick) < 5 else -1
    if ended is not None or not 0 <= index < len(buttons):
        return _show(grant, record, token, store)
    body = (
        _question(record) + f'<form method="post" action="/a/{_e(token)}">'
        f'<input type="hidden" name="pick" value="{index}">'
        f'<button type="submit" class="primary">Answer “{_e(buttons[index].label)}”</button>'
        f'</form><p class="note"><a href="/a/{_e(token)}">Answer otherwise</a></p>'
    )
    return page("Answer", body)


def _answer_from(
    form: FormData, record: Interaction, store: Store, user: str, uploads: list[str]
) -> Any:
    """The answer a posted form carries, as ``respond_interaction`` takes it; the ids of the
    files it kept are added to ``uploads``."""
    if is_tool_approval(record.ui_surface) and form.get("decision") is not None:
        return answer_approvals.decision_from(form)  # checked by the store, as any client's
    kind = record.kind
    pick = form.get("pick")
    if pick is not None and kind in (Kind.CONFIRM, Kind.CHOICE):
        index = int(pick) if isinstance(pick, str) and pick.isdigit() else -1
        if kind == Kind.CONFIRM and index in (0, 1):
            return index == 0
        options = record.options or []
        return options[index]["value"] if 0 <= index < len(options) else None
    if kind == Kind.MULTI:
        return [str(v) for v in form.getlist("answer")]
    if kind == Kind.FORM:
        answer: dict[str, Any] = {}
        for name, prop in record.response_schema.get("properties", {}).items():
            field_kind = kind_of_property(prop)
            key = f"f.{name}"
            if field_kind == Kind.MULTI:
                answer[name] = [str(v) for v in form.getlist(key)]
            elif field_kind == Kind.CONFIRM:
                answer[name] = form.get(key) == "yes"
            else:
                file = field_kind == Kind.FILE
                answer[name] = _scalar(form.get(key), store, user, uploads if file else None)
        return answer
    return _scalar(form.get("answer"), store, user, uploads if kind == Kind.FILE else None)


def _scalar(
    value: str | UploadFile | None, store: Store, user: str, uploads: list[str] | None
) -> Any:
    """A field's text, or a file kept as the user's upload (its id) where a file is asked
    (``uploads`` given: the id is added to it)."""
    if isinstance(value, UploadFile):
        if not value.filename or uploads is None:
            return None
        media = value.content_type or "application/octet-stream"
        kept = store.add_file(user, value.filename, media, value.file.read()).id
        uploads.append(kept)
        return kept
    return None if value is None or value == "" else value


@router.post("/a/{token}")
async def answer(request: Request, token: str) -> HTMLResponse:
    form = await request.form()
    try:
        return await anyio.to_thread.run_sync(_answer, request, token, form)
    finally:
        await form.close()


def _answer(request: Request, token: str, form: FormData) -> HTMLResponse:
    """Answer with a posted form, on a worker thread (the store blocks)."""
    store = context_of(request).store
    found = _grant(request, token)
    if found is None:
        return page("Answer", _UNUSABLE, status=404)
    grant, record = found
    # A request past its deadline is left to respond_interaction, which expires it.
    ended = _outcome(record, grant, store, deadline=False)
    if ended is not None:
        return page("Answer", _question(record) + ended, status=409)
    uploads: list[str] = []  # a refused answer keeps none of the files it carried
    answered: Interaction | None = None
    try:
        value = _answer_from(form, record, store, grant.user, uploads)

        def spend(tx: Any, _: Interaction) -> None:
            u = Unit(tx, store.now)
            if not u.answer_links.spend(token):
                raise Conflict("this link was used already")

        answered = store.respond_interaction(
            grant.request_id, value, user=grant.user, via="link", also=spend
        )
    except InvalidInput as exc:
        problems = [(e.path, e.message) for e in exc.errors] or [("", exc.message)]
        body = _question(record) + _controls(record, f"/a/{token}", form, problems)
        return page("Answer", body, status=422)
    except (Forbidden, AlreadyVoted) as exc:  # not this link's to give: it stays as it was
        status = 403 if isinstance(exc, Forbidden) else 409
        return page("Answer", _question(record) + _errors([("", exc.message)]), status=status)
    except (NotPending, Conflict, NotFound):
        found = _grant(request, token)
        assert found is not None
        grant, now = found
        return page("Answer", _question(now) + (_outcome(now, grant, store) or ""), status=409)
    finally:
        if answered is None and uploads:
            store.discard_files(grant.user, uploads)
    assert answered is not None
    if answered.pending:  # a vote of a quorum: the request waits for more
        note = f'<p class="note"><strong>{_e(VOTE_COUNTED)}</strong> Thank you.</p>'
        return page("Answer", _question(answered) + note)
    note = (
        f'<p class="note"><strong>{_e(settled_text(answered))}.</strong>{_decided(answered)}'
        " Thank you.</p>"
    )
    return page("Answer", _question(answered) + note)

"""``POST /integrations/slack/interactions``: where Slack sends clicks, inputs and modals.

Slack signs each request with the app's signing secret (``X-Slack-Signature``: ``v0=`` and the
HMAC-SHA256 of ``v0:<timestamp>:<body>``; ``X-Slack-Request-Timestamp``). A request whose
signature does not match, or whose timestamp is more than five minutes from the server's
clock (a replay), is a 401 and changes nothing; so is one without the headers. Each such
request counts against its source address like a failed sign-in: past the allowance, that
address gets a 429 until it refills. Without
``PAWFLOW_SLACK_SIGNING_SECRET`` and ``PAWFLOW_SLACK_BOT_TOKEN`` the route is a 404, as if it
did not exist. The verified payload is handed to
:class:`pawflow.channels.slack_answers.SlackAnswers`, off the event loop (the store blocks).
Slack's SDK (the ``slack`` extra) is loaded by the first request, once Slack is configured.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import parse_qs

import anyio
from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from pawflow.errors import HTTPProblem
from pawflow.server.auth import client_address
from pawflow.server.context import context_of
from pawflow.store import Store

router = APIRouter(include_in_schema=False)
log = logging.getLogger("pawflow.server.slack")
PATH = "/integrations/slack/interactions"


def verified(store: Store, secret: str, body: bytes, headers: Any) -> bool:
    """Whether ``body`` was signed by Slack with ``secret`` in the last five minutes."""
    from slack_sdk.signature import Clock, SignatureVerifier  # noqa: PLC0415 - the slack extra

    class StoreClock(Clock):
        """The store's clock (injectable, so tests choose the time) as the verifier reads it."""

        def now(self) -> float:
            return store.now().timestamp()

    timestamp = headers.get("x-slack-request-timestamp")
    signature = headers.get("x-slack-signature")
    if not timestamp or not signature or not timestamp.isdigit() or len(timestamp) > 12:
        return False
    try:
        return SignatureVerifier(secret, clock=StoreClock()).is_valid(body, timestamp, signature)
    except (UnicodeDecodeError, ValueError):
        return False


def _payload(body: bytes) -> dict[str, Any] | None:
    try:
        form = parse_qs(body.decode("utf-8"), strict_parsing=False)
        payload = json.loads(form["payload"][-1])
    except (UnicodeDecodeError, KeyError, IndexError, ValueError):
        return None
    return payload if isinstance(payload, dict) else None


@router.post(PATH)
async def interactions(request: Request) -> Response:
    ctx = context_of(request)
    settings = ctx.settings
    if not settings.slack_signing_secret or not settings.slack_bot_token:
        raise HTTPProblem(404)
    address = client_address(request)
    ctx.auth_failures.check(address)  # a source that forged too many is refused at once
    body = await request.body()
    if not verified(ctx.store, settings.slack_signing_secret, body, request.headers):
        ctx.auth_failures.failed(address)
        log.warning("a Slack interaction with a bad or stale signature was refused")
        raise HTTPProblem(401, "invalid Slack signature")
    payload = _payload(body)
    if payload is None:
        raise HTTPProblem(400, "expected a payload form field of JSON")
    from pawflow.channels.slack import SlackConfig  # noqa: PLC0415 - the slack extra
    from pawflow.channels.slack_answers import SlackAnswers  # noqa: PLC0415

    config = SlackConfig(
        settings.slack_bot_token, settings.slack_signing_secret, settings.slack_api_url
    )
    answers = SlackAnswers(ctx.store, config)
    reply = await anyio.to_thread.run_sync(answers.handle, payload)
    if reply is None:
        return Response(status_code=200)
    return JSONResponse(reply)

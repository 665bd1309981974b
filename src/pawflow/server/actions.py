"""``POST /api/actions/{name}``: the JSON action API over the store (R-7.3).

Every action names things as the record does and answers with the record's contract JSON:
one record as ``{"interaction": …}``, a page as ``{"interactions": […], "next_cursor": …}``.
Reads are scoped to the owner; answering and cancelling are also open to collaborators with
write access. The ``*_confirmation`` aliases reach only the confirm/choice/multi kinds: any
other request is, through them, exactly as unknown as an id that does not exist.

The handlers are plain functions: FastAPI runs them on worker threads, where the store's
blocking calls belong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Body, Depends, Request
from pydantic import BaseModel

from pawflow.channels.apprise import check_notify_url
from pawflow.channels.webhooks import check_url
from pawflow.egress import EgressRule
from pawflow.errors import FieldError, InvalidInput
from pawflow.interactions import CONFIRMATION_KINDS
from pawflow.records import Interaction
from pawflow.server import channel_models as cm
from pawflow.server import models as m
from pawflow.server.auth import Principal, caller
from pawflow.server.bodies import StrictJSONRoute
from pawflow.server.context import context_of
from pawflow.server.markdown import with_html
from pawflow.server.routes import action_route
from pawflow.store import Question, Reach, Store

router = APIRouter(prefix="/api/actions", route_class=StrictJSONRoute, tags=["actions"])

Caller = Annotated[Principal, Depends(caller)]
_Handler = TypeVar("_Handler", bound=Callable[..., BaseModel])
_CONFIRMATION_KINDS = tuple(sorted(kind.value for kind in CONFIRMATION_KINDS))


_STATUSES = (400, 401, 403, 404, 409, 413, 422, 429, 503)


def _action(
    name: str, response: type[BaseModel], summary: str, *, on_loop: bool = False
) -> Callable[[_Handler], _Handler]:
    """An action of this module; ``on_loop`` where it only calls the store, for one record
    (see :func:`~pawflow.server.routes.one_turn`)."""
    return action_route(router, name, response, summary, _STATUSES, on_loop=on_loop)


def _interaction(record: Interaction) -> m.InteractionEnvelope:
    return m.InteractionEnvelope(interaction=record)


def _store(request: Request) -> Store:
    return context_of(request).store


# -- interactions ----------------------------------------------------------------------------


@_action("request_interaction", m.InteractionEnvelope, "Publish a request for input", on_loop=True)
def request_interaction(
    body: m.RequestInteraction, principal: Caller, request: Request
) -> m.InteractionEnvelope:
    store = _store(request)
    options = (
        None
        if body.options is None
        else [o if isinstance(o, str) else o.model_dump(exclude_none=True) for o in body.options]
    )
    record = store.ask(
        Question(
            principal.user,
            body.conversation_id,
            body.kind.value,
            body.message,
            options=options,
            title=body.title,
            response_schema=body.response_schema,
            expires_in=body.expires_in,
            expires_at=body.expires_at,
            requester={"type": "api", "name": principal.user},
            ui_surface=body.ui_surface,
            idempotency_key=body.idempotency_key,
            policy=body.policy(),
            notify=body.notify,
        )
    ).interaction
    return _interaction(record)


def _page(
    store: Store, user: str, body: m.ListInteractions, kinds: tuple[str, ...] | None
) -> m.InteractionPage:
    items, cursor = store.page_interactions(
        user=user,
        status=body.status,
        conversation_id=body.conversation_id,
        kind=kinds if body.kind is None else str(body.kind),
        limit=body.limit,
        cursor=body.cursor,
    )
    return m.InteractionPage(interactions=items, next_cursor=cursor)


@_action("list_interactions", m.InteractionPage, "List the caller's requests, a page at a time")
def list_interactions(
    principal: Caller,
    request: Request,
    body: Annotated[m.ListInteractions, Body()] = m.ListInteractions(),  # noqa: B008
) -> m.InteractionPage:
    return _page(_store(request), principal.user, body, None)


@_action("respond_interaction", m.InteractionEnvelope, "Answer a pending request", on_loop=True)
def respond_interaction(
    body: m.Respond, principal: Caller, request: Request
) -> m.InteractionEnvelope:
    store = _store(request)
    return _interaction(
        store.respond_interaction(
            body.request_id, body.answer, user=principal.user, via=body.answered_via
        )
    )


@_action("cancel_interaction", m.InteractionEnvelope, "Cancel a pending request", on_loop=True)
def cancel_interaction(
    body: m.RequestRef, principal: Caller, request: Request
) -> m.InteractionEnvelope:
    return _interaction(_store(request).cancel_interaction(body.request_id, user=principal.user))


# -- the confirmation-family aliases ---------------------------------------------------------


@_action("list_confirmations", m.InteractionPage, "List confirm/choice/multi requests")
def list_confirmations(
    principal: Caller,
    request: Request,
    body: Annotated[m.ListConfirmations, Body()] = m.ListConfirmations(),  # noqa: B008
) -> m.InteractionPage:
    return _page(_store(request), principal.user, body, _CONFIRMATION_KINDS)


@_action(
    "respond_confirmation",
    m.InteractionEnvelope,
    "Answer a confirm/choice/multi request",
    on_loop=True,
)
def respond_confirmation(
    body: m.Respond, principal: Caller, request: Request
) -> m.InteractionEnvelope:
    store = _store(request)
    return _interaction(
        store.respond_interaction(
            body.request_id,
            body.answer,
            user=principal.user,
            kinds=_CONFIRMATION_KINDS,
            via=body.answered_via,
        )
    )


@_action(
    "cancel_confirmation",
    m.InteractionEnvelope,
    "Cancel a confirm/choice/multi request",
    on_loop=True,
)
def cancel_confirmation(
    body: m.RequestRef, principal: Caller, request: Request
) -> m.InteractionEnvelope:
    store = _store(request)
    return _interaction(
        store.cancel_interaction(body.request_id, user=principal.user, kinds=_CONFIRMATION_KINDS)
    )


# -- conversations ---------------------------------------------------------------------------


@_action("create_conversation", m.ConversationEnvelope, "Start a conversation", on_loop=True)
def create_conversation(
    principal: Caller,
    request: Request,
    body: Annotated[m.CreateConversation, Body()] = m.CreateConversation(),  # noqa: B008
) -> m.ConversationEnvelope:
    conversation = _store(request).create_conversation(principal.user, body.title)
    return m.ConversationEnvelope(conversation=conversation)


@_action("list_conversations", m.ConversationList, "List the conversations the caller is in")
def list_conversations(
    principal: Caller,
    request: Request,
    body: Annotated[m.ListConversations, Body()] = m.ListConversations(),  # noqa: B008
) -> m.ConversationList:
    found = _store(request).list_conversations(user=principal.user)
    return m.ConversationList(conversations=found)


@_action("get_history", m.History, "Read a conversation's messages")
def get_history(body: m.GetHistory, principal: Caller, request: Request) -> m.History:
    with _store(request).unit(write=False) as u:
        found = u.messages.history(
            body.conversation_id, user=principal.user, after_seq=body.after_seq, limit=body.limit
        )
    return m.History(messages=[m.MessageOut(**with_html(x.to_dict())) for x in found])


@_action("send_message", m.MessageEnvelope, "Post a message to a conversation")
def send_message(body: m.SendMessage, principal: Caller, request: Request) -> m.MessageEnvelope:
    ctx = context_of(request)
    # The message and the turn that answers it: one transaction, so no crash loses the turn.
    message = ctx.store.post_message(body.conversation_id, body.content, user=principal.user)
    ctx.dispatch_message(body.conversation_id, message)
    return m.MessageEnvelope(message=m.MessageOut(**with_html(message.to_dict())))


@_action("share_conversation", m.ConversationEnvelope, "Invite another user to read or write")
def share_conversation(
    body: m.ShareConversation, principal: Caller, request: Request
) -> m.ConversationEnvelope:
    # An invitation the other user accepts (accept_invitation); a member already in it has
    # their access changed. The answer is the same whether or not the name is a user's.
    conversation = _store(request).invite_to_conversation(
        body.conversation_id, user=principal.user, with_user=body.user, access=body.access
    )
    return m.ConversationEnvelope(conversation=conversation)


# -- where the caller is reached -------------------------------------------------------------


@_action("get_notifications", cm.Notifications, "Where the caller is notified of requests")
def get_notifications(
    principal: Caller,
    request: Request,
    body: Annotated[cm.GetNotifications, Body()] = cm.GetNotifications(),  # noqa: B008
) -> cm.Notifications:
    store = _store(request)
    with store.unit(write=False) as u:
        reach = u.outbox.get_reach(principal.user)
    return _notifications(reach, context_of(request).settings.channels_off())


def _notifications(reach: Reach, off: dict[str, str | None]) -> cm.Notifications:
    """The caller's settings and the channels this server can send."""
    server_channels = [
        cm.ServerChannel(channel=name, on=why is None, reason=why)  # type: ignore[arg-type]
        for name, why in off.items()
    ]
    return cm.Notifications(**reach.to_dict(), server_channels=server_channels)


@_action("set_notifications", cm.Notifications, "Change where the caller is notified")
def set_notifications(
    body: cm.SetNotifications, principal: Caller, request: Request
) -> cm.Notifications:
    context = context_of(request)
    store = context.store
    given: dict[str, Any] = {name: getattr(body, name) for name in body.model_fields_set}
    off = context.settings.channels_off()
    refused = [name for name in given.get("notify") or () if off.get(name)]
    if refused:  # a channel this server cannot send: the page never offers it
        said = "; ".join(f"{name}: {off[name]}" for name in refused)
        message = f"this server cannot send {', '.join(refused)} ({said})"
        raise InvalidInput(f"notify: {message}", [FieldError("notify", message)])
    if given.get("notify_url"):  # checked at the door, and again at each send
        rule = EgressRule.parse(context.settings.egress_allowed_hosts)
        check_notify_url(given["notify_url"], rule)
    with store.unit() as u:
        reach = u.outbox.set_reach(principal.user, **given)
    return _notifications(reach, off)


# -- the caller's webhooks -------------------------------------------------------------------


@_action("create_webhook", cm.CreatedWebhook, "Subscribe a URL to the events of your requests")
def create_webhook(
    body: cm.CreateWebhook, principal: Caller, request: Request
) -> cm.CreatedWebhook:
    context = context_of(request)
    url = check_url(body.url, EgressRule.parse(context.settings.egress_allowed_hosts))
    events = tuple(dict.fromkeys(body.events))
    with context.store.unit() as u:
        hook = u.webhooks.create(
            principal.user,
            url,
            events,
            limit=context.settings.max_webhooks,
        )
    return cm.CreatedWebhook(webhook=cm.WebhookOut(**hook.to_dict()), secret=hook.secret)


@_action("list_webhooks", cm.WebhookList, "Your webhooks (never their secrets)")
def list_webhooks(
    principal: Caller,
    request: Request,
    body: Annotated[cm.ListWebhooks, Body()] = cm.ListWebhooks(),  # noqa: B008
) -> cm.WebhookList:
    with _store(request).unit(write=False) as u:
        hooks = u.webhooks.list_for(principal.user)
    return cm.WebhookList(webhooks=[cm.WebhookOut(**hook.to_dict()) for hook in hooks])


@_action("delete_webhook", cm.Deleted, "Delete one of your webhooks and its log")
def delete_webhook(body: cm.WebhookRef, principal: Caller, request: Request) -> cm.Deleted:
    with _store(request).unit() as u:
        u.webhooks.delete(principal.user, body.webhook_id)
    return cm.Deleted(deleted=True)


@_action("list_webhook_deliveries", cm.WebhookDeliveries, "A webhook's deliveries, newest first")
def list_webhook_deliveries(
    body: cm.ListWebhookDeliveries, principal: Caller, request: Request
) -> cm.WebhookDeliveries:
    with _store(request).unit(write=False) as u:
        rows = u.webhooks.log(principal.user, body.webhook_id, body.limit)
    return cm.WebhookDeliveries(deliveries=[cm.WebhookDeliveryOut(**row.to_dict()) for row in rows])

"""The bodies and answers of the channel actions: where a user is notified
(``get_notifications``, ``set_notifications``) and their webhooks (``create_webhook``,
``list_webhooks``, ``delete_webhook``, ``list_webhook_deliveries``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictInt, StrictStr

from pawflow.server.models import (
    WEBHOOK_URL,
    WHOLE,
    Body,
    Id,
    NotifyChannel,
    NotifyList,
    Out,
    WebhookEvent,
)
from pawflow.store import EMAIL_PATTERN, SLACK_PATTERN, URL_PATTERN


class GetNotifications(Body):
    """Nothing to say: the caller's own settings."""


class SetNotifications(Body):
    """Where the caller is reached; a field left out stays as it is, "" clears it."""

    email: Annotated[StrictStr, Field(max_length=320, pattern=f"^(|{EMAIL_PATTERN})$")] | None = (
        None
    )
    slack: Annotated[StrictStr, Field(max_length=40, pattern=f"^(|{SLACK_PATTERN})$")] | None = None
    notify_url: (
        Annotated[StrictStr, Field(max_length=2000, pattern=f"^(|{URL_PATTERN})$")] | None
    ) = Field(
        default=None,
        description="An Apprise URL. Apprise must read it and its host must be one the server"
        " may call (PAWFLOW_EGRESS_ALLOWED_HOSTS): the server checks that, beyond this"
        " document, with a 422 on notify_url.",
    )
    notify: NotifyList | None = Field(
        default=None,
        description="The channels to use; null: every channel with an address.",
    )


class ServerChannel(Out):
    """A channel and whether this server can send it."""

    channel: NotifyChannel
    on: bool
    reason: str | None = Field(
        description='Why the server cannot send it ("no PAWFLOW_SMTP_URL"); null when on.'
    )


class Notifications(Out):
    user: str
    email: str | None
    slack: str | None
    notify_url: str | None
    notify: list[NotifyChannel] | None
    channels: list[NotifyChannel]
    """What a request that names no channels is sent through."""
    server_channels: list[ServerChannel] = Field(
        description="Every channel, on or off on this server: notify may name only those on."
    )


class CreateWebhook(Body):
    url: Annotated[StrictStr, Field(max_length=2000, pattern=WEBHOOK_URL)] = Field(
        description="An http(s) URL without credentials. Its host must resolve outside the"
        " server's network unless the server allows it (PAWFLOW_EGRESS_ALLOWED_HOSTS): the"
        " server checks that, beyond this document, with a 422 on url."
    )
    events: Annotated[
        list[WebhookEvent],
        Field(min_length=1, max_length=4, json_schema_extra={"uniqueItems": True}),
    ]


class ListWebhooks(Body):
    """Nothing to say: the caller's own webhooks."""


class WebhookRef(Body):
    webhook_id: Id


class ListWebhookDeliveries(WebhookRef):
    limit: Annotated[StrictInt, Field(ge=1, le=200), WHOLE] = 50


class WebhookOut(Out):
    id: str
    url: str
    events: list[WebhookEvent]
    created_at: str


class CreatedWebhook(Out):
    webhook: WebhookOut
    secret: str = Field(description="The signing secret (whsec_…): shown this once.")


class WebhookList(Out):
    webhooks: list[WebhookOut]


class WebhookDeliveryOut(Out):
    """One event sent (or on its way) to a webhook; ``id`` is its ``webhook-id``."""

    id: str
    webhook_id: str
    request_id: str
    event: WebhookEvent
    status: Literal["queued", "sent", "failed"]
    attempts: int
    error: str | None
    response_status: int | None
    created_at: str
    next_at: str | None
    sent_at: str | None


class WebhookDeliveries(Out):
    deliveries: list[WebhookDeliveryOut]


class Deleted(Out):
    deleted: bool

"""Channels: reaching people where they are (email, Slack, Web Push, webhooks, Apprise URLs).

Each channel is an adapter (:class:`Channel`) that renders a request for a recipient,
sends it once per outbox row, and updates a sent copy when the request is settled. The
:class:`Dispatcher` sends the store's outbox through them under a lease;
:mod:`pawflow.channels.replies` reads answers that come back by mail,
:mod:`pawflow.channels.slack_answers` the ones that come back from Slack.

The Slack channel is loaded on first use of its names (PEP 562): it is the ``slack`` extra,
which a server without Slack does without.
"""

import typing

from pawflow import lazy
from pawflow.channels.apprise import AppriseChannel
from pawflow.channels.base import (
    Button,
    Channel,
    DeliveryError,
    Outgoing,
    plain_text,
    settled_text,
)
from pawflow.channels.dispatcher import Dispatcher
from pawflow.channels.email import EmailChannel, SmtpConfig
from pawflow.channels.push import PushChannel
from pawflow.channels.webhooks import WebhookSender

if typing.TYPE_CHECKING:
    from pawflow.channels.slack import SlackChannel, SlackConfig

__getattr__, __dir__ = lazy.exports(
    __name__, dict.fromkeys(("SlackChannel", "SlackConfig"), "pawflow.channels.slack")
)

__all__ = [
    "AppriseChannel",
    "Button",
    "Channel",
    "DeliveryError",
    "Dispatcher",
    "EmailChannel",
    "Outgoing",
    "PushChannel",
    "SlackChannel",
    "SlackConfig",
    "SmtpConfig",
    "WebhookSender",
    "plain_text",
    "settled_text",
]

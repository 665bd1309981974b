"""The demo's first conversations: "Demo" (a greeting and a first question) and a tour of
the web chat, one request of every kind.

``pawflow serve --demo`` opens a "Tour: every kind" conversation holding a request of each
of the eleven kinds and the two rich surfaces, so that whoever runs the demo can answer
every kind in the browser. The same examples serve the web chat's screenshots.
"""

from __future__ import annotations

from typing import Any

from pawflow.store import Question, Store

DEMO_TITLE = "Demo"
TOUR_TITLE = "Tour: every kind"

REQUESTER = {"type": "api", "name": "tour"}

FLIGHTS = [
    {"value": "af1234", "cells": {"flight": "AF 1234", "leaves": "07:10", "price": "€142"}},
    {"value": "lh0981", "cells": {"flight": "LH 981", "leaves": "09:45", "price": "€118"}},
    {"value": "kl1008", "cells": {"flight": "KL 1008", "leaves": "13:20", "price": "€96"}},
]

EXAMPLES: list[dict[str, Any]] = [
    {"kind": "confirm", "title": "Deploy", "message": "Deploy release 2.4 to staging now?"},
    {
        "kind": "choice",
        "title": "Report format",
        "message": "Which format should the weekly report use?",
        "options": [
            {"value": "pdf", "label": "PDF"},
            {"value": "html", "label": "Web page"},
            {"value": "csv", "label": "Spreadsheet (CSV)"},
        ],
    },
    {
        "kind": "multi",
        "title": "Notify",
        "message": "Who should be told about the outage?",
        "options": ["support", "sales", "engineering", "legal"],
    },
    {"kind": "text", "message": "What should the new project be called?"},
    {"kind": "multiline", "message": "Any notes for the release announcement?"},
    {
        "kind": "integer",
        "message": "How many replicas should the service run?",
        "response_schema": {"type": "integer", "minimum": 1, "maximum": 10},
    },
    {
        "kind": "decimal",
        "message": "What is the budget ceiling in euros?",
        "response_schema": {"type": "number", "minimum": 0, "multipleOf": 0.01},
    },
    {"kind": "date", "message": "On which day should the migration start?"},
    {"kind": "datetime", "message": "When exactly should the maintenance window open?"},
    {
        "kind": "file",
        "message": "Please upload the signed contract (PDF or image, at most 5 MB).",
        "response_schema": {
            "maxBytes": 5_000_000,
            "mediaTypes": ["application/pdf", "image/*"],
        },
    },
    {
        "kind": "form",
        "title": "New teammate",
        "message": "Tell us about the new teammate so we can set up their accounts.",
        "response_schema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Full name", "minLength": 2},
                "email": {"type": "string", "title": "Email", "format": "email"},
                "team": {
                    "type": "string",
                    "title": "Team",
                    "enum": ["platform", "product", "data"],
                    "enumNames": ["Platform", "Product", "Data"],
                },
                "start": {"type": "string", "format": "date", "title": "First day"},
                "laptop": {"type": "boolean", "title": "Needs a laptop"},
                "desk": {"type": "integer", "title": "Desk number", "minimum": 1},
            },
            "required": ["name", "email", "team"],
        },
    },
    {
        "kind": "choice",
        "title": "Flight",
        "message": "Which flight should I book for Tuesday?",
        "options": [row["value"] for row in FLIGHTS],
        "ui_surface": {
            "contract": "pawflow.ui-surface.v1",
            "type": "table",
            "title": "Flights to Berlin, Tuesday",
            "columns": [
                {"key": "flight", "label": "Flight"},
                {"key": "leaves", "label": "Leaves"},
                {"key": "price", "label": "Price", "align": "end"},
            ],
            "rows": FLIGHTS,
            "fallback": "choice",
        },
    },
    {
        "kind": "confirm",
        "title": "Merge",
        "message": "Merge the dependency update?",
        "ui_surface": {
            "contract": "pawflow.ui-surface.v1",
            "type": "card",
            "title": "Update httpx 0.27 → 0.28",
            "subtitle": "pull request #412 · all checks passed",
            "body": "Minor release; the changelog lists no breaking change for our usage.",
            "fields": [
                {"label": "Files changed", "value": "2"},
                {"label": "Tests", "value": "1,204 passed"},
            ],
            "actions": [
                {"label": "Merge", "value": True, "style": "primary"},
                {"label": "Not now", "value": False},
            ],
            "fallback": "confirm",
        },
    },
]


def titled(store: Store, user: str, title: str) -> str | None:
    """The id of ``user``'s own conversation called ``title``, if there is one."""
    for conversation in store.list_conversations(user=user):
        if conversation.owner == user and conversation.title == title:
            return conversation.id
    return None


def demo_conversation(store: Store, user: str) -> str:
    """The user's Demo conversation; a new one gets a greeting and a first question."""
    found = titled(store, user, DEMO_TITLE)
    if found is not None:
        return found
    conversation = store.create_conversation(user, DEMO_TITLE)
    with store.unit() as u:
        u.messages.append_message(
            conversation.id,
            content="Welcome to PawFlow. Questions asked here wait for you, however long you take.",
            role="assistant",
            author="pawflow",
        )
    store.ask(
        Question(
            user,
            conversation.id,
            "confirm",
            "Is the PawFlow server running for you?",
            title="Demo",
            requester={"type": "api", "name": "demo"},
        )
    )
    return conversation.id


def seed_tour(store: Store, user: str) -> str:
    """The user's tour conversation; a new one gets a request of every kind."""
    found = titled(store, user, TOUR_TITLE)
    if found is not None:
        return found
    conversation = store.create_conversation(user, TOUR_TITLE)
    with store.unit() as u:
        u.messages.append_message(
            conversation.id,
            content=(
                "Here is one request of every kind. Answer them here, "
                "or from Pending in the header."
            ),
            role="assistant",
            author="tour",
        )
    for example in EXAMPLES:
        fields = dict(example)
        store.ask(
            Question(
                user,
                conversation.id,
                fields.pop("kind"),
                fields.pop("message"),
                requester=REQUESTER,
                **fields,
            )
        )
    return conversation.id

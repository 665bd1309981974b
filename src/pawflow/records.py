"""The records the store hands out; ``to_dict()`` gives their contract JSON."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pawflow.clock import from_millis, iso
from pawflow.interactions import CONTRACT

Status = Literal["pending", "answered", "cancelled", "expired"]
Access = Literal["owner", "write", "read"]


def _iso_or_none(when: datetime | None) -> str | None:
    return None if when is None else iso(when)


class Requester(BaseModel):
    """Who resumes on the answer: ``{type: agent|flow|api, name, …}``."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: Literal["agent", "flow", "api"] = "api"
    name: str = "api"


class Interaction(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    kind: str
    message: str
    title: str | None = None
    options: list[dict[str, str]] | None = None
    response_schema: dict[str, Any]
    owner: str
    conversation_id: str
    requester: Requester
    signal_id: str
    status: Status
    answer: Any = None
    answered_by: str | None = None
    answered_at: datetime | None = None
    created_at: datetime
    expires_at: datetime | None = None
    ui_surface: dict[str, Any] | None = None
    contract_version: int = 1

    @property
    def pending(self) -> bool:
        return self.status == "pending"

    def to_dict(self) -> dict[str, Any]:
        return {
            "contract": CONTRACT,
            "id": self.id,
            "kind": self.kind,
            "title": self.title,
            "message": self.message,
            "options": self.options,
            "response_schema": self.response_schema,
            "owner": self.owner,
            "conversation_id": self.conversation_id,
            "requester": self.requester.model_dump(),
            "signal_id": self.signal_id,
            "status": self.status,
            "answer": self.answer,
            "answered_by": self.answered_by,
            "answered_at": _iso_or_none(self.answered_at),
            "created_at": iso(self.created_at),
            "expires_at": _iso_or_none(self.expires_at),
            "ui_surface": self.ui_surface,
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Interaction:
        def loads(value: str | None) -> Any:
            return None if value is None else json.loads(value)

        return cls(
            id=row["id"],
            kind=row["kind"],
            message=row["message"],
            title=row["title"],
            options=loads(row["options"]),
            response_schema=json.loads(row["response_schema"]),
            owner=row["owner"],
            conversation_id=row["conversation_id"],
            requester=Requester.model_validate(json.loads(row["requester"])),
            signal_id=row["signal_id"],
            status=row["status"],
            answer=loads(row["answer"]),
            answered_by=row["answered_by"],
            answered_at=None if row["answered_at"] is None else from_millis(row["answered_at"]),
            created_at=from_millis(row["created_at"]),
            expires_at=None if row["expires_at"] is None else from_millis(row["expires_at"]),
            ui_surface=loads(row["ui_surface"]),
            contract_version=row["contract_version"],
        )


class Conversation(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    owner: str
    title: str
    created_at: datetime
    access: Access = "owner"
    members: dict[str, Literal["read", "write"]] = Field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "owner": self.owner,
            "title": self.title,
            "created_at": iso(self.created_at),
            "access": self.access,
            "members": dict(self.members),
        }


class FileRef(BaseModel):
    """An upload, as a ``file`` answer refers to it."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    size: int
    media_type: str
    sha256: str

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()


class Event(BaseModel):
    """One entry of a user's durable event log, replayable by ``seq``."""

    model_config = ConfigDict(frozen=True)

    seq: int
    type: str
    conversation_id: str | None
    data: dict[str, Any]
    created_at: datetime


class Message(BaseModel):
    """One entry of a conversation's history."""

    model_config = ConfigDict(frozen=True)

    seq: int
    id: str
    conversation_id: str
    role: Literal["user", "assistant", "system", "notification"]
    author: str
    content: str
    data: dict[str, Any] | None = None
    created_at: datetime

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Message:
        return cls(
            seq=row["seq"],
            id=row["id"],
            conversation_id=row["conversation_id"],
            role=row["role"],
            author=row["author"],
            content=row["content"],
            data=None if row["data"] is None else json.loads(row["data"]),
            created_at=from_millis(row["created_at"]),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "id": self.id,
            "conversation_id": self.conversation_id,
            "role": self.role,
            "author": self.author,
            "content": self.content,
            "data": self.data,
            "created_at": iso(self.created_at),
        }

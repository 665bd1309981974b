"""Which answered request refers to which upload, and so who may download it.

An upload is readable by the user who made it, and by whoever may read a request it
answers: as the answer of a ``file`` request or a file field of a ``form`` answer. The
link is written with the answer, from the normalized answer (whose file ids were checked to
be the answerer's own uploads), never inferred from what an answer looks like; a download
is one indexed query, whether the id is unknown, someone else's or readable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pawflow.errors import InvalidAnswer, NotFound
from pawflow.interactions import Kind, kind_of_property
from pawflow.records import FileRef
from pawflow.store.engine.database import Tx, sql


def referenced_files(kind: Kind, schema: Mapping[str, Any], answer: Any) -> list[str]:
    """The upload ids a normalized answer refers to."""
    if kind is Kind.FILE and isinstance(answer, Mapping):
        return [str(answer["id"])]
    if kind is not Kind.FORM or not isinstance(answer, Mapping):
        return []
    found = []
    for name, prop in schema.get("properties", {}).items():
        value = answer.get(name)
        if isinstance(value, Mapping) and kind_of_property(prop) is Kind.FILE:
            found.append(str(value["id"]))
    return found


def link_files(tx: Tx, interaction_id: str, file_ids: list[str], *, answerer: str) -> None:
    """Record the answer's uploads; each must still be the answerer's own."""
    for file_id in dict.fromkeys(file_ids):
        owned = sql(tx).one(
            "SELECT 1 AS found FROM files WHERE id = ? AND owner = ?", (file_id, answerer)
        )
        if owned is None:
            raise InvalidAnswer("invalid answer: not a file you uploaded")
        sql(tx).execute(
            "INSERT INTO file_links (file_id, interaction_id) VALUES (?, ?)"
            " ON CONFLICT (file_id, interaction_id) DO NOTHING",
            (file_id, interaction_id),
        )


def readable_file(tx: Tx, file_id: str, *, user: str) -> FileRef:
    """The upload, if ``user`` made it or may read a request it answers; else not found."""
    row = sql(tx).one(
        "SELECT f.id, f.name, f.size, f.media_type, f.sha256 FROM files AS f"
        " WHERE f.id = ? AND (f.owner = ? OR EXISTS ("
        "  SELECT 1 FROM file_links AS l"
        "  JOIN interactions AS i ON i.id = l.interaction_id"
        "  JOIN conversations AS c ON c.id = i.conversation_id"
        "  LEFT JOIN conversation_members AS m"
        "   ON m.conversation_id = c.id AND m.user_id = ?"
        "  WHERE l.file_id = f.id AND (i.owner = ? OR c.owner = ? OR m.user_id IS NOT NULL)))",
        (file_id, user, user, user, user),
    )
    if row is None:
        raise NotFound("file")
    return FileRef(**row)

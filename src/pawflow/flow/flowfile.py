"""The FlowFile: content bytes plus string attributes, with an id and its lineage.

A FlowFile is immutable: tasks return changed copies. ``evolve`` keeps the identity (the
same piece of data, updated); ``child`` makes a new FlowFile descended from this one, as a
clone sent down a second connection is.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pawflow.errors import InvalidInput
from pawflow.ids import new_id

try:
    from _json import encode_basestring_ascii, make_encoder
except ImportError:  # an interpreter without CPython's accelerator
    from json.encoder import encode_basestring_ascii

    make_encoder = None  # type: ignore[assignment,misc]

MAX_LINEAGE = 64
_MAGIC = b"PFF1"
_HEADER = struct.Struct(">4sI")
_COMPACT = json.JSONEncoder(separators=(",", ":"))
"""One encoder for every header (``json.dumps`` with options makes one per call)."""
_PLAIN = (
    None
    if make_encoder is None
    else make_encoder(
        None, _COMPACT.default, encode_basestring_ascii, None, ":", ",", False, False, True
    )
)
"""The same encoder's C part, kept (``JSONEncoder.encode`` makes one per call: more than
half the time of a header of strings), without the check for circles (strings have none);
the bytes are the same."""
# FlowFile ids name data, not a secret: shorter ones read better in logs.
FLOWFILE_ID_BYTES = 12


def _check_attributes(attributes: Mapping[str, object]) -> dict[str, str]:
    checked: dict[str, str] = {}
    for name, value in attributes.items():
        if not isinstance(name, str) or not name:
            raise InvalidInput(f"attribute names must be non-empty strings, not {name!r}")
        if not isinstance(value, str):
            raise InvalidInput(f"attribute {name!r} must be a string, not {type(value).__name__}")
        checked[name] = value
    return checked


@dataclass(frozen=True, slots=True)
class FlowFile:
    """A unit of data moving through a flow."""

    id: str
    content: bytes = b""
    attributes: Mapping[str, str] = field(default_factory=dict)
    lineage: tuple[str, ...] = ()
    """Ids of the FlowFiles this one descends from, oldest first."""

    @classmethod
    def create(
        cls, content: bytes | str = b"", attributes: Mapping[str, str] | None = None
    ) -> FlowFile:
        data = content.encode() if isinstance(content, str) else bytes(content)
        return cls(new_id(FLOWFILE_ID_BYTES), data, _check_attributes(attributes or {}))

    @property
    def lineage_start(self) -> str:
        """The id of the first FlowFile of this line of descent."""
        return self.lineage[0] if self.lineage else self.id

    def text(self, encoding: str = "utf-8") -> str:
        return self.content.decode(encoding, errors="replace")

    def get(self, name: str, default: str | None = None) -> str | None:
        return self.attributes.get(name, default)

    def lookup(self, name: str) -> str | None:
        """What ``${name}`` reads: the attribute, or for ``uuid`` (unset) the FlowFile id."""
        value = self.attributes.get(name)
        if value is None and name == "uuid":
            return self.id
        return value

    def evolve(
        self,
        *,
        content: bytes | str | None = None,
        update: Mapping[str, str] | None = None,
        remove: Iterable[str] = (),
        attributes: Mapping[str, str] | None = None,
    ) -> FlowFile:
        """The same FlowFile with new content and/or attributes (``update`` merges)."""
        attrs = dict(self.attributes if attributes is None else _check_attributes(attributes))
        for name in remove:
            attrs.pop(name, None)
        if update:
            attrs.update(_check_attributes(update))
        data = self.content if content is None else content
        return FlowFile(
            self.id,
            data.encode() if isinstance(data, str) else bytes(data),
            attrs,
            self.lineage,
        )

    def child(
        self, *, content: bytes | str | None = None, update: Mapping[str, str] | None = None
    ) -> FlowFile:
        """A new FlowFile descended from this one, with its content and attributes."""
        base = self.evolve(content=content, update=update)
        lineage = (*self.lineage, self.id)[-MAX_LINEAGE:]
        return FlowFile(new_id(FLOWFILE_ID_BYTES), base.content, dict(base.attributes), lineage)

    # -- serialization, for parking in the store ----------------------------------------

    def encode(self, extra: Mapping[str, Any] | None = None) -> bytes:
        """Bytes holding the whole FlowFile (and ``extra`` header fields), content raw."""
        attributes = self.attributes
        if not extra and _PLAIN is not None and type(attributes) is dict:
            # Every move of a FlowFile through a durable flow: its attributes are strings.
            plain = {"id": self.id, "lineage": self.lineage, "attributes": attributes}
            encoded = "".join(_PLAIN(plain, 0)).encode()
        else:
            header = {
                "id": self.id,
                "lineage": list(self.lineage),
                "attributes": dict(attributes),
                **(extra or {}),
            }
            encoded = _COMPACT.encode(header).encode()
        return _HEADER.pack(_MAGIC, len(encoded)) + encoded + self.content

    @classmethod
    def decode(cls, data: bytes) -> tuple[FlowFile, dict[str, Any]]:
        """The FlowFile and the header fields ``encode`` was given."""
        try:
            magic, size = _HEADER.unpack_from(data)
            if magic != _MAGIC:
                raise ValueError("not an encoded FlowFile")
            header = json.loads(data[_HEADER.size : _HEADER.size + size])
            content = data[_HEADER.size + size :]
            flowfile = cls(
                str(header.pop("id")),
                bytes(content),
                _check_attributes(header.pop("attributes")),
                tuple(str(i) for i in header.pop("lineage")),
            )
        except (struct.error, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InvalidInput(f"cannot read a parked FlowFile: {exc}") from exc
        return flowfile, header

"""The intercept chain: deterministic short-circuits, in an order declared in YAML.

The packaged ``intercepts.yaml`` lists the known intercepts in the order they are tried;
the first that answers settles the turn. Plugins register the intercepts themselves and
may add rows (``before``/``after`` a named one) or override a row (same name) with YAML of
their own. A row's ``resolves_confirmation`` is OR-ed with the intercept's own and with
every override, so nothing can drop it once declared: that flag is what the **shield**
reads — while the session waits on a continuation of another owner, intercepts that
resolve confirmations are skipped. Intercepts that resolve nothing are never shielded.
A row whose intercept no plugin registered is simply not tried.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any, Protocol

import yaml

from pawflow.errors import InvalidInput

if TYPE_CHECKING:
    from pawflow.chat.sessions import SessionContinuation
    from pawflow.chat.turn import Turn

DEFAULT_FILE = "intercepts.yaml"
_ROW_KEYS = {"name", "resolves_confirmation", "enabled", "owner", "description"}


class Intercept(Protocol):
    """A deterministic short-circuit: a reply for the turn, or None to let it pass.

    An intercept may also carry ``owner`` (whose continuations it resolves; its name when
    absent).
    """

    name: str
    resolves_confirmation: bool

    def __call__(self, turn: Turn) -> str | None: ...


@dataclass
class InterceptSpec:
    """An intercept made of a function, for plugins."""

    name: str
    handler: Callable[[Turn], str | None]
    resolves_confirmation: bool = False
    owner: str | None = None

    def __call__(self, turn: Turn) -> str | None:
        return self.handler(turn)


@dataclass
class InterceptRow:
    name: str
    resolves_confirmation: bool = False
    enabled: bool = True
    owner: str | None = None
    description: str = ""


@dataclass(frozen=True)
class Bound:
    """A row with its intercept: what the intercept stage tries."""

    name: str
    owner: str
    resolves_confirmation: bool
    intercept: Intercept

    def shielded(self, pending: SessionContinuation | None) -> bool:
        """Skipped this turn: it resolves confirmations and the session waits on another."""
        return self.resolves_confirmation and pending is not None and pending.owner != self.owner


def parse_rows(text: str, where: str = "intercepts") -> list[InterceptRow]:
    """Rows from YAML: ``intercepts: [{name, resolves_confirmation?, enabled?, owner?}]``."""
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{where}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict) or set(data) - {"intercepts"}:
        raise InvalidInput(f"{where}: expected a mapping with only 'intercepts'")
    raw_rows = data.get("intercepts") or []
    if not isinstance(raw_rows, list):
        raise InvalidInput(f"{where}: 'intercepts' must be a list")
    rows = []
    for position, raw in enumerate(raw_rows):
        at = f"{where}.intercepts[{position}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"]:
            raise InvalidInput(f"{at}: a row needs a name")
        unknown = set(raw) - _ROW_KEYS
        if unknown:
            raise InvalidInput(f"{at}: unknown keys {sorted(unknown)}")
        for flag in ("resolves_confirmation", "enabled"):
            if flag in raw and not isinstance(raw[flag], bool):
                raise InvalidInput(f"{at}: {flag} must be true or false")
        rows.append(
            InterceptRow(
                name=raw["name"],
                resolves_confirmation=bool(raw.get("resolves_confirmation", False)),
                enabled=bool(raw.get("enabled", True)),
                owner=raw.get("owner"),
                description=str(raw.get("description") or ""),
            )
        )
    return rows


def packaged_rows() -> list[InterceptRow]:
    text = resources.files("pawflow.chat").joinpath(DEFAULT_FILE).read_text("utf-8")
    return parse_rows(text, DEFAULT_FILE)


@dataclass
class InterceptChain:
    """Rows in order, and the intercepts registered for them."""

    rows: list[InterceptRow] = field(default_factory=list)
    _intercepts: dict[str, Intercept] = field(default_factory=dict)

    @classmethod
    def packaged(cls, intercepts: Iterable[Intercept] = ()) -> InterceptChain:
        chain = cls(packaged_rows())
        for intercept in intercepts:
            chain.register(intercept)
        return chain

    def row(self, name: str) -> InterceptRow | None:
        return next((row for row in self.rows if row.name == name), None)

    def _place(self, row: InterceptRow, before: str | None, after: str | None) -> None:
        if before is not None and after is not None:
            raise InvalidInput("give before or after, not both")
        anchor = before or after
        if anchor is None:
            self.rows.append(row)
            return
        index = next((i for i, r in enumerate(self.rows) if r.name == anchor), None)
        if index is None:
            raise InvalidInput(f"no intercept row named {anchor!r}")
        self.rows.insert(index if before is not None else index + 1, row)

    def add_row(
        self, row: InterceptRow, *, before: str | None = None, after: str | None = None
    ) -> InterceptRow:
        """Add a row, or override the row of that name (``resolves_confirmation`` OR-ed)."""
        current = self.row(row.name)
        if current is None:
            self._place(row, before, after)
            return row
        current.resolves_confirmation = current.resolves_confirmation or row.resolves_confirmation
        current.enabled = row.enabled
        current.owner = row.owner or current.owner
        current.description = row.description or current.description
        if before is not None or after is not None:
            self.rows.remove(current)
            self._place(current, before, after)
        return current

    def load(self, text: str, where: str = "intercepts") -> None:
        """Add or override rows from YAML, in its order."""
        for row in parse_rows(text, where):
            self.add_row(row)

    def register(
        self,
        intercept: Intercept,
        *,
        resolves_confirmation: bool = False,
        before: str | None = None,
        after: str | None = None,
    ) -> InterceptRow:
        """Register ``intercept`` for its row (a new row at the end, or where placed)."""
        name = intercept.name
        if not name:
            raise InvalidInput("an intercept needs a name")
        if name in self._intercepts:
            raise InvalidInput(f"an intercept named {name!r} is already registered")
        row = self.add_row(
            InterceptRow(
                name,
                resolves_confirmation=resolves_confirmation
                or bool(getattr(intercept, "resolves_confirmation", False)),
            ),
            before=before,
            after=after,
        )
        self._intercepts[name] = intercept
        return row

    def bound(self) -> list[Bound]:
        """The intercepts to try, in order: enabled rows that have an intercept."""
        found = []
        for row in self.rows:
            intercept = self._intercepts.get(row.name)
            if intercept is None or not row.enabled:
                continue
            owner = row.owner or getattr(intercept, "owner", None) or row.name
            flag = row.resolves_confirmation or bool(
                getattr(intercept, "resolves_confirmation", False)
            )
            found.append(Bound(row.name, str(owner), flag, intercept))
        return found

    def describe(self) -> list[dict[str, Any]]:
        return [
            {
                "name": b.name,
                "owner": b.owner,
                "resolves_confirmation": b.resolves_confirmation,
            }
            for b in self.bound()
        ]

"""The ``organizer``: tidies a sandbox folder, moving its files into folders by type.

"organize …" (or "tidy up …") makes a plan — which file goes into which folder — and asks
for approval: the plan is an explicit ``approval`` continuation of the conversation it was
made in, so it belongs to that session and expires with it (``plan_ttl``, 1 day by default).
A yes in *that* conversation, while the plan is what it waits on, carries the moves out;
every move is checked again first (the file is still there and unchanged, the target is
free, both stay inside the sandbox) and a move that no longer holds is skipped, not forced.

Config: ``sandbox`` (the folder; required), ``plan_ttl`` (``"1d"``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pawflow.chat.intercepts import InterceptSpec
from pawflow.chat.plugins import data_path
from pawflow.demo.plugins import declare_rows
from pawflow.errors import Conflict, InvalidInput
from pawflow.reading.words import read_yes_no

if TYPE_CHECKING:
    from pawflow.chat.plugins import PluginAPI
    from pawflow.chat.turn import Turn

OWNER = "organizer"
APPLY = "organizer.apply"

FOLDERS: dict[str, frozenset[str]] = {
    "documents": frozenset({".pdf", ".doc", ".docx", ".odt", ".txt", ".md", ".rtf"}),
    "spreadsheets": frozenset({".csv", ".xls", ".xlsx", ".ods"}),
    "images": frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".heic"}),
    "audio": frozenset({".mp3", ".wav", ".flac", ".ogg", ".m4a"}),
    "video": frozenset({".mp4", ".mov", ".mkv", ".webm"}),
    "archives": frozenset({".zip", ".tar", ".gz", ".tgz", ".7z", ".rar"}),
}
_ASKED = re.compile(
    r"^\s*(?:please\s+|can you\s+|could you\s+|would you\s+)?"
    r"(?:organi[sz]e|tidy(?:\s+up)?|sort\s+out|clean\s+up)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Move:
    """One file to move: ``name`` (in the sandbox) into ``folder``, as it was when planned."""

    name: str
    folder: str
    size: int
    mtime_ns: int

    @property
    def target(self) -> str:
        return f"{self.folder}/{self.name}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "folder": self.folder, "size": self.size, "mtime": self.mtime_ns}

    @classmethod
    def from_dict(cls, data: Any) -> Move:
        if not isinstance(data, dict):
            raise InvalidInput("a move must be an object")
        return cls(str(data["name"]), str(data["folder"]), int(data["size"]), int(data["mtime"]))


def folder_for(name: str) -> str | None:
    suffix = Path(name).suffix.lower()
    return next((folder for folder, kinds in FOLDERS.items() if suffix in kinds), None)


class Organizer:
    def __init__(self, services: PluginAPI, sandbox: Path, *, plan_ttl: str = "1d") -> None:
        self.services = services
        self.sandbox = sandbox
        self.plan_ttl = plan_ttl

    @property
    def label(self) -> str:
        return self.sandbox.name or str(self.sandbox)

    # -- planning -------------------------------------------------------------------------

    def plan(self) -> list[Move]:
        """Every loose file of the sandbox that has a folder to go to."""
        moves = []
        for entry in sorted(os.scandir(self.sandbox), key=lambda e: e.name):
            if entry.name.startswith(".") or not entry.is_file(follow_symlinks=False):
                continue
            folder = folder_for(entry.name)
            if folder is None:
                continue
            if os.path.lexists(self.sandbox / folder / entry.name):
                continue  # its place is taken: leave it for the user
            stat = entry.stat(follow_symlinks=False)
            moves.append(Move(entry.name, folder, stat.st_size, stat.st_mtime_ns))
        return moves

    def organize(self, turn: Turn) -> str | None:
        """Intercept ``organizer.organize``: propose a plan and ask for approval."""
        if not _ASKED.match(turn.text):
            return None
        if not self.sandbox.is_dir():
            return f"There is no sandbox folder to organize ({self.sandbox} does not exist)."
        moves = self.plan()
        if not moves:
            return f"Everything in {self.label}/ is already in place: there is nothing to move."
        count = f"{len(moves)} file{'s' if len(moves) != 1 else ''}"
        question = f"Shall I move these {count} in {self.label}/?"
        self.services.ask(
            turn.conversation_id,
            OWNER,
            "approval",
            question,
            intent=APPLY,
            payload={"sandbox": str(self.sandbox), "moves": [m.to_dict() for m in moves]},
            ttl=self.plan_ttl,
        )
        lines = [f"- {m.name} → {m.folder}/" for m in moves]
        return "\n".join([f"I can tidy up {self.label}/ by moving {count}:", *lines, question])

    # -- approving -----------------------------------------------------------------------

    def approve(self, turn: Turn) -> str | None:
        """Intercept ``organizer.approve``: a yes or a no to *this session's* plan."""
        pending = turn.pending
        if (
            pending is None
            or pending.owner != OWNER
            or pending.kind != "approval"
            or pending.intent != APPLY
        ):
            return None
        answer = read_yes_no(turn.text)
        if answer is None:
            return None
        try:
            self.services.answered(pending.id, turn.text)
        except Conflict:
            return None  # another turn took this answer
        asked = f'Earlier I asked "{pending.question}"'
        if not answer:
            return f"{asked} — taking that as no. I left every file where it was."
        payload = pending.payload if isinstance(pending.payload, dict) else {}
        try:
            moves = [Move.from_dict(item) for item in payload.get("moves") or []]
        except (InvalidInput, KeyError, TypeError, ValueError):
            moves = []
        if payload.get("sandbox") != str(self.sandbox) or not moves:
            return f"{asked} — but I cannot read that plan any more: nothing was moved."
        done, skipped = self.apply(moves)
        lines = [f"{asked} — taking that as yes."]
        if done:
            lines.append(f"Moved {len(done)} file{'s' if len(done) != 1 else ''}:")
            lines += [f"- {m.name} → {m.folder}/" for m in done]
        for move, reason in skipped:
            lines.append(f"- skipped {move.name}: {reason}")
        if not done:
            lines.append("Nothing was moved.")
        return "\n".join(lines)

    def check(self, move: Move) -> str | None:
        """Why ``move`` may not be carried out now, or None when it still holds."""
        root = self.sandbox.resolve()
        if "/" in move.name or move.name in ("", ".", "..") or move.folder not in FOLDERS:
            return "not a move this organizer makes"
        source = self.sandbox / move.name
        try:
            stat = source.lstat()
        except FileNotFoundError:
            return "it is gone"
        if source.is_symlink() or not source.is_file():
            return "it is no longer a plain file"
        if source.resolve().parent != root:
            return "it is outside the sandbox"
        if stat.st_size != move.size or stat.st_mtime_ns != move.mtime_ns:
            return "it changed since the plan was made"
        folder = self.sandbox / move.folder
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            return f"{move.folder}/ is not a folder"
        if os.path.lexists(folder / move.name):
            return f"{move.target} already exists"
        return None

    def apply(self, moves: list[Move]) -> tuple[list[Move], list[tuple[Move, str]]]:
        done: list[Move] = []
        skipped: list[tuple[Move, str]] = []
        for move in moves:
            reason = self.check(move)
            if reason is None:
                reason = self._move(move)
            if reason is None:
                done.append(move)
            else:
                skipped.append((move, reason))
        return done, skipped

    def _move(self, move: Move) -> str | None:
        source = self.sandbox / move.name
        target = self.sandbox / move.folder / move.name
        target.parent.mkdir(exist_ok=True)
        try:
            os.link(source, target)  # never replaces a file that appeared meanwhile
        except FileExistsError:
            return f"{move.target} already exists"
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV):
                return f"it could not be moved ({exc.strerror})"
            if os.path.lexists(target):
                return f"{move.target} already exists"
            os.rename(source, target)
            return None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(source)
        return None


def register(services: PluginAPI, config: Mapping[str, Any]) -> None:
    unknown = set(config) - {"sandbox", "plan_ttl"}
    if unknown:
        raise InvalidInput(f"organizer: unknown settings {sorted(unknown)}")
    if config.get("sandbox") is None:
        raise InvalidInput("organizer: the sandbox folder is required")
    organizer = Organizer(
        services,
        data_path(config, "sandbox", Path()),
        plan_ttl=str(config.get("plan_ttl") or "1d"),
    )
    declare_rows(services)
    services.register_intercept(
        InterceptSpec(
            "organizer.approve", organizer.approve, resolves_confirmation=True, owner=OWNER
        )
    )
    services.register_intercept(
        InterceptSpec("organizer.organize", organizer.organize, owner=OWNER)
    )

"""A small filesystem of a test's own, to fill up: a tmpfs mounted on a temporary folder
(which needs the right to mount: root), unmounted afterwards. ``small_disk`` in
``tests/conftest.py`` hands one to a test."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path


class SmallDisk:
    """A mounted tmpfs of ``size`` bytes at ``path``; :meth:`fill` takes what is left."""

    def __init__(self, path: Path, size: int) -> None:
        self.path = path
        self.size = size
        self.filler = path / "filler"

    def free(self) -> int:
        found = os.statvfs(self.path)
        return found.f_bavail * found.f_frsize

    def fill(self) -> None:
        """Take every byte left (the filler file grows until the disk says it is full)."""
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            for size in (1024 * 1024, 4096, 1):  # big blocks, then what is left of them
                with contextlib.suppress(OSError):
                    while os.write(fd, b"\0" * size):
                        pass
        finally:
            os.close(fd)

    def make_room(self) -> None:
        self.filler.unlink(missing_ok=True)


def can_mount() -> bool:
    return os.geteuid() == 0 and shutil.which("mount") is not None


@contextlib.contextmanager
def small_disk(size: int = 4 * 1024 * 1024) -> Iterator[SmallDisk]:
    path = Path(tempfile.mkdtemp(prefix="pawflow-disk-"))
    try:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)],
            check=True,
            capture_output=True,
            timeout=30,
        )
        try:
            yield SmallDisk(path, size)
        finally:
            subprocess.run(["umount", "-l", str(path)], check=False, timeout=30)
    finally:
        shutil.rmtree(path, ignore_errors=True)

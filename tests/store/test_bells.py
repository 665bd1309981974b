"""SQLite: other processes' commits ring a watcher awake; its own never do.

The watcher sleeps on its slot of ``<store>-bells`` and looks by the clock only every
``POLL_SLOW``, here set to a minute: whatever it hears within the test's deadline, a bell
told it.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pawflow import open_store
from pawflow.store.engine import bells, changes
from pawflow.store.engine.bells import SLOTS, Bells
from pawflow.testing import eventually

pytestmark = pytest.mark.skipif(
    bells._syscall is None, reason="no futex here: the watcher looks by the clock"
)

OTHER_PROCESS = """
import sys
from pawflow import open_store
with open_store(f"sqlite:///{sys.argv[1]}") as store:
    store.create_conversation("bob", "From another process")
"""


@pytest.fixture
def slow_clock(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A minute between the watcher's looks by the clock; the threads that looked."""
    monkeypatch.setattr(changes, "POLL_SLOW", 60.0)
    looked: list[str] = []
    read = changes.read_counter

    def counting(shm: int) -> int | None:
        if threading.current_thread().name == "pawflow-sqlite-watch":
            looked.append("look")
        return read(shm)

    monkeypatch.setattr(changes, "read_counter", counting)
    return looked


def test_another_process_commit_rings_the_watcher(tmp_path: Path, slow_clock: list[str]) -> None:
    path = tmp_path / "rung.db"
    with open_store(f"sqlite:///{path}") as store:
        heard: list[str] = []
        watching = threading.get_ident()
        stop = store.db.listen(
            lambda notice: heard.append(notice) if threading.get_ident() != watching else None
        )
        eventually(lambda: heard == ["changed"])  # the first look, at the baseline
        heard.clear()
        subprocess.run([sys.executable, "-c", OTHER_PROCESS, str(path)], check=True, timeout=60)
        eventually(lambda: "changed" in heard, timeout=10)
        stop()


def test_own_commits_ring_nothing_of_their_own(tmp_path: Path, slow_clock: list[str]) -> None:
    path = tmp_path / "quiet.db"
    with open_store(f"sqlite:///{path}") as store, open_store(f"sqlite:///{path}") as other:
        heard: list[str] = []
        watching = threading.get_ident()
        store.db.listen(
            lambda notice: heard.append(notice) if threading.get_ident() != watching else None
        )
        eventually(lambda: heard == ["changed"])  # the baseline's look
        baseline = len(slow_clock)
        conversation = store.create_conversation("alice", "Quiet").id
        for n in range(20):
            store.post_message(conversation, f"note {n}", user="alice")
        assert len(slow_clock) == baseline  # 21 commits of its own: not one look
        # Another database object on the file (as another process would) rings it.
        other.create_conversation("bob", "Elsewhere")
        eventually(lambda: heard == ["changed", "changed"], timeout=10)
        assert len(slow_clock) > baseline


def test_a_stopped_watcher_ends_without_waiting_for_the_clock(
    tmp_path: Path, slow_clock: list[str]
) -> None:
    before = set(threading.enumerate())
    with open_store(f"sqlite:///{tmp_path / 'stopped.db'}") as store:
        heard: list[str] = []
        store.db.listen(heard.append)
        eventually(lambda: heard == ["changed"])  # the watcher's baseline: it sleeps now
        (watcher,) = [
            t for t in set(threading.enumerate()) - before if t.name == "pawflow-sqlite-watch"
        ]
    watcher.join(timeout=10)
    assert not watcher.is_alive()


def test_a_dead_process_slot_is_taken_again_and_a_full_file_falls_back(tmp_path: Path) -> None:
    path = str(tmp_path / "slots.db")
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    dead = int(finished.stdout)
    holders = Bells(path)
    taken = [holders.join() for _ in range(SLOTS)]
    assert all(bell is not None for bell in taken)
    assert holders.join() is None  # every slot taken: this watcher looks by the clock
    first = taken[0]
    assert first is not None
    with open(f"{path}-bells", "r+b") as file:  # its holder died without giving it back
        file.seek(first.slot * bells._SLOT)
        file.write(dead.to_bytes(4, "little"))
    again = Bells(path)
    found = again.join()
    assert found is not None and found.slot == first.slot
    again.close()
    holders.close()
    fresh = Bells(path)  # every slot given back on close
    assert fresh.join() is not None
    fresh.close()

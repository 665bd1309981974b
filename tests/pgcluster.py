"""A private PostgreSQL cluster that a test may stop, restart and start again.

The shared server on 127.0.0.1:5432 is never restarted: a test that needs a database to go
away makes its own cluster with ``initdb`` in a temporary folder, runs it with ``pg_ctl`` on
a free loopback port (as the ``postgres`` user when the tests run as root: PostgreSQL refuses
to run as root), and removes it afterwards. ``private_postgres`` in ``tests/conftest.py``
hands one to a test.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg

from pawflow.server.testing import free_port


def bin_dir() -> Path | None:
    """Where ``initdb`` and ``pg_ctl`` are: the newest PostgreSQL under /usr/lib/postgresql
    (Debian), else the folder of ``pg_ctl`` on the PATH; None when there is none."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if found:
        return found[-1].parent
    on_path = shutil.which("pg_ctl")
    return None if on_path is None else Path(on_path).parent


class PrivateCluster:
    """One PostgreSQL cluster of a test's own: ``start()``, ``stop()``, ``restart()``."""

    def __init__(self, binaries: Path) -> None:
        self.binaries = binaries
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="pawflow-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self._user: pwd.struct_passwd | None = None
        if os.geteuid() == 0:  # PostgreSQL will not run as root
            self._user = pwd.getpwnam("postgres")
            os.chown(self.root, self._user.pw_uid, self._user.pw_gid)
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-sync",
        )
        self.running = False

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def url(self, name: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def create_database(self, name: str = "pawflow") -> str:
        """A new, empty database in the cluster; returns its URL."""
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
            " -c full_page_writes=off -c max_connections=60"
        )
        self._ctl("start", "-w", "-t", "60", "-l", str(self.log), "-o", options)
        self.running = True

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``fast``: clients are cut off; ``immediate``: as a crash)."""
        self._ctl("stop", "-w", "-t", "60", "-m", mode)
        self.running = False

    def restart(self, mode: str = "fast") -> None:
        self.stop(mode)
        self.start()

    def remove(self) -> None:
        if self.running:
            with contextlib.suppress(subprocess.CalledProcessError):
                self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def _ctl(self, *args: str) -> None:
        self._run("pg_ctl", "-D", str(self.data), *args)

    def _run(self, program: str, *args: str) -> None:
        command = [str(self.binaries / program), *args]
        if self._user is not None:
            command = ["runuser", "-u", self._user.pw_name, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            log = self.log.read_text() if self.log.exists() else ""
            raise subprocess.CalledProcessError(
                done.returncode, command, done.stdout, done.stderr + log
            )


@contextlib.contextmanager
def private_cluster() -> Iterator[PrivateCluster | None]:
    """A started private cluster, removed afterwards; None when PostgreSQL's programs are
    not installed."""
    binaries = bin_dir()
    if binaries is None:
        yield None
        return
    cluster = PrivateCluster(binaries)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.remove()

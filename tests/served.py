"""A real ``pawflow serve`` process for the client tests (web chat, terminal), restartable on
its port: what a person runs, not an app inside the test process."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import httpx

from pawflow.server.testing import free_port
from pawflow.testing import eventually


class Served:
    """A ``pawflow serve`` process on a fixed port, restartable on that same port."""

    def __init__(
        self,
        db: str | None,
        directory: Path,
        *,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        program: Sequence[str] = ("-m", "pawflow", "serve"),
    ) -> None:
        self.db = db
        self.program = list(program)
        """What Python runs: ``pawflow serve``, or a script that serves as it does."""
        """The store's URL; None for the default one (the user's data folder)."""
        self.directory = directory
        self.args = list(args)  # more of `pawflow serve`'s options, e.g. --demo
        self.env = dict(env or {})
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[str] | None = None
        self.output: list[str] = []
        self._reader: threading.Thread | None = None

    def start(self, timeout: float = 120) -> None:
        env = {
            **os.environ,
            "PAWFLOW_SWEEP_INTERVAL": "3600",
            "PAWFLOW_RATE_LIMIT": "100000",
            "PAWFLOW_RATE_BURST": "100000",
            "PAWFLOW_LOG_LEVEL": "warning",
            **self.env,
        }
        self.process = subprocess.Popen(
            [
                sys.executable,
                *self.program,
                "--port",
                str(self.port),
                *self._db(),
                *self.args,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=self.directory,
            env=env,
        )
        process = self.process

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                self.output.append(line)

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()

        def up() -> bool:
            assert process.poll() is None, "".join(self.output)
            with contextlib.suppress(httpx.TransportError):
                return httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200
            return False

        try:
            # A bound for a machine that is busy many times over, not a speed: start-up takes
            # about 1.5 s alone.
            eventually(up, timeout=timeout, interval=0.05)
        except BaseException:
            self.kill()  # never leave a server behind a failed start
            raise

    def _db(self) -> list[str]:
        return [] if self.db is None else ["--db", self.db]

    def kill(self) -> None:
        """Stop at once, as a crash would: open streams are cut mid-flight."""
        if self.process is None:
            return
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
        if self._reader is not None:
            self._reader.join(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.process = None

    def stop(self) -> int:
        """Stop as an operator would (SIGTERM) and wait; returns the exit code."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=60)
        if self._reader is not None:
            self._reader.join(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.process = None
        return code

    def children(self) -> list[int]:
        """The ids of the processes this server started (``--workers``' workers among them)."""
        assert self.process is not None
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == self.process.pid:
                    found.append(int(entry.name))
        return found

    def printed(self, prefix: str) -> str:
        """What the server printed after ``prefix`` (``export PAWFLOW_TOKEN=`` with --demo)."""
        found = eventually(lambda: [line for line in self.output if prefix in line])
        return found[-1].split(prefix, 1)[1].strip()

    def printed_link(self) -> str:
        return next(line.strip() for line in self.output if "/signin?token=" in line)

    def token(self, name: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "pawflow", "users", "add", name, *self._db()],
            capture_output=True,
            text=True,
            check=True,
            cwd=self.directory,
        )
        return done.stdout.strip().splitlines()[-1]

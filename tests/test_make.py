"""The Makefile as a newcomer meets it: a first ``make run`` cut short while ``.venv`` is being
made, and ``make run`` stopped with Ctrl+C (SIGINT to the terminal's foreground group)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pawflow.server.testing import free_port
from pawflow.testing import eventually

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make"),
]


def _checkout(tmp_path: Path) -> Path:
    """A folder with the project's Makefile (the venv is made there, by the base python)."""
    folder = tmp_path / "checkout"
    folder.mkdir()
    shutil.copy(ROOT / "Makefile", folder / "Makefile")
    return folder


def _base_python() -> str:
    """The interpreter this test's virtual environment was made from: ``make`` makes
    ``.venv`` with it, as ``python3`` on a newcomer's PATH would."""
    return str(Path(sys.base_prefix) / "bin" / Path(sys.executable).name)


def _as_a_terminal_job() -> None:
    """Ctrl+C at its default, as a shell starts a job: a process that ignores SIGINT (a test
    worker, once some library set it so) would pass that on, and make would not stop."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _pip_runs(folder: Path) -> bool:
    python = folder / ".venv" / "bin" / "python"
    done = subprocess.run([python, "-m", "pip", "--version"], capture_output=True, timeout=60)
    return done.returncode == 0


def _make(folder: Path, *targets: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", *targets, f"PYTHON={_base_python()}"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_venv_whose_build_was_cut_short_is_made_again(tmp_path: Path) -> None:
    folder = _checkout(tmp_path)
    # What Ctrl+C in the first second of `make run` left: a python, no pip.
    subprocess.run([_base_python(), "-m", "venv", "--without-pip", folder / ".venv"], check=True)
    assert not _pip_runs(folder)
    done = _make(folder, "venv")
    assert done.returncode == 0, done.stderr
    assert ".venv is incomplete (an interrupted build?): making it again" in done.stdout
    assert _pip_runs(folder)
    # A whole one is kept as it is.
    (folder / ".venv" / "kept").write_text("")
    again = _make(folder, "venv")
    assert again.returncode == 0 and again.stdout == "", again
    assert (folder / ".venv" / "kept").exists()


def test_an_interrupt_while_the_venv_is_made_is_redone_by_the_next_run(tmp_path: Path) -> None:
    folder = _checkout(tmp_path)
    started = subprocess.Popen(
        ["make", "--no-print-directory", "venv", f"PYTHON={_base_python()}"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=_as_a_terminal_job,
    )
    try:
        # Ctrl+C as soon as the python is there: pip is still being installed.
        eventually(lambda: (folder / ".venv" / "bin" / "python").exists(), timeout=60)
        os.killpg(started.pid, signal.SIGINT)
        started.wait(timeout=60)
    finally:
        if started.poll() is None:
            os.killpg(started.pid, signal.SIGKILL)
            started.wait()
    assert not _pip_runs(folder)  # "No module named pip", as every later run said
    done = _make(folder, "venv")
    assert done.returncode == 0, done.stderr
    assert _pip_runs(folder)


def test_ctrl_c_stops_make_run_without_a_make_error(tmp_path: Path) -> None:
    folder = _checkout(tmp_path)
    (folder / "pyproject.toml").write_text("")
    os.utime(folder / "pyproject.toml", (0, 0))
    (folder / "installed").write_text("")  # the environment is there: this test's own
    env = {
        **os.environ,
        "PAWFLOW_PORT": str(free_port()),
        "PAWFLOW_DB": f"sqlite:///{tmp_path / 'pawflow.db'}",
        "PAWFLOW_LOG_LEVEL": "info",
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    lines = []
    with subprocess.Popen(
        ["make", "--no-print-directory", "run", f"PY={sys.executable}", "STAMP=installed"],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own group, as a terminal's foreground job
        preexec_fn=_as_a_terminal_job,
    ) as make:
        assert make.stdout is not None
        try:
            for line in make.stdout:
                lines.append(line)
                if "Application startup complete" in line:
                    os.killpg(make.pid, signal.SIGINT)  # what the terminal does on Ctrl+C
            make.wait(timeout=60)
        finally:
            if make.poll() is None:
                os.killpg(make.pid, signal.SIGKILL)
                make.wait()
    printed = "".join(lines)
    assert "Application shutdown complete" in printed, printed
    assert "make: ***" not in printed and "Error" not in printed, printed
    assert "Traceback" not in printed and "Aborted" not in printed, printed
    # make itself ends by the signal, as after any Ctrl+C: the shell prints nothing for it.
    assert make.returncode == -signal.SIGINT

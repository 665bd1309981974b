"""``python -m pawflow`` and the ``pawflow`` command: the command line, or one line saying
which extra it needs when it is not installed (the core alone has no commands)."""

from __future__ import annotations

import sys

from pawflow.errors import MissingExtra


def main() -> None:
    try:
        from pawflow.cli import main as run  # noqa: PLC0415 - its extra may be missing
    except MissingExtra as missing:
        sys.stderr.write(f"{missing}\n")
        sys.exit(1)
    run()


if __name__ == "__main__":
    main()

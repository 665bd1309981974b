"""The README's Python example runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).parent.parent / "README.md"


def test_python_api_example_runs(tmp_path: Path) -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("## The Python API", 1)[1]
    example = re.search(r"```python\n(.*?)```", section, re.S)
    assert example is not None
    script = tmp_path / "example.py"
    script.write_text(example.group(1), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "resumed with {'status': 'answered', 'answer': 'staging'}" in done.stdout

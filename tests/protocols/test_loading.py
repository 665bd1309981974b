"""A server loads the AG-UI and A2A packages on the first request to their endpoints, not to
answer its first ``/healthz``: each check runs in a fresh interpreter and reads
``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, sys
import httpx
import pawflow.serve
from pawflow.a2a.mounting import mount as mount_a2a
from pawflow.agui.mounting import mount as mount_agui
from pawflow.server.testing import live_server
from pawflow.store import open_store

def loaded():
    return sorted(name for name in ("ag_ui", "a2a") if name in sys.modules)

seen = {}
with open_store(sys.argv[1]) as store, live_server(
    store, endpoints=[mount_agui, mount_a2a]
) as server:
    seen["healthz"] = httpx.get(server.url + "/healthz").status_code
    seen["before"] = loaded()
    seen["agui"] = httpx.post(server.url + "/agui/deployer", content=b"{}").status_code
    seen["after_agui"] = loaded()
    seen["a2a"] = httpx.post(server.url + "/a2a/deployer", json={}).status_code
    seen["after_a2a"] = loaded()
print(json.dumps(seen))
"""


def test_a_server_loads_each_protocol_on_the_first_request_to_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, f"sqlite:///{tmp_path / 'p.db'}"],
        capture_output=True,
        text=True,
        timeout=100,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {
        "healthz": 200,
        "before": [],
        "agui": 401,
        "after_agui": ["ag_ui"],
        "a2a": 401,
        "after_a2a": ["a2a", "ag_ui"],
    }

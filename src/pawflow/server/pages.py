"""The small pages around the web chat: ``/docs`` (Swagger UI) and ``/favicon.ico``.

Swagger UI (5.x, which reads OpenAPI 3.1) comes from the ``fastapi-offline`` package and is
served from ``/docs/assets``, so the API reference works without internet access. The page
loads its scripts from files (no inline script or style), as a strict Content-Security-Policy
requires.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Annotated

from fastapi import Depends, FastAPI
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

from pawflow.server.auth import Principal, caller

STATIC_DIR = Path(__file__).parent / "static"
ASSETS = "/docs/assets"

DOCS_PAGE = f"""<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>PawFlow API</title>
  <link rel="icon" href="/favicon.ico">
  <link rel="stylesheet" href="{ASSETS}/swagger-ui.css">
  <script src="{ASSETS}/swagger-ui-bundle.js" defer></script>
  <script src="/static/docs.js" defer></script>
</head>
<body>
  <div id="swagger-ui" data-openapi-url="/openapi.json"></div>
</body>
</html>
"""


def install(app: FastAPI) -> None:
    """Add ``/docs``, its assets, and ``/favicon.ico`` to ``app``."""

    @app.get("/docs", include_in_schema=False)
    def docs(principal: Annotated[Principal, Depends(caller)]) -> HTMLResponse:
        return HTMLResponse(DOCS_PAGE, headers={"Cache-Control": "no-cache"})

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(
            STATIC_DIR / "favicon.ico",
            media_type="image/vnd.microsoft.icon",
            headers={"Cache-Control": "public, max-age=86400"},
        )

    # The package's files are on disk (a wheel installed in site-packages).
    assets = Path(str(resources.files("fastapi_offline").joinpath("static")))
    app.mount(ASSETS, StaticFiles(directory=assets), name="docs-assets")

"""The ASGI application: ``create_app(store, settings=…)``.

Its lifespan starts, in order, the event hub (listening for store notices), the sweeper,
the worker pool that runs ``on_message``, then the given services; and stops them in the
reverse order. Everything but ``/healthz``, the static files and sign-in needs a caller.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, FastAPI
from fastapi.middleware import Middleware
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

import pawflow
from pawflow.loops import Service
from pawflow.server import (
    actions,
    admin,
    answer_pages,
    approvals,
    bulk,
    events,
    files,
    governance,
    health,
    invitations,
    pages,
    push,
    retention,
    signin,
    slack,
    sso,
    tokens,
)
from pawflow.server import agents as agent_routes
from pawflow.server import errors as server_errors
from pawflow.server.auth import Principal, caller
from pawflow.server.context import AgentDirectory, MessageHandler, ServerContext
from pawflow.server.hub import EventHub
from pawflow.server.limits import (
    UPLOAD_OVERHEAD,
    BodyLimit,
    HeaderLimit,
    RateLimiter,
    SecurityHeaders,
    SingleQueryValues,
)
from pawflow.server.oidc import OidcConfig, OpenIDProvider
from pawflow.server.settings import ServerSettings
from pawflow.server.throttle import FailureThrottle
from pawflow.store import Store, Sweeper

log = logging.getLogger("pawflow.server")

STATIC_DIR = Path(__file__).parent / "static"
PUBLIC_PATHS = frozenset(
    {
        "/",
        "/confirmations",
        "/healthz",
        "/signin",
        "/favicon.ico",
        "/manifest.webmanifest",
        "/sw.js",
        "/admin",
        "/signin/oidc",
        "/signin/oidc/callback",
        "/signin/oidc/logout",
    }
)
"""Routes served without a caller (besides the files under ``/static``)."""


def _add_routes(app: FastAPI, router: APIRouter) -> None:
    """The router's routes, as its module built them, into the app's own list.

    Each route's validators (its parameters' and its models') were built when its module was
    loaded. ``include_router`` would keep the router apart and build all of them again for
    each app on its first request: about a third of a second of CPU at every start of a
    server or a test's app. Nothing is added at inclusion (no prefix, tags or dependencies
    of its own), so the routes serve the same, and the OpenAPI document lists them the same.
    """
    app.router.routes.extend(router.routes)


def create_app(
    store: Store,
    *,
    settings: ServerSettings | None = None,
    services: Sequence[Service] = (),
    on_message: MessageHandler | None = None,
    agents: AgentDirectory | None = None,
    endpoints: Sequence[Callable[[FastAPI], object]] = (),
) -> FastAPI:
    """The app serving ``store``; ``agents`` are those ``list_agents`` and ``assign_agent``
    reach (none without); ``endpoints`` add more routes to it (``pawflow.serve`` adds the
    MCP endpoint this way)."""
    settings = settings or ServerSettings()
    ctx = ServerContext(
        store=store,
        settings=settings,
        hub=EventHub(store),
        limiter=RateLimiter(settings.rate_limit, settings.rate_burst),
        auth_failures=FailureThrottle(settings.auth_failure_limit, settings.auth_failure_burst),
        on_message=on_message,
        agents=agents,
    )
    oidc_config = OidcConfig.from_settings(settings)
    if oidc_config is not None:
        ctx.oidc = OpenIDProvider(oidc_config, now=lambda: store.now().timestamp())
    upload_limit = settings.max_upload + UPLOAD_OVERHEAD

    def body_limit(path: str) -> int:
        # An answer link's page may carry a file, as an upload does.
        if path == "/api/files" or path.startswith("/a/"):
            return upload_limit
        return ctx.body_limits.get(path, settings.max_body)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        ctx.hub.start()
        stop_pruning = store.add_sweep_step(events.retention_step(settings.event_retention))
        stop_forgetting = store.add_sweep_step(retention.settled_step(settings.settled_retention))
        sweeper = ctx.sweeper = Sweeper(store, interval=settings.sweep_interval)
        sweeper.start()
        ctx.executor = ThreadPoolExecutor(
            settings.message_workers, thread_name_prefix="pawflow-on-message"
        )
        started: list[Service] = []
        try:
            for service in services:
                await anyio.to_thread.run_sync(service.start)
                started.append(service)
            yield
        finally:
            executor, ctx.executor = ctx.executor, None
            # Messages not yet handed on stay stored; a handler already running finishes.
            await anyio.to_thread.run_sync(lambda: executor.shutdown(cancel_futures=True))
            for service in reversed(started):
                try:
                    await anyio.to_thread.run_sync(service.stop)
                except Exception:
                    log.exception("service %r failed to stop", service)
            await anyio.to_thread.run_sync(sweeper.stop)
            ctx.sweeper = None
            stop_pruning()
            stop_forgetting()
            ctx.hub.stop()

    app = FastAPI(
        title="PawFlow",
        version=pawflow.__version__,
        description="Ask a person something and wait for the answer durably.",
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
        middleware=[
            Middleware(SecurityHeaders),
            Middleware(HeaderLimit, limit=settings.max_header_bytes),
            Middleware(SingleQueryValues),
            Middleware(BodyLimit, limit_for=body_limit),
        ],
    )
    app.state.pawflow = ctx
    server_errors.install(app)
    for module in (actions, governance, tokens, bulk, push, admin, agent_routes, approvals):
        _add_routes(app, module.router)
    for module in (invitations, events, files, signin, sso, answer_pages, slack):
        _add_routes(app, module.router)
    _add_basics(app, store)
    _add_static(app)
    for add in endpoints:
        add(app)
    return app


def _add_basics(app: FastAPI, store: Store) -> None:
    @app.get(
        "/healthz",
        summary="Whether the server can work, and what is down",
        response_model=health.Health,
        responses={
            503: {
                "model": health.Health,
                "description": "The store does not answer, or a background loop stopped.",
            }
        },
    )
    def healthz() -> JSONResponse:
        code, body = health.check(store)
        body["version"] = app.version
        headers = {"Retry-After": health.RETRY_AFTER} if code == 503 else None
        return JSONResponse(body, status_code=code, headers=headers)

    @app.get("/openapi.json", include_in_schema=False)
    def openapi(principal: Annotated[Principal, Depends(caller)]) -> JSONResponse:
        return JSONResponse(_openapi(app))

    pages.install(app)  # /docs (served offline) and /favicon.ico


def _openapi(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema is None:
        schema = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
        )
        schema.setdefault("components", {})["securitySchemes"] = {
            "bearer": {"type": "http", "scheme": "bearer"},
            "session": {"type": "apiKey", "in": "cookie", "name": "pawflow_session"},
        }
        schema["security"] = [{"bearer": []}, {"session": []}]
        for path in ("/healthz",):
            for operation in schema["paths"].get(path, {}).values():
                operation["security"] = []
        app.openapi_schema = schema
    return app.openapi_schema


def _add_static(app: FastAPI) -> None:
    index = STATIC_DIR / "index.html"

    # The web chat routes on the client: each of its pages is the same document.
    @app.get("/", include_in_schema=False)
    @app.get("/confirmations", include_in_schema=False)
    @app.get("/admin", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(index, media_type="text/html", headers={"Cache-Control": "no-cache"})

    # The installable app: its manifest, and its service worker, served from the root so
    # that it may control every page of the chat (docs/web-chat.md).
    @app.get("/manifest.webmanifest", include_in_schema=False)
    def manifest() -> FileResponse:
        return FileResponse(
            STATIC_DIR / "manifest.webmanifest",
            media_type="application/manifest+json",
            headers={"Cache-Control": "no-cache"},
        )

    @app.get("/sw.js", include_in_schema=False)
    def service_worker() -> FileResponse:
        return FileResponse(
            STATIC_DIR / "sw.js",
            media_type="text/javascript",
            headers={"Cache-Control": "no-cache"},
        )

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

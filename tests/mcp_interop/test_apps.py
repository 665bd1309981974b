"""MCP Apps: a host that negotiates ``io.modelcontextprotocol/ui`` gets the question as an app
(the asking tools linked to a ``ui://`` page) and two app-only tools that act on requests as
the action API does; a host without the extension sees exactly what it saw before.

The page itself is driven in Chromium through the extension's own host bridge in
tests/mcp_apps; here the wire is checked with the SDK's client, over HTTP and stdio.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.extension import advertise
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID

from pawflow.mcp import app_page, apps
from pawflow.server.testing import LiveServer
from tests.mcp_interop.conftest import http_client, stdio_client, structured
from tests.server.conftest import Api

UserApi = Callable[[str], tuple[Api, str]]

APPS = advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})
LEGACY = {"mode": "legacy"}


def app_host(live: LiveServer, token: str, **options: Any) -> Any:
    """The SDK's client on /mcp, declaring the extension as a host that renders apps does."""
    return http_client(live, token, extensions=[APPS], **options)


async def refused_elicitation(context: Any, params: types.ElicitRequestParams) -> Any:
    raise AssertionError("a host that renders the app is never sent an elicitation")


async def act(client: Client, action: str, **body: Any) -> types.CallToolResult:
    return await client.call_tool(apps.ACTION_TOOL, {"action": action, "body": body})


def refusal(result: types.CallToolResult) -> dict[str, Any]:
    """An app tool's refusal: the action API's status (``code``) and error body."""
    assert result.is_error, result.content
    body: dict[str, Any] = result.structured_content or {}
    return body


def test_a_host_with_the_extension_gets_the_app_linked_and_its_tools(
    live: LiveServer, user_api: UserApi
) -> None:
    _, token = user_api("ida")

    async def scenario() -> tuple[Any, ...]:
        async with app_host(live, token, **LEGACY) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            listed = (await client.list_resources()).resources
            read = await client.read_resource(apps.APP_URI)
            return tools, listed, read

    tools, listed, read = anyio.run(scenario)
    for name in ("request_confirmation", "request_user_input"):
        assert tools[name].meta == {"ui": {"resourceUri": apps.APP_URI}}
    for name in (apps.ACTION_TOOL, apps.UPLOAD_TOOL):
        assert tools[name].meta == {"ui": {"resourceUri": apps.APP_URI, "visibility": ["app"]}}
    for name in ("get_interaction", "list_interactions", "cancel_interaction", "wait_for_answer"):
        assert tools[name].meta is None
    [app] = [r for r in listed if str(r.uri) == apps.APP_URI]
    assert app.mime_type == APP_MIME_TYPE == "text/html;profile=mcp-app"
    [contents] = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.mime_type == APP_MIME_TYPE
    csp = (contents.meta or {})["ui"]["csp"]
    assert csp == {"connectDomains": [], "resourceDomains": [], "frameDomains": []}
    page = contents.text
    assert page == app_page.page()
    # One document: its own policy names its one script and its one style by their digest,
    # and allows nothing else to load, connect, frame or post anywhere.
    [policy] = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    [script] = re.findall(r'<script type="module">(.*?)</script>', page, re.S)
    [style] = re.findall(r"<style>(.*?)</style>", page, re.S)
    for part, directive in ((script, "script-src"), (style, "style-src")):
        digest = base64.b64encode(hashlib.sha256(part.encode()).digest()).decode()
        assert f"{directive} 'sha256-{digest}'" in policy
    for directive in ("default-src 'none'", "connect-src 'none'", "frame-src 'none'"):
        assert directive in policy
    assert not re.search(r"""(src|href)=["']?https?:""", page)
    assert not re.search(r"\.(innerHTML|outerHTML)\s*=|insertAdjacentHTML", script)


def test_a_host_without_the_extension_sees_what_it_saw_before(
    live: LiveServer, user_api: UserApi
) -> None:
    _, token = user_api("jon")

    async def scenario() -> tuple[Any, ...]:
        async with http_client(live, token, **LEGACY) as client:
            tools = (await client.list_tools()).tools
            listed = (await client.list_resources()).resources
            return tools, listed

    tools, listed = anyio.run(scenario)
    assert len(tools) == 6 and all(tool.meta is None for tool in tools)
    assert [str(r.uri) for r in listed] == ["pawflow://interactions/pending"]


def test_the_app_answers_through_respond_interaction_as_mcp_app(
    live: LiveServer, user_api: UserApi
) -> None:
    api, token = user_api("kim")

    async def scenario() -> dict[str, Any]:
        found: dict[str, Any] = {}
        async with app_host(
            live, token, elicitation_callback=refused_elicitation, **LEGACY
        ) as client:
            # Asked with a wait: the host shows the app at once, so the call does not wait.
            asked = await client.call_tool(
                "request_user_input",
                {
                    "kind": "integer",
                    "message": "Replicas?",
                    "response_schema": {"type": "integer", "maximum": 10},
                    "wait_seconds": 60,
                },
            )
            found["summary"] = asked.content[0].text
            record = structured(asked)["interaction"]
            found["asked"] = record
            request_id = record["id"]
            found["too_many"] = refusal(
                await act(client, "respond_interaction", request_id=request_id, answer=11)
            )
            found["nul"] = refusal(
                await act(client, "respond_interaction", request_id=request_id, answer="1\x00")
            )
            found["still"] = api.ok("get_interaction", request_id=request_id)["interaction"]
            answered = await act(
                client,
                "respond_interaction",
                request_id=request_id,
                answer=10,
                answered_via="button",  # what the web chat's block says: the app is the channel
            )
            found["answered"] = structured(answered)["interaction"]
            found["again"] = refusal(
                await act(client, "respond_interaction", request_id=request_id, answer=9)
            )
            found["details"] = structured(
                await act(client, "get_interaction", request_id=request_id)
            )
            found["unknown"] = refusal(await act(client, "get_interaction", request_id="nope"))
            found["bad_action"] = refusal(
                await client.call_tool(apps.ACTION_TOOL, {"action": "delete_everything"})
            )
        return found

    found = anyio.run(scenario)
    assert found["asked"]["status"] == "pending"
    assert "shown to the person in the app" in found["summary"]
    assert found["too_many"]["code"] == 422
    assert [e["message"] for e in found["too_many"]["errors"]] == ["must be at most 10"]
    # Read as the action API reads a body: text it cannot store is refused before anything.
    assert found["nul"] == {
        "code": 400,
        "error": "the body holds text with NUL characters or lone surrogates",
    }
    assert found["still"]["status"] == "pending"
    answered = found["answered"]
    assert (answered["answer"], answered["answered_via"]) == (10, "mcp-app")
    assert answered["answered_by"] == api.user
    assert found["again"] == {
        "code": 409,
        "error": found["again"]["error"],
        "status": "answered",
    }
    # The same JSON the action API gives, and one answer in the audit trail, the app's.
    via_api = api.ok("get_interaction", request_id=answered["id"])
    assert found["details"] == via_api
    steps = [(s["action"], s["via"]) for s in via_api["audit"]]
    assert steps.count(("answered", "mcp-app")) == 1
    assert [a for a, _ in steps].count("answered") == 1
    assert found["unknown"] == {"code": 404, "error": "interaction not found"}
    assert found["bad_action"]["code"] == 422
    assert {e["path"] for e in found["bad_action"]["errors"]} == {"action", "body"}


def test_another_users_request_is_as_unknown_to_the_app_as_a_missing_one(
    live: LiveServer, user_api: UserApi
) -> None:
    owner, _ = user_api("lea")
    _, token = user_api("max")
    theirs = owner.ask(owner.conversation())["id"]

    async def scenario() -> list[dict[str, Any]]:
        async with app_host(live, token, **LEGACY) as client:
            return [
                refusal(await act(client, name, request_id=request_id, **extra))
                for request_id in (theirs, "no-such-request")
                for name, extra in (
                    ("get_interaction", {}),
                    ("respond_interaction", {"answer": True}),
                    ("cancel_interaction", {}),
                )
            ]

    found = anyio.run(scenario)
    assert found[:3] == found[3:]
    assert all(body == {"code": 404, "error": "interaction not found"} for body in found)
    assert owner.ok("get_interaction", request_id=theirs)["interaction"]["status"] == "pending"


def test_an_app_upload_is_checked_as_the_upload_api_checks_it(
    live: LiveServer, user_api: UserApi
) -> None:
    api, token = user_api("ned")
    conversation = api.conversation()
    request_id = api.ask(conversation, "file", response_schema={"mediaTypes": ["text/plain"]})["id"]
    # Larger than the action API's body limit (1 MiB): /mcp takes an upload in base64.
    notes = b"line\n" * 300_000

    def upload(content: str, name: str = "notes.txt", **extra: Any) -> dict[str, Any]:
        return {"request_id": request_id, "name": name, "content": content, **extra}

    async def scenario() -> dict[str, Any]:
        found: dict[str, Any] = {}
        async with app_host(live, token, **LEGACY) as client:
            png = upload(base64.b64encode(b"\x89PNG").decode(), "a.png", media_type="image/png")
            found["wrong_type"] = refusal(await client.call_tool(apps.UPLOAD_TOOL, png))
            found["not_base64"] = refusal(await client.call_tool(apps.UPLOAD_TOOL, upload("%%")))
            kept = await client.call_tool(
                apps.UPLOAD_TOOL, upload(base64.b64encode(notes).decode(), media_type="text/plain")
            )
            ref = structured(kept)["file"]
            found["ref"] = ref
            answered = await act(client, "respond_interaction", request_id=request_id, answer=ref)
            found["answered"] = structured(answered)["interaction"]
        return found

    found = anyio.run(scenario)
    assert found["wrong_type"]["code"] == 422
    assert found["wrong_type"]["errors"] == [
        {"path": "file", "message": "the file type must be one of: text/plain"}
    ]
    assert found["not_base64"]["code"] == 422
    assert [e["path"] for e in found["not_base64"]["errors"]] == ["content"]
    ref = found["ref"]
    assert (ref["name"], ref["size"]) == ("notes.txt", len(notes))
    assert ref["sha256"] == hashlib.sha256(notes).hexdigest()
    assert found["answered"]["answer"] == ref
    assert found["answered"]["answered_via"] == "mcp-app"


def test_claims_from_the_app_are_recorded_as_the_apps(live: LiveServer, user_api: UserApi) -> None:
    api, token = user_api("ola")
    conversation = api.conversation()
    request_id = api.ask(conversation, assignees=[api.user])["id"]

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with app_host(live, token, **LEGACY) as client:
            claimed = structured(
                await act(client, "claim_interaction", request_id=request_id, via="button")
            )
            released = structured(await act(client, "release_interaction", request_id=request_id))
            return claimed, released

    claimed, released = anyio.run(scenario)
    assert claimed["policy"]["claimed_by"] == api.user
    assert "claimed_by" not in released["policy"] or released["policy"]["claimed_by"] is None
    steps = [(s["action"], s["via"]) for s in released["audit"]]
    assert ("claimed", "mcp-app") in steps and ("released", "mcp-app") in steps


def test_over_stdio_the_app_acts_through_the_servers_api(
    live: LiveServer, user_api: UserApi
) -> None:
    api, token = user_api("pia")
    found: dict[str, Any] = {}

    async def scenario() -> None:
        async with stdio_client(live, token, extensions=[APPS], **LEGACY) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert tools["request_user_input"].meta == {"ui": {"resourceUri": apps.APP_URI}}
            form = {
                "kind": "form",
                "message": "Who?",
                "response_schema": FORM,
                "assignees": [api.user],
            }
            asked = structured(await client.call_tool("request_user_input", form))["interaction"]
            request_id = asked["id"]
            found["asked"] = asked
            found["refused"] = refusal(
                await act(client, "respond_interaction", request_id=request_id, answer={})
            )
            found["claimed"] = structured(
                await act(client, "claim_interaction", request_id=request_id)
            )
            ref = structured(
                await client.call_tool(
                    apps.UPLOAD_TOOL,
                    {
                        "request_id": request_id,
                        "field": "cv",
                        "name": "cv.txt",
                        "content": base64.b64encode(b"Al's CV").decode(),
                    },
                )
            )["file"]
            answer = {"name": "Al", "cv": ref}
            found["answered"] = structured(
                await act(client, "respond_interaction", request_id=request_id, answer=answer)
            )["interaction"]
            found["details"] = structured(
                await act(client, "get_interaction", request_id=request_id)
            )

    anyio.run(scenario)
    assert found["asked"]["status"] == "pending"
    assert found["refused"]["code"] == 422
    assert found["refused"]["errors"] == [{"path": "name", "message": "required"}]
    answered = found["answered"]
    assert answered["answer"]["cv"]["name"] == "cv.txt"
    assert (answered["answer"]["name"], answered["answered_via"]) == ("Al", "mcp-app")
    assert found["claimed"]["policy"]["claimed_by"] == api.user
    steps = [(s["action"], s["via"]) for s in found["details"]["audit"]]
    assert ("claimed", "mcp-app") in steps and ("answered", "mcp-app") in steps
    assert found["details"] == api.ok("get_interaction", request_id=answered["id"])


FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2},
        "cv": {"x-pawflow-kind": "file", "title": "CV", "mediaTypes": ["text/plain"]},
    },
    "required": ["name"],
}


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
def test_a_2026_host_with_the_app_gets_the_request_not_an_input_round(
    live: LiveServer, user_api: UserApi
) -> None:
    _, token = user_api("quin")

    async def scenario() -> tuple[Any, dict[str, Any]]:
        async with app_host(
            live, token, mode="2026-07-28", elicitation_callback=refused_elicitation
        ) as client:
            discovered = await client.session.send_discover("2026-07-28")
            asked = await client.call_tool("request_confirmation", {"message": "Deploy 1.4?"})
            return discovered, structured(asked)

    discovered, result = anyio.run(scenario)
    assert EXTENSION_ID in discovered["capabilities"]["extensions"]
    assert result["interaction"]["status"] == "pending"

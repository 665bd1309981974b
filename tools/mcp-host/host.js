// An MCP Apps host, as small as the browser test needs: it connects to PawFlow's /mcp with the
// MCP TypeScript client (declaring the io.modelcontextprotocol/ui extension), calls a tool as a
// model would, reads the tool's ui:// resource, renders it in a sandboxed iframe under the
// policy the extension prescribes, and bridges the two with the extension's own AppBridge.
// Bundled for Chromium by the test (esbuild); the test drives it through window.pawflowHost.

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  AppBridge,
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const HOST = { name: "pawflow-test-host", version: "1.0.0" };
const EXTENSION = "io.modelcontextprotocol/ui";

/** @type {Client} */
let client;
/** @type {any[]} */
let tools = [];
const frames = new Map();

/**
 * The policy the extension prescribes for a resource's declared domains (none: the
 * restrictive default).
 * @param {any} csp
 */
function policy(csp = {}) {
  const list = (/** @type {string[] | undefined} */ domains, fallback = "") =>
    domains && domains.length ? domains.join(" ") : fallback;
  const resources = list(csp.resourceDomains);
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`,
    `style-src 'self' 'unsafe-inline' ${resources}`,
    `connect-src 'self' ${list(csp.connectDomains)}`,
    `img-src 'self' data: ${resources}`,
    `font-src 'self' ${resources}`,
    `media-src 'self' data: ${resources}`,
    `frame-src ${list(csp.frameDomains, "'none'")}`,
    "object-src 'none'",
    `base-uri ${list(csp.baseUriDomains, "'self'")}`,
  ].join("; ");
}

/** The resource's HTML with the host's policy placed first in its head. */
function withPolicy(html, csp) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy(csp)}">`;
  return html.replace(/<head>/i, `<head>${meta}`);
}

/** Connect to /mcp as the host; the tools a model would be shown. */
async function connect(token) {
  client = new Client(HOST, {
    capabilities: { extensions: { [EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } },
  });
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", location.href), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  tools = (await client.listTools()).tools;
  return tools.filter((tool) => !isToolVisibilityAppOnly(tool)).map((tool) => tool.name);
}

/**
 * Call ``name`` as the model would and, when it has a UI, render it with the call's input and
 * result. ``context``: the host context (theme, styles). Returns the frame's id and the result.
 */
async function ask(name, args, context = {}) {
  const tool = tools.find((found) => found.name === name);
  const uri = getToolUiResourceUri(tool);
  const result = await client.callTool({ name, arguments: args });
  if (!uri) return { id: null, result };
  const id = await render({ uri, args, result, context });
  return { id, result };
}

/**
 * Render frame ``id``'s tool call again in a new frame, as a host does when it shows a past
 * conversation (its tool result as it was then); the new frame's id. ``holdReads``: this frame's
 * ``get_interaction`` calls are never passed on (a host slow to relay them).
 */
async function reopen(id, { holdReads = false } = {}) {
  return render({ ...frames.get(id).call, holdReads });
}

async function render(call) {
  const { uri, args, result, context, holdReads } = call;
  const read = await client.readResource({ uri });
  const [content] = read.contents;
  if (content.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`not an app: ${content.mimeType}`);
  const id = `app-${frames.size + 1}`;
  const iframe = document.createElement("iframe");
  iframe.id = id;
  iframe.title = `App ${id}`;
  // The strictest sandbox: scripts only (no same origin, no forms, no popups).
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.style.cssText = "display:block;width:640px;height:120px;border:1px solid #888";
  // Each frame in a slot of its own height: a frame that grows or shrinks moves no other.
  const slot = document.createElement("div");
  slot.style.cssText = "height:1400px;overflow:hidden;margin:8px";
  slot.append(iframe);
  document.getElementById("frames").append(slot);

  const seen = { calls: [], contexts: [], links: [], sizes: [] };
  const bridge = new AppBridge(
    null,
    HOST,
    {
      openLinks: {},
      serverTools: {},
      logging: {},
      updateModelContext: { text: {}, structuredContent: {} },
    },
    { hostContext: { displayMode: "inline", platform: "web", ...context } },
  );
  bridge.oncalltool = async (params) => {
    const called = tools.find((found) => found.name === params.name);
    const visibility = called?._meta?.ui?.visibility || ["model", "app"];
    seen.calls.push(params.name);
    // The extension: an app may call only its server's tools that are visible to apps.
    if (!called || !visibility.includes("app")) throw new Error(`${params.name} is not for apps`);
    if (holdReads && params.name === "get_interaction") return new Promise(() => {});
    return client.callTool(params);
  };
  bridge.onopenlink = async ({ url }) => {
    seen.links.push(url);
    return {};
  };
  bridge.onupdatemodelcontext = async (params) => {
    seen.contexts.push(params);
    return {};
  };
  bridge.onsizechange = ({ height }) => {
    if (height != null) {
      seen.sizes.push(height);
      iframe.style.height = `${height}px`;
    }
  };
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  frames.set(id, { iframe, bridge, seen, call });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = withPolicy(content.text, content._meta?.ui?.csp);
  await initialized;
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result);
  return id;
}

/** What the app of frame ``id`` asked of the host so far. */
function seen(id) {
  return frames.get(id).seen;
}

/** Tear the app of frame ``id`` down, as a host does when its conversation closes. */
async function close(id) {
  const { iframe, bridge } = frames.get(id);
  await bridge.teardownResource({});
  await bridge.close();
  iframe.parentElement.remove();
}

window.pawflowHost = { connect, ask, reopen, seen, close };

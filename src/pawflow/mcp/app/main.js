// @ts-check
// PawFlow's MCP App: the question an asking tool published, drawn inside the agent's host as
// the web chat draws it (the same blocks, fields and surfaces, from the same record), and
// answered from there through the app-only tool ``app_action``.
//
// The record comes with the tool's result (``ui/notifications/tool-result``). While it is
// pending the page reads it again now and then (``get_interaction``), so an answer given
// anywhere else (the web chat, ``pawflow answer``, a link) shows here, with who gave it and
// how. Once it is no longer pending the page tells the model (``ui/update-model-context``,
// where the host takes it). Closing the page changes nothing: the request stays pending, to be
// answered anywhere.

import { refreshBlocks, renderBlock } from "../../server/static/js/blocks.js";
import { byId, clear, h, serverIsBack } from "../../server/static/js/dom.js";
import { me, onRecord, upsert } from "../../server/static/js/state.js";
import { callTool, connect, HostError, onNotification, onRequest, reportSize, request } from "./host.js";

/**
 * @import { Interaction } from "../../server/static/js/contract.js"
 * @import { HostContext, ToolResult } from "./host.js"
 */

const APP = { name: "PawFlow", version: "1" };
/** How long after showing a pending request it is read again (ms); then 1.5 times longer
 * after each read, up to POLL_MAX. */
const POLL_FIRST = 2_000;
const POLL_MAX = 10_000;

const root = byId("app");
/** The host's capabilities, once the handshake is done. */
let capabilities = /** @type {Record<string, unknown>} */ ({});
/** Where the request can be answered in the web chat (from the tool's result). */
let answerUrl = "";
/** Set when the host tears the page down: nothing more is asked of it. */
let stopped = false;
/** @type {Set<string>} requests whose outcome the model was told already */
const told = new Set();

/**
 * Apply what the host says about its look: its theme, and its style variables (the page's
 * own colours and fonts are defined from them, with the web chat's as fallbacks).
 * @param {HostContext} context
 */
function applyContext(context) {
  const html = document.documentElement;
  if (context.theme === "light" || context.theme === "dark") {
    html.dataset.theme = context.theme;
    html.style.colorScheme = context.theme;
  }
  const variables = context.styles?.variables || {};
  for (const [name, value] of Object.entries(variables)) {
    if (name.startsWith("--") && typeof value === "string") html.style.setProperty(name, value);
  }
}

/** @param {string} text */
function notice(text) {
  clear(root).append(h("p", { class: "notice", role: "status" }, text));
}

/**
 * Tell the model how a request ended, in the words the tools use, where the host takes it.
 * @param {Interaction} record
 */
function tellModel(record) {
  if (told.has(record.id) || !("updateModelContext" in capabilities)) return;
  told.add(record.id);
  const by = record.answered_by ? ` by ${record.answered_by}` : "";
  const via = record.answered_via ? ` (${record.answered_via})` : "";
  const text =
    record.status === "answered"
      ? `PawFlow request ${record.id} was answered${by}${via}: ${JSON.stringify(record.answer)}`
      : `PawFlow request ${record.id} is ${record.status}: it will get no answer`;
  request("ui/update-model-context", {
    content: [{ type: "text", text }],
    structuredContent: { interaction: record },
  }).catch(() => {});
}

/** @param {number} ms */
function rest(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Read the request (``get_interaction``) until it leaves pending, here or anywhere, or the host
 * tears the page down: soon after it is shown, then less often while nothing changes. A read
 * returns at once, so the host holds no connection open for a page that waits.
 * @param {string} requestId
 */
async function watch(requestId) {
  let interval = POLL_FIRST;
  while (!stopped) {
    await rest(interval);
    interval = Math.min(POLL_MAX, interval * 1.5);
    if (stopped) return;
    if (document.visibilityState === "hidden") continue;
    try {
      const result = await callTool("get_interaction", { request_id: requestId }, POLL_MAX);
      const record = result.structuredContent?.interaction;
      if (result.isError || !record) continue;
      serverIsBack();
      if (upsert(record).status !== "pending") return;
    } catch (error) {
      if (error instanceof HostError && error.code === -32601) return; // the host proxies no tools
    }
  }
}

/**
 * Draw the request the tool's result carries.
 * @param {ToolResult} result
 */
function show(result) {
  const body = result.structuredContent;
  const record = body && typeof body === "object" ? body.interaction : null;
  if (result.isError || !record) {
    const text = (result.content || []).map((part) => part.text || "").join("\n");
    notice(text || "The question could not be asked.");
    return;
  }
  me.user = record.owner;
  answerUrl = typeof body.answer_url === "string" ? body.answer_url : "";
  const shown = upsert(record);
  const web = answerUrl
    ? h("p", { class: "app-links" }, h("a", { href: answerUrl }, "Open in the web chat"))
    : null;
  clear(root).append(renderBlock(shown, { where: "mcp-app" }), web || "");
  if (shown.status === "pending") watch(shown.id);
  else tellModel(shown);
}

/**
 * The blocks' forms submit within the page, whatever the host's sandbox allows: a host may
 * leave out ``allow-forms``, which drops a form's submission before its submit event fires. A
 * submit button, Enter in a field and ``requestSubmit`` fire that event here instead (the
 * blocks handle it in the page; a form of theirs never sends anything anywhere).
 */
function submitFormsInPage() {
  /** @param {HTMLElement | null} [submitter] */
  HTMLFormElement.prototype.requestSubmit = function requestSubmit(submitter) {
    this.dispatchEvent(new SubmitEvent("submit", { bubbles: true, cancelable: true, submitter: submitter || null }));
  };
  document.addEventListener(
    "click",
    (event) => {
      const button = event.target instanceof Element ? event.target.closest("button") : null;
      if (!button || button.type !== "submit" || !button.form || button.disabled) return;
      event.preventDefault();
      button.form.requestSubmit(button);
    },
    true,
  );
  const typed = new Set(["text", "email", "url", "number", "date", "datetime-local", "search", "tel", "password"]);
  document.addEventListener(
    "keydown",
    (event) => {
      const input = event.target;
      if (event.key !== "Enter" || event.isComposing || !(input instanceof HTMLInputElement)) return;
      if (!input.form || !typed.has(input.type)) return;
      event.preventDefault();
      input.form.requestSubmit();
    },
    true,
  );
}

// A link leaves the page through the host (``ui/open-link``): a sandboxed page cannot open one
// itself. A file answer's link is the server's download address.
document.addEventListener(
  "click",
  (event) => {
    const link = event.target instanceof Element ? event.target.closest("a[href]") : null;
    if (!link) return;
    event.preventDefault();
    const href = link.getAttribute("href") || "";
    if (!answerUrl || !("openLinks" in capabilities)) return;
    request("ui/open-link", { url: new URL(href, answerUrl).href }).catch(() => {});
  },
  true,
);

onRecord((record, old) => {
  refreshBlocks(record, old);
  if (record.status !== "pending") tellModel(record);
});
onNotification("ui/notifications/tool-input", (params) => {
  const message = params.arguments?.message;
  if (!root.querySelector("article.block") && typeof message === "string") notice(`Asking: ${message}`);
});
onNotification("ui/notifications/tool-result", (params) => show(params));
onNotification("ui/notifications/tool-cancelled", () => {
  if (!root.querySelector("article.block")) notice("The question was not asked: the tool call was cancelled.");
});
onNotification("ui/notifications/host-context-changed", (params) => applyContext(params));
onRequest("ui/resource-teardown", () => {
  stopped = true;
  return {};
});

submitFormsInPage();
connect(APP)
  .then((found) => {
    capabilities = found.hostCapabilities || {};
    applyContext(found.hostContext || {});
    reportSize();
  })
  .catch(() => notice("This page shows a PawFlow question inside an agent's host; no host answered it."));

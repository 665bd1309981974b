// @ts-check
// The view's side of the MCP Apps extension (io.modelcontextprotocol/ui, SEP-1865): JSON-RPC
// 2.0 over postMessage with the host that renders this page in its sandboxed iframe.
//
// The page has no network of its own (its content-security policy allows none): everything
// it learns or does goes through the host. It opens with ``ui/initialize`` (the host answers
// with its capabilities and context: theme, styles) and ``ui/notifications/initialized``;
// the host then sends the tool call's input and result as notifications, and proxies the
// ``tools/call`` requests this page sends to the PawFlow server that served it. Only
// messages from the parent window are read.

export const PROTOCOL_VERSION = "2026-01-26";

/**
 * A JSON-RPC message, as it crosses postMessage.
 * @typedef {object} Message
 * @property {"2.0"} jsonrpc
 * @property {number | string} [id]
 * @property {string} [method]
 * @property {any} [params]
 * @property {any} [result]
 * @property {{code: number, message: string, data?: unknown}} [error]
 */

/**
 * The result of ``tools/call``: what the PawFlow tool answered.
 * @typedef {object} ToolResult
 * @property {{type: string, text?: string}[]} [content]
 * @property {any} [structuredContent]
 * @property {boolean} [isError]
 */

/**
 * What the host says about itself in its answer to ``ui/initialize``.
 * @typedef {object} Initialized
 * @property {string} protocolVersion
 * @property {{name: string, version: string}} hostInfo
 * @property {Record<string, unknown>} hostCapabilities
 * @property {HostContext} hostContext
 */

/**
 * The host's context (all optional): its theme, its style variables, its locale…
 * @typedef {object} HostContext
 * @property {"light" | "dark"} [theme]
 * @property {{variables?: Record<string, string | undefined>}} [styles]
 */

/** A request the host refused or failed: its JSON-RPC error. */
export class HostError extends Error {
  /**
   * @param {number} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** @type {Map<number, {resolve: (result: any) => void, reject: (error: Error) => void}>} */
const waiting = new Map();
/** @type {Map<string, (params: any) => void>} */
const notificationHandlers = new Map();
/** @type {Map<string, (params: any) => unknown>} */
const requestHandlers = new Map();
let nextId = 1;

/** @param {Message} message */
function post(message) {
  // The host's origin is not known to a sandboxed page (nor is its own): the message goes to
  // the parent window, which is the only one read from.
  window.parent.postMessage(message, "*");
}

/**
 * Answer a request of the host: its handler's result, or "method not found".
 * @param {Message} message
 */
async function answer(message) {
  const id = /** @type {number | string} */ (message.id);
  const handler = requestHandlers.get(String(message.method));
  if (!handler) {
    post({ jsonrpc: "2.0", id, error: { code: -32601, message: `unknown method ${message.method}` } });
    return;
  }
  try {
    post({ jsonrpc: "2.0", id, result: (await handler(message.params)) || {} });
  } catch (error) {
    post({ jsonrpc: "2.0", id, error: { code: -32603, message: String(error) } });
  }
}

window.addEventListener("message", (event) => {
  if (event.source !== window.parent) return;
  const message = /** @type {Message} */ (event.data);
  if (!message || typeof message !== "object" || message.jsonrpc !== "2.0") return;
  if (message.method === undefined) {
    const found = waiting.get(Number(message.id));
    if (!found) return;
    waiting.delete(Number(message.id));
    if (message.error) found.reject(new HostError(message.error.code, message.error.message));
    else found.resolve(message.result);
  } else if (message.id !== undefined) {
    answer(message);
  } else {
    notificationHandlers.get(message.method)?.(message.params || {});
  }
});

/**
 * Send a request to the host; its result, or a HostError. ``timeout`` (ms) gives up waiting.
 * @param {string} method
 * @param {Record<string, unknown>} params
 * @param {number} [timeout]
 * @returns {Promise<any>}
 */
export function request(method, params, timeout = 0) {
  const id = nextId;
  nextId += 1;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    if (timeout > 0) {
      setTimeout(() => {
        if (waiting.delete(id)) reject(new HostError(0, `the host did not answer ${method}`));
      }, timeout);
    }
    post({ jsonrpc: "2.0", id, method, params });
  });
}

/**
 * @param {string} method
 * @param {Record<string, unknown>} params
 */
export function notify(method, params) {
  post({ jsonrpc: "2.0", method, params });
}

/**
 * Call ``handler`` with the params of each ``method`` notification from the host.
 * @param {string} method
 * @param {(params: any) => void} handler
 */
export function onNotification(method, handler) {
  notificationHandlers.set(method, handler);
}

/**
 * Answer the host's ``method`` requests with ``handler``'s result.
 * @param {string} method
 * @param {(params: any) => unknown} handler
 */
export function onRequest(method, handler) {
  requestHandlers.set(method, handler);
}

/**
 * The handshake: ``ui/initialize``, then ``ui/notifications/initialized``. Register the
 * notification handlers first: the host sends the tool's input as soon as it is done.
 * @param {{name: string, version: string}} appInfo
 * @returns {Promise<Initialized>}
 */
export async function connect(appInfo) {
  onRequest("ping", () => ({}));
  const found = await request("ui/initialize", {
    appInfo,
    appCapabilities: {},
    protocolVersion: PROTOCOL_VERSION,
  });
  notify("ui/notifications/initialized", {});
  return found;
}

/**
 * Call a tool of the PawFlow server through the host.
 * @param {string} name
 * @param {Record<string, unknown>} args
 * @param {number} [timeout]
 * @returns {Promise<ToolResult>}
 */
export function callTool(name, args, timeout = 0) {
  return request("tools/call", { name, arguments: args }, timeout);
}

/** Tell the host the page's height whenever it changes, so the frame fits what it shows (its
 * width is the host's to choose). A browser may hold back the layout work of a frame it does
 * not show (a host's frame scrolled out of view), and with it the resize observer: what the
 * page draws is measured when it is drawn as well, so the frame is the right height before
 * anyone scrolls to it (and its content does not jump under a pointer as it comes into view). */
export function reportSize() {
  let last = -1;
  const send = () => {
    const height = Math.ceil(document.body.getBoundingClientRect().height);
    if (height === last) return;
    last = height;
    notify("ui/notifications/size-changed", { height });
  };
  new ResizeObserver(send).observe(document.body);
  new MutationObserver(send).observe(document.body, {
    subtree: true,
    childList: true,
    characterData: true,
    attributes: true,
  });
  send();
}

// @ts-check
// The server's HTTP API as the page uses it: the session, the actions, uploads.
//
// The browser is signed in by a cookie session; every state change carries the session's
// CSRF token in X-CSRF-Token (and the browser adds a same-origin Origin header itself).
// Errors come back as ApiError with the server's message, field errors (422) and, for a
// request that left pending, its status (409).

/**
 * @import { Actions, FileEnvelope, FileRef, Interaction, InteractionPage } from "./contract.js"
 * @import { ListInteractions, MessageOut, SessionOut } from "./contract.js"
 */

const CSRF_HEADER = "X-CSRF-Token";
const RETRIES = 3;

let csrfToken = "";
/** @type {Set<() => void>} */
const signedOutListeners = new Set();

/**
 * One refusal of the server: where (``path``, "" for the whole answer) and why.
 * @typedef {{path: string, message: string}} FieldProblem
 */

export class ApiError extends Error {
  /**
   * @param {number} status the HTTP status; 0 when the server could not be reached
   * @param {unknown} body what the server answered (JSON), or null
   */
  constructor(status, body) {
    const found = body !== null && typeof body === "object" ? /** @type {Record<string, unknown>} */ (body) : {};
    const message =
      (typeof found.error === "string" && found.error) ||
      (status === 0 ? "The server cannot be reached." : `The server answered ${status}.`);
    super(message);
    this.status = status;
    this.body = body;
    /** @type {FieldProblem[]} */
    this.errors = Array.isArray(found.errors) ? found.errors : [];
    /** @type {string | null} */
    this.currentStatus = typeof found.status === "string" ? found.status : null;
    /** Whether the page has shown it already (beside the field it is about). */
    this.shown = false;
  }
}

/**
 * What went wrong, in words (for an ApiError, the server's).
 * @param {unknown} error
 */
export function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Called when the session is gone (expired, signed out elsewhere).
 * @param {() => void} listener
 */
export function onSignedOut(listener) {
  signedOutListeners.add(listener);
}

/** @param {number} ms */
function wait(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The server's JSON answer to one request (null when it has none), or an ApiError.
 * @param {string} url
 * @param {RequestInit} init
 * @returns {Promise<unknown>}
 */
async function send(url, init, attempt = 0) {
  let response;
  try {
    response = await fetch(url, { credentials: "same-origin", ...init });
  } catch {
    throw new ApiError(0, null);
  }
  // Busy or over the rate: nothing happened, so waiting and sending again is safe.
  if ((response.status === 429 || response.status === 503) && attempt < RETRIES) {
    const after = Number(response.headers.get("Retry-After")) || 1;
    await wait(Math.min(after, 5) * 1000);
    return send(url, init, attempt + 1);
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    if (response.status === 401) for (const listener of signedOutListeners) listener();
    throw new ApiError(response.status, body);
  }
  return body;
}

/**
 * The signed-in user ({user, via, csrf_token}), or null when nobody is signed in.
 * @returns {Promise<SessionOut | null>}
 */
export async function session() {
  try {
    const found = /** @type {SessionOut} */ (await send("/api/session", { method: "GET" }));
    csrfToken = found.csrf_token || "";
    return found;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}

/**
 * Run the action ``name`` with ``body``; its result, as contract.js declares both.
 * @template {keyof Actions} N
 * @param {N} name
 * @param {Actions[N]["body"]} body
 * @returns {Promise<Actions[N]["result"]>}
 */
export async function action(name, body) {
  const found = await send(`/api/actions/${encodeURIComponent(name)}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", [CSRF_HEADER]: csrfToken },
    body: JSON.stringify(body),
  });
  return /** @type {Actions[N]["result"]} */ (found);
}

/**
 * Every request ``list_interactions`` finds with ``body``, following next_cursor.
 * @param {ListInteractions} body
 */
export async function listInteractions(body) {
  /** @type {Interaction[]} */
  const items = [];
  /** @type {string | null} */
  let cursor = null;
  for (let page = 0; page < 100; page += 1) {
    /** @type {InteractionPage} */
    const found = await action("list_interactions", cursor ? { ...body, cursor } : body);
    items.push(...found.interactions);
    cursor = found.next_cursor;
    if (!cursor) break;
  }
  return items;
}

/**
 * A conversation's whole history, a page at a time.
 * @param {string} conversationId
 */
export async function history(conversationId, afterSeq = 0) {
  /** @type {MessageOut[]} */
  const messages = [];
  let after = afterSeq;
  for (let page = 0; page < 100; page += 1) {
    const found = await action("get_history", {
      conversation_id: conversationId,
      after_seq: after,
      limit: 500,
    });
    messages.push(...found.messages);
    if (found.messages.length < 500) break;
    after = found.messages[found.messages.length - 1].seq;
  }
  return messages;
}

/**
 * Upload a file for a request (and form field); the server's file reference.
 * @param {File} file
 * @param {string} requestId
 * @param {string | null} field
 * @returns {Promise<FileRef>}
 */
export async function upload(file, requestId, field) {
  const form = new FormData();
  form.append("file", file, file.name);
  form.append("request_id", requestId);
  if (field) form.append("field", field);
  const found = /** @type {FileEnvelope} */ (
    await send("/api/files", {
      method: "POST",
      headers: { [CSRF_HEADER]: csrfToken },
      body: form,
    })
  );
  return found.file;
}

export async function signOut() {
  await send("/signout", { method: "POST", headers: { [CSRF_HEADER]: csrfToken } });
}

/**
 * Read an admin route (/api/admin/…): its JSON body.
 * @param {string} path
 * @returns {Promise<any>}
 */
export async function adminGet(path) {
  return send(`/api/admin/${path}`, { method: "GET" });
}

/**
 * Change something as an admin (/api/admin/…); every change is audited by the server.
 * @param {string} path
 * @param {Record<string, unknown>} body
 * @returns {Promise<any>}
 */
export async function adminPost(path, body) {
  return send(`/api/admin/${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", [CSRF_HEADER]: csrfToken },
    body: JSON.stringify(body),
  });
}

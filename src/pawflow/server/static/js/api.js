// The server's HTTP API as the page uses it: the session, the actions, uploads.
//
// The browser is signed in by a cookie session; every state change carries the session's
// CSRF token in X-CSRF-Token (and the browser adds a same-origin Origin header itself).
// Errors come back as ApiError with the server's message, field errors (422) and, for a
// request that left pending, its status (409).

const CSRF_HEADER = "X-CSRF-Token";
const RETRIES = 3;

let csrfToken = "";
const signedOutListeners = new Set();

export class ApiError extends Error {
  constructor(status, body) {
    const message =
      (body && typeof body.error === "string" && body.error) ||
      (status === 0 ? "The server cannot be reached." : `The server answered ${status}.`);
    super(message);
    this.status = status;
    this.body = body;
    this.errors = Array.isArray(body && body.errors) ? body.errors : [];
    this.currentStatus = body && typeof body.status === "string" ? body.status : null;
  }
}

/** Called when the session is gone (expired, signed out elsewhere). */
export function onSignedOut(listener) {
  signedOutListeners.add(listener);
}

function wait(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

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

/** The signed-in user ({user, via, csrf_token}), or null when nobody is signed in. */
export async function session() {
  try {
    const found = await send("/api/session", { method: "GET" });
    csrfToken = found.csrf_token || "";
    return found;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}

export function action(name, body = {}) {
  return send(`/api/actions/${encodeURIComponent(name)}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", [CSRF_HEADER]: csrfToken },
    body: JSON.stringify(body),
  });
}

/** Every item of a paged listing, following next_cursor. */
export async function listAll(name, body, key) {
  const items = [];
  let cursor = null;
  for (let page = 0; page < 100; page += 1) {
    const found = await action(name, cursor ? { ...body, cursor } : body);
    items.push(...found[key]);
    cursor = found.next_cursor;
    if (!cursor) break;
  }
  return items;
}

/** A conversation's whole history, a page at a time. */
export async function history(conversationId, afterSeq = 0) {
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

/** Upload a file for a request (and form field); the server's file reference. */
export async function upload(file, requestId, field) {
  const form = new FormData();
  form.append("file", file, file.name);
  form.append("request_id", requestId);
  if (field) form.append("field", field);
  const found = await send("/api/files", {
    method: "POST",
    headers: { [CSRF_HEADER]: csrfToken },
    body: form,
  });
  return found.file;
}

export async function signOut() {
  await send("/signout", { method: "POST", headers: { [CSRF_HEADER]: csrfToken } });
}

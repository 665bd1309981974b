// @ts-check
// The web chat's api.js as the MCP App has it. The app has no network of its own: an action
// is a ``tools/call`` of PawFlow's app-only tool ``app_action`` through the host, and an upload
// one of ``app_upload`` (the file's bytes in base64). Both answer with the action API's own
// JSON: a result as the web chat gets it, a refusal as its error body with the HTTP status
// (``code``), so the blocks show the same errors beside the same fields.
//
// The page is assembled with this module in place of the web chat's api.js: blocks.js and
// trail.js import ``action``, ``ApiError`` and ``upload`` from "./api.js" and get these.

import { callTool, HostError } from "./host.js";

/**
 * @import { Actions, FileEnvelope, FileRef } from "../../server/static/js/contract.js"
 */

export const ACTION_TOOL = "app_action";
export const UPLOAD_TOOL = "app_upload";
/** How long an action may take through the host before the page says it got no answer. */
const ACTION_TIMEOUT = 60_000;

/**
 * One refusal of the server: where (``path``, "" for the whole answer) and why.
 * @typedef {{path: string, message: string}} FieldProblem
 */

/** The same error the web chat's api.js raises, from the same body. */
export class ApiError extends Error {
  /**
   * @param {number} status the HTTP status the action API gives; 0 when the host did not answer
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
 * The structured result of an app tool, or its refusal as an ApiError.
 * @param {string} tool
 * @param {Record<string, unknown>} args
 * @returns {Promise<unknown>}
 */
async function run(tool, args) {
  let result;
  try {
    result = await callTool(tool, args, ACTION_TIMEOUT);
  } catch (error) {
    if (error instanceof HostError && error.code !== 0) throw new ApiError(502, { error: error.message });
    throw new ApiError(0, null);
  }
  const found = result && typeof result === "object" ? result.structuredContent : null;
  if (result && result.isError) {
    const code = found && typeof found.code === "number" ? found.code : 500;
    const text = (result.content || []).map((part) => part.text || "").join("\n");
    throw new ApiError(code, found || { error: text || "The server refused the action." });
  }
  return found;
}

/**
 * Run the action ``name`` with ``body``; its result, as contract.js declares both.
 * @template {keyof Actions} N
 * @param {N} name
 * @param {Actions[N]["body"]} body
 * @returns {Promise<Actions[N]["result"]>}
 */
export async function action(name, body) {
  return /** @type {Actions[N]["result"]} */ (await run(ACTION_TOOL, { action: name, body }));
}

/**
 * The bytes of ``file`` in base64.
 * @param {File} file
 */
async function base64(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let text = "";
  for (let at = 0; at < bytes.length; at += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  }
  return btoa(text);
}

/**
 * Upload a file for a request (and form field); the server's file reference.
 * @param {File} file
 * @param {string} requestId
 * @param {string | null} field
 * @returns {Promise<FileRef>}
 */
export async function upload(file, requestId, field) {
  const found = /** @type {FileEnvelope} */ (
    await run(UPLOAD_TOOL, {
      request_id: requestId,
      field,
      name: file.name,
      media_type: file.type || null,
      content: await base64(file),
    })
  );
  return found.file;
}

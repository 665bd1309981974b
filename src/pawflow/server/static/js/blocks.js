// @ts-check
// Interaction blocks: one request drawn from its record, answerable in place while pending.
//
// A block is always rendered from the record the server sent (never from what was clicked):
// after an answer it is redrawn from the record respond_interaction returns, in every place
// it is shown, and in other tabs from the interaction_answered event. A refused answer (422)
// shows the server's field errors beside the fields and leaves the block open.

import { action, ApiError, upload } from "./api.js";
import { CHANNELS, KINDS, oneOf } from "./contract.js";
import { all, announce, append, clear, disable, h, uid, untilServerIsBack } from "./dom.js";
import { answerText, expiryText, fromNow, kindName, optionsOf, schemaOf, when } from "./format.js";
import { field, kindOfProperty } from "./fields.js";
import { me, mine, upsert, waitsForOthers } from "./state.js";
import { APPROVAL_TAG, decisionText, isToolApproval, renderSurface, unsupported } from "./surfaces.js";
import { trailControl } from "./trail.js";

/**
 * @import { Channel, ClientChannel, FileRef, Interaction, Requester, ScalarKind, Status } from "./contract.js"
 * @import { Field } from "./fields.js"
 * @import { Schema } from "./format.js"
 */

/**
 * How this page answers, as the record's answered_via then says.
 * @type {ClientChannel}
 */
const ANSWERED_VIA = "button";

/** @type {Record<Status, string>} */
const STATUS_TEXT = {
  pending: "Waiting for you",
  answered: "Answered",
  cancelled: "Cancelled",
  expired: "Expired",
};

// Blocks answered from the keyboard (request id → where): their redrawn block takes the
// focus, which the disabled controls lost to the page while the answer was on its way.
/** @type {Map<string, string | undefined>} */
const focusAfter = new Map();

/**
 * A kind of the contract this page has no controls for: TypeScript (``make lint``) stops at
 * the call until the page handles every kind.
 * @param {never} kind
 * @returns {never}
 */
function noControlsFor(kind) {
  throw new Error(`no controls for a “${kind}” request`);
}

/**
 * Redraw every block of ``record`` on the page, unless nothing a person sees changed.
 * @param {Interaction} record
 * @param {Interaction | null} old
 */
export function refreshBlocks(record, old) {
  if (old && old.status === "pending" && record.status === "pending") return;
  redrawBlocks(record);
}

/**
 * Draw ``record``'s blocks again, wherever shown (who it waits for changed).
 * @param {Interaction} record
 */
export function redrawBlocks(record) {
  const selector = `[data-request-id="${CSS.escape(record.id)}"]`;
  const where = focusAfter.get(record.id);
  focusAfter.delete(record.id);
  for (const element of all(document, selector, HTMLElement)) {
    const hadFocus = element.contains(document.activeElement);
    const fresh = renderBlock(record, { where: element.dataset.where });
    element.replaceWith(fresh);
    const lost = document.activeElement === document.body || document.activeElement === null;
    // Never take the focus from another document (an MCP App's frame beside other frames):
    // whoever types there keeps every key.
    if (document.hasFocus() && (hadFocus || (lost && where === element.dataset.where))) {
      fresh.focus();
    }
  }
}

/** @param {string} user */
function person(user) {
  return user === me.user ? "you" : user;
}

// Where an answer came from (the record's answered_via), as the block says it.
/** @type {Record<Channel, string>} */
const VIA = {
  chat: "in the chat",
  button: "in its block",
  cli: "with pawflow answer",
  mcp: "over MCP",
  "mcp-app": "in an MCP app",
  agui: "over AG-UI",
  a2a: "over A2A",
  link: "with an answer link",
  email: "by email",
  slack: "in Slack",
  api: "through the API",
};

/** @param {string | null} via */
function viaText(via) {
  if (!via) return "";
  return ` ${oneOf(CHANNELS, via) ? VIA[via] : `via ${via}`}`;
}

/** @param {Requester} requester */
function requesterText(requester) {
  if (!requester) return "";
  const { type, name } = requester;
  return type === "api" ? name : `${name} (${type})`;
}

/**
 * The block of ``record``, drawn for ``where`` it is shown ("conversation", "inbox").
 * @param {Interaction} record
 * @param {{where?: string}} [options]
 */
export function renderBlock(record, { where = "conversation" } = {}) {
  return new Block(record, where).element;
}

class Block {
  /**
   * @param {Interaction} record
   * @param {string} where
   */
  constructor(record, where) {
    this.record = record;
    /** @type {Field[]} */
    this.fields = [];
    this.busy = false;
    const titleId = uid("block-title");
    // Without a title the message is the heading, and what the inputs are described by.
    const messageId = record.title ? uid("block-message") : titleId;
    this.messageId = messageId;
    const pending = record.status === "pending";
    this.error = h("div", { class: "block-error", role: "alert", hidden: true });
    // Asks "are you sure?" before an empty answer or a cancellation: neither can be undone.
    this.confirmBox = h("div", { class: "block-confirm", role: "group", hidden: true });
    this.element = h(
      "article",
      {
        class: `block block--${record.status}`,
        tabindex: "-1",
        "aria-labelledby": titleId,
        dataset: { requestId: record.id, kind: record.kind, status: record.status, where },
      },
      h(
        "header",
        { class: "block-head" },
        h("span", { class: "kind-tag" }, isToolApproval(record.ui_surface) ? APPROVAL_TAG : kindName(record.kind)),
        h("span", { class: `status-tag status-tag--${record.status}` }, STATUS_TEXT[record.status]),
      ),
      h("h3", { class: "block-title", id: titleId }, record.title || record.message),
      record.title ? h("p", { class: "block-message", id: messageId }, record.message) : null,
    );
    this.body(pending);
    this.element.append(this.confirmBox, this.error, this.meta());
    if (!pending) this.element.append(this.outcome());
    this.element.append(trailControl(record.id));
  }

  /** @param {boolean} pending */
  body(pending) {
    const record = this.record;
    /** @param {unknown} value */
    const act = (value) =>
      Array.isArray(value) && value.length === 0
        ? this.confirmEmpty("Send with nothing chosen?", "Send with none chosen", () => value)
        : this.submit(() => value);
    let answeredBySurface = false;
    if (record.ui_surface) {
      const why = unsupported(record.ui_surface, record.kind);
      if (why === null) {
        const drawn = renderSurface(record, act, { disabled: !pending });
        this.element.append(drawn.element);
        answeredBySurface = drawn.answers;
        if (drawn.fields) this.fields.push(...drawn.fields);
      } else if (pending) {
        this.element.append(
          h(
            "p",
            { class: "notice" },
            `This request comes with a rich view that cannot be shown here (${why}). ` +
              `Answer it with the ${kindName(record.kind).toLowerCase()} controls below.`,
          ),
        );
      }
    }
    if (!pending || answeredBySurface) return;
    const others = waitsForOthers(record);
    if (others) {
      // Someone else decides: say whom, offer nothing that would be refused.
      this.element.append(h("p", { class: "notice notice--waiting" }, `Waiting for ${others.join(", ")}`));
      return;
    }
    if (!oneOf(KINDS, record.kind)) {
      this.element.append(
        h(
          "p",
          { class: "notice notice--handoff" },
          `This page cannot answer a “${record.kind}” request, so nothing has been answered. ` +
            "Open it in a client that supports it.",
        ),
      );
      return;
    }
    this.element.append(this.controls());
  }

  controls() {
    const record = this.record;
    const schema = schemaOf(record);
    const form = h("form", { class: "answer", novalidate: true });
    switch (record.kind) {
      case "confirm":
        form.append(
          h(
            "div",
            { class: "actions" },
            h("button", { type: "button", class: "primary", onclick: () => this.submit(() => true) }, "Yes"),
            h("button", { type: "button", onclick: () => this.submit(() => false) }, "No"),
          ),
        );
        break;
      case "choice": {
        const options = record.options || [];
        form.append(
          h(
            "div",
            { class: "actions actions--options", role: "group", "aria-label": "Options" },
            options.map((option) =>
              h("button", { type: "button", onclick: () => this.submit(() => option.value) }, option.label),
            ),
          ),
        );
        break;
      }
      case "multi": {
        const input = field("multi", schema, { label: "Choose any that apply", name: "choices" });
        this.fields.push(input);
        form.append(input.element, this.submitButton("Validate"));
        form.addEventListener("submit", (event) => {
          event.preventDefault();
          const value = input.read();
          if (Array.isArray(value) && value.length === 0) {
            this.confirmEmpty("Send with nothing chosen?", "Send with none chosen", () => value);
          } else this.submit(() => value);
        });
        break;
      }
      case "text":
      case "multiline":
      case "integer":
      case "decimal":
      case "date":
      case "datetime":
      case "file":
        this.singleInput(form, record.kind, schema);
        break;
      case "form":
        this.formFields(form, schema);
        break;
      default:
        noControlsFor(record.kind);
    }
    return form;
  }

  /**
   * The one input of a request of a scalar kind (other than confirm, choice and multi).
   * @param {HTMLFormElement} form
   * @param {ScalarKind} kind
   * @param {Schema} schema
   */
  singleInput(form, kind, schema) {
    const input = field(kind, schema, { describedBy: this.messageId });
    this.fields.push(input);
    form.append(
      h("div", { class: "single" }, input.element, this.submitButton(kind === "file" ? "Upload and send" : "Send")),
    );
    if (kind === "multiline") {
      input.element.querySelector("textarea")?.addEventListener("keydown", (event) => {
        if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
      });
    }
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const value = input.read();
      if ((kind === "text" || kind === "multiline") && typeof value === "string" && value.trim() === "") {
        this.confirmEmpty("Send an empty answer?", "Send it empty", () => value, input);
        return;
      }
      this.submit(async () =>
        kind === "file" ? this.uploaded(value instanceof File ? value : null, input, null) : value,
      );
    });
  }

  /**
   * The fields of a form request, one per property of its schema.
   * @param {HTMLFormElement} form
   * @param {Schema} schema
   */
  formFields(form, schema) {
    const properties = schema.properties || {};
    const required = new Set(schema.required || []);
    const grid = h("div", { class: "form-fields" });
    for (const [name, property] of Object.entries(properties)) {
      const kind = kindOfProperty(property);
      if (kind === null) continue;
      const input = field(kind, property, {
        name,
        label: property.title || name,
        required: required.has(name),
        inForm: true,
      });
      this.fields.push(input);
      grid.append(input.element);
    }
    append(form, [
      required.size ? h("p", { class: "hint" }, "Fields marked * are required.") : null,
      grid,
      this.submitButton("Submit"),
    ]);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit(async () => {
        /** @type {Record<string, unknown>} */
        const answer = {};
        for (const input of this.fields) {
          /** @type {unknown} */
          let value = input.read();
          if (input.kind === "file" && value instanceof File) {
            value = await this.uploaded(value, input, input.name);
          }
          if (value !== null) answer[input.name] = value;
        }
        return answer;
      });
    });
  }

  /**
   * Ask before ``produce``'s answer is sent: "Send it empty" sends, "Keep editing" goes back.
   * @param {string} question
   * @param {string} yes
   * @param {() => unknown} produce
   * @param {Field | null} [input]
   */
  confirmEmpty(question, yes, produce, input = null) {
    this.ask(question, yes, () => this.submit(produce), "Keep editing", () => {
      if (input) input.focus();
    });
  }

  /**
   * A question in the block with two buttons; the first takes the focus.
   * @param {string} question
   * @param {string} yes
   * @param {() => void} onYes
   * @param {string} no
   */
  ask(question, yes, onYes, no, onNo = () => {}) {
    const close = () => {
      this.confirmBox.hidden = true;
      clear(this.confirmBox);
    };
    const questionId = uid("confirm");
    clear(this.confirmBox).append(
      h("p", { id: questionId }, question),
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", class: "primary", onclick: () => { close(); onYes(); } }, yes),
        h("button", { type: "button", onclick: () => { close(); onNo(); } }, no),
      ),
    );
    this.confirmBox.setAttribute("aria-labelledby", questionId);
    this.confirmBox.hidden = false;
    this.confirmBox.querySelector("button")?.focus();
  }

  /** The owner may withdraw a request nobody should answer any more. */
  cancelControl() {
    return h(
      "button",
      {
        type: "button",
        class: "small quiet cancel-request",
        onclick: () =>
          this.ask("Cancel this request? Nobody will be able to answer it.", "Cancel the request", () => this.cancel(), "Keep it"),
      },
      "Cancel request",
    );
  }

  async cancel() {
    if (this.busy) return;
    this.clearErrors();
    this.rememberFocus();
    this.setBusy(true);
    try {
      const found = await action("cancel_interaction", { request_id: this.record.id });
      upsert(found.interaction);
      announce("Request cancelled.");
    } catch (error) {
      this.setBusy(false);
      await this.show(error);
    }
  }

  rememberFocus() {
    if (this.element.contains(document.activeElement)) {
      focusAfter.set(this.record.id, this.element.dataset.where);
    }
  }

  /** @param {string} text */
  submitButton(text) {
    return h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, text));
  }

  /**
   * Upload ``file`` for this request; a refusal is shown on ``input``.
   * @param {File | null} file
   * @param {Field} input
   * @param {string | null} fieldName
   */
  async uploaded(file, input, fieldName) {
    if (!file) return null;
    try {
      return await upload(file, this.record.id, fieldName);
    } catch (error) {
      if (error instanceof ApiError && (error.status === 422 || error.status === 413)) {
        const messages = error.errors.map((e) => e.message);
        input.setError(messages.length ? messages.join("; ") : error.message);
        error.shown = true;
      }
      throw error;
    }
  }

  /** @param {boolean} busy */
  setBusy(busy) {
    this.busy = busy;
    this.element.setAttribute("aria-busy", busy ? "true" : "false");
    disable(this.element, "button, input, select, textarea", busy);
  }

  clearErrors() {
    this.error.hidden = true;
    delete this.error.dataset.unreachable;
    clear(this.error);
    for (const input of this.fields) input.clearError();
  }

  /** @param {() => unknown} produce the answer (or a promise of it) */
  async submit(produce) {
    if (this.busy) return;
    this.clearErrors();
    this.rememberFocus();
    this.setBusy(true);
    try {
      const answer = await produce();
      const found = await action("respond_interaction", {
        request_id: this.record.id,
        answer,
        answered_via: ANSWERED_VIA,
      });
      upsert(found.interaction);
      if (found.interaction.status === "pending") {
        // A vote of a quorum: the request waits for more approvals.
        this.setBusy(false);
        this.blockError(["Your vote was counted; the request waits for more approvals."]);
      }
      announce("Answer sent.");
    } catch (error) {
      this.setBusy(false);
      focusAfter.delete(this.record.id);
      await this.show(error);
      if (document.activeElement === document.body) this.element.focus();
    }
  }

  /** @param {unknown} error */
  async show(error) {
    if (!(error instanceof ApiError)) {
      this.blockError(["Something went wrong in this page; the answer was not sent."]);
      throw error;
    }
    if (error.shown) {
      this.focusFirstInvalid();
      return;
    }
    if (error.status === 422 || error.status === 413) {
      const loose = [];
      for (const problem of error.errors.length ? error.errors : [{ path: "", message: error.message }]) {
        const target = this.fieldFor(problem.path || "");
        if (target) target.setError(problem.message);
        else loose.push(problem.path ? `${problem.path}: ${problem.message}` : problem.message);
      }
      if (loose.length) this.blockError(loose);
      this.focusFirstInvalid();
      announce("The answer was not accepted; see the errors.");
      return;
    }
    if (error.status === 409 && error.currentStatus === null) {
      // A vote of a quorum for someone whose vote stands already: nothing changed.
      this.blockError([error.message]);
      return;
    }
    if (error.status === 409) {
      try {
        const found = await action("get_interaction", { request_id: this.record.id });
        upsert(found.interaction);
      } catch {
        this.blockError([`This request is already ${error.currentStatus || "closed"}.`]);
      }
      return;
    }
    if (error.status === 404) {
      this.blockError(["This request is no longer available to you."]);
    } else if (error.status === 0) {
      this.blockError(["The server cannot be reached; the answer was not sent. Try again."]);
      untilServerIsBack(this.error, { hide: true });
    } else {
      this.blockError([error.message]);
    }
  }

  /** @param {string} path */
  fieldFor(path) {
    if (isToolApproval(this.record.ui_surface)) {
      const named = /^arguments\.([^.[]+)/.exec(path);
      return (named && this.fields.find((input) => input.name === named[1])) || null;
    }
    if (this.record.kind !== "form") return this.fields[0] || null;
    const name = path.split(/[.[]/)[0];
    return this.fields.find((input) => input.name === name) || null;
  }

  focusFirstInvalid() {
    const invalid = this.fields.find((input) => input.element.classList.contains("field--invalid"));
    if (invalid) invalid.focus();
    else this.element.focus();
  }

  /** @param {string[]} lines */
  blockError(lines) {
    delete this.error.dataset.unreachable;
    clear(this.error);
    this.error.append(...lines.map((line) => h("p", null, line)));
    this.error.hidden = false;
  }

  meta() {
    const record = this.record;
    const parts = [];
    const who = requesterText(record.requester);
    if (who) parts.push(`Asked by ${who}`);
    if (record.owner && !mine(record)) parts.push(`${parts.length ? ", of " : "Asked of "}${record.owner}`);
    const asked = h("time", { datetime: record.created_at, title: when(record.created_at) }, fromNow(record.created_at));
    const expiry =
      record.status === "pending"
        ? h("span", { class: "expiry", dataset: { expires: record.expires_at || "" } }, expiryText(record.expires_at))
        : null;
    return h(
      "div",
      { class: "block-foot" },
      h(
        "p",
        { class: "block-meta" },
        parts.join(""),
        parts.length ? " · " : "",
        asked,
        expiry ? " · " : "",
        expiry,
      ),
      record.status === "pending" && mine(record) ? this.cancelControl() : null,
    );
  }

  outcome() {
    const record = this.record;
    // Who answered, in every view of a shared request: "Answered by you", "by kim".
    const by = (record.answered_by ? ` by ${person(record.answered_by)}` : "") + viaText(record.answered_via);
    const at = record.answered_at
      ? h("time", { datetime: record.answered_at, title: when(record.answered_at) }, fromNow(record.answered_at))
      : null;
    if (record.status === "cancelled") {
      return h(
        "p",
        { class: "outcome outcome--cancelled" },
        `Cancelled${by}`,
        at ? [" ", at] : "",
        ": there is nothing left to answer.",
      );
    }
    if (record.status === "expired") {
      return h(
        "p",
        { class: "outcome outcome--expired" },
        "Expired: no answer came before the deadline",
        record.expires_at ? ` (${when(record.expires_at)})` : "",
        ".",
      );
    }
    const answer = record.answer;
    let shown;
    if (isToolApproval(record.ui_surface) && answer && typeof answer === "object") {
      shown = h("strong", { class: "answer-value" }, decisionText(answer));
    } else if (record.kind === "form" && answer && typeof answer === "object") {
      const properties = schemaOf(record).properties || {};
      shown = h(
        "dl",
        { class: "answer-list" },
        Object.entries(answer).map(([name, value]) => {
          const property = properties[name] || {};
          const kind = kindOfProperty(property) || "text";
          return h(
            "div",
            null,
            h("dt", null, property.title || name),
            h("dd", null, valueNode(kind, value, { schema: property })),
          );
        }),
      );
    } else {
      shown = h("strong", { class: "answer-value" }, valueNode(record.kind, answer, { options: optionsOf(record), schema: schemaOf(record) }));
    }
    return h(
      "div",
      { class: "outcome outcome--answered" },
      h("p", null, "Answered", by, at ? ", " : "", at, ": "),
      shown,
    );
  }
}

/**
 * An answer as shown in its block: a file answer links to the file.
 * @param {string} kind
 * @param {unknown} value
 * @param {Parameters<typeof answerText>[2]} [context]
 */
function valueNode(kind, value, context) {
  const file = kind === "file" && value && typeof value === "object" ? /** @type {Partial<FileRef>} */ (value) : null;
  if (file && file.id) {
    return h("a", { href: `/api/files/${encodeURIComponent(file.id)}`, download: file.name }, answerText(kind, value));
  }
  return answerText(kind, value, context);
}

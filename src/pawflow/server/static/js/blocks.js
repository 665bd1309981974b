// Interaction blocks: one request drawn from its record, answerable in place while pending.
//
// A block is always rendered from the record the server sent (never from what was clicked):
// after an answer it is redrawn from the record respond_interaction returns, in every place
// it is shown, and in other tabs from the interaction_answered event. A refused answer (422)
// shows the server's field errors beside the fields and leaves the block open.

import { action, ApiError, upload } from "./api.js";
import { announce, clear, h, uid, untilServerIsBack } from "./dom.js";
import { answerText, expiryText, fromNow, kindName, optionsOf, when } from "./format.js";
import { field, kindOfProperty } from "./fields.js";
import { me, mine, upsert } from "./state.js";
import { renderSurface, unsupported } from "./surfaces.js";

const KINDS = new Set([
  "confirm",
  "choice",
  "multi",
  "text",
  "multiline",
  "integer",
  "decimal",
  "date",
  "datetime",
  "file",
  "form",
]);
const SINGLE_INPUT = new Set(["text", "multiline", "integer", "decimal", "date", "datetime", "file"]);
const STATUS_TEXT = {
  pending: "Waiting for you",
  answered: "Answered",
  cancelled: "Cancelled",
  expired: "Expired",
};

// Blocks answered from the keyboard (request id → where): their redrawn block takes the
// focus, which the disabled controls lost to the page while the answer was on its way.
const focusAfter = new Map();

/** Redraw every block of ``record`` on the page, unless nothing a person sees changed. */
export function refreshBlocks(record, old) {
  if (old && old.status === "pending" && record.status === "pending") return;
  const selector = `[data-request-id="${CSS.escape(record.id)}"]`;
  const where = focusAfter.get(record.id);
  focusAfter.delete(record.id);
  for (const element of document.querySelectorAll(selector)) {
    const hadFocus = element.contains(document.activeElement);
    const fresh = renderBlock(record, { where: element.dataset.where });
    element.replaceWith(fresh);
    const lost = document.activeElement === document.body || document.activeElement === null;
    if (hadFocus || (lost && where === element.dataset.where)) fresh.focus();
  }
}

function person(user) {
  return user === me.user ? "you" : user;
}

// Where an answer came from (the record's answered_via), as the block says it.
const VIA = {
  chat: "in the chat",
  button: "in its block",
  cli: "with pawflow answer",
  mcp: "over MCP",
  api: "through the API",
};

function viaText(via) {
  if (!via) return "";
  return ` ${VIA[via] || `via ${via}`}`;
}

function requesterText(requester) {
  if (!requester) return "";
  const { type, name } = requester;
  return type === "api" ? name : `${name} (${type})`;
}

export function renderBlock(record, { where = "conversation" } = {}) {
  return new Block(record, where).element;
}

class Block {
  constructor(record, where) {
    this.record = record;
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
        h("span", { class: "kind-tag" }, kindName(record.kind)),
        h("span", { class: `status-tag status-tag--${record.status}` }, STATUS_TEXT[record.status]),
      ),
      h("h3", { class: "block-title", id: titleId }, record.title || record.message),
      record.title ? h("p", { class: "block-message", id: messageId }, record.message) : null,
    );
    this.body(pending);
    this.element.append(this.confirmBox, this.error, this.meta());
    if (!pending) this.element.append(this.outcome());
  }

  body(pending) {
    const record = this.record;
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
    if (!KINDS.has(record.kind)) {
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
    const schema = record.response_schema || {};
    const form = h("form", { class: "answer", novalidate: true });
    if (record.kind === "confirm") {
      form.append(
        h(
          "div",
          { class: "actions" },
          h("button", { type: "button", class: "primary", onclick: () => this.submit(() => true) }, "Yes"),
          h("button", { type: "button", onclick: () => this.submit(() => false) }, "No"),
        ),
      );
    } else if (record.kind === "choice") {
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
    } else if (record.kind === "multi") {
      const input = field("multi", schema, { label: "Choose any that apply", name: "choices" });
      this.fields.push(input);
      form.append(input.element, this.submitButton("Validate"));
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        const value = input.read();
        if (value.length === 0) {
          this.confirmEmpty("Send with nothing chosen?", "Send with none chosen", () => value);
        } else this.submit(() => value);
      });
    } else if (SINGLE_INPUT.has(record.kind)) {
      const input = field(record.kind, schema, { describedBy: this.messageId });
      this.fields.push(input);
      form.append(
        h("div", { class: "single" }, input.element, this.submitButton(record.kind === "file" ? "Upload and send" : "Send")),
      );
      if (record.kind === "multiline") {
        input.element.querySelector("textarea").addEventListener("keydown", (event) => {
          if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
        });
      }
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        const value = input.read();
        if ((record.kind === "text" || record.kind === "multiline") && value.trim() === "") {
          this.confirmEmpty("Send an empty answer?", "Send it empty", () => value, input);
          return;
        }
        this.submit(async () => (record.kind === "file" ? this.uploaded(value, input, null) : value));
      });
    } else if (record.kind === "form") {
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
      form.append(
        required.size ? h("p", { class: "hint" }, "Fields marked * are required.") : null,
        grid,
        this.submitButton("Submit"),
      );
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        this.submit(async () => {
          const answer = {};
          for (const input of this.fields) {
            let value = input.read();
            if (input.kind === "file" && value) value = await this.uploaded(value, input, input.name);
            if (value !== null) answer[input.name] = value;
          }
          return answer;
        });
      });
    }
    return form;
  }

  /** Ask before ``produce``'s answer is sent: "Send it empty" sends, "Keep editing" goes back. */
  confirmEmpty(question, yes, produce, input = null) {
    this.ask(question, yes, () => this.submit(produce), "Keep editing", () => {
      if (input) input.focus();
    });
  }

  /** A question in the block with two buttons; the first takes the focus. */
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
    this.confirmBox.querySelector("button").focus();
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

  submitButton(text) {
    return h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, text));
  }

  /** Upload ``file`` for this request; a refusal is shown on ``input``. */
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

  setBusy(busy) {
    this.busy = busy;
    this.element.setAttribute("aria-busy", busy ? "true" : "false");
    for (const control of this.element.querySelectorAll("button, input, select, textarea")) {
      control.disabled = busy;
    }
  }

  clearErrors() {
    this.error.hidden = true;
    delete this.error.dataset.unreachable;
    clear(this.error);
    for (const input of this.fields) input.clearError();
  }

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
        answered_via: "button",
      });
      upsert(found.interaction);
      announce("Answer sent.");
    } catch (error) {
      this.setBusy(false);
      focusAfter.delete(this.record.id);
      await this.show(error);
      if (document.activeElement === document.body) this.element.focus();
    }
  }

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

  fieldFor(path) {
    if (this.record.kind !== "form") return this.fields[0] || null;
    const name = path.split(/[.[]/)[0];
    return this.fields.find((input) => input.name === name) || null;
  }

  focusFirstInvalid() {
    const invalid = this.fields.find((input) => input.element.classList.contains("field--invalid"));
    if (invalid) invalid.focus();
    else this.element.focus();
  }

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
    if (record.kind === "form" && answer && typeof answer === "object") {
      const properties = (record.response_schema || {}).properties || {};
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
      shown = h("strong", { class: "answer-value" }, valueNode(record.kind, answer, { options: optionsOf(record), schema: record.response_schema }));
    }
    return h(
      "div",
      { class: "outcome outcome--answered" },
      h("p", null, "Answered", by, at ? ", " : "", at, ": "),
      shown,
    );
  }
}

function valueNode(kind, value, context) {
  if (kind === "file" && value && value.id) {
    return h("a", { href: `/api/files/${encodeURIComponent(value.id)}`, download: value.name }, answerText(kind, value));
  }
  return answerText(kind, value, context);
}

// @ts-check
// Rich surfaces, contract pawflow.ui-surface.v1: a table to pick rows from, a card with
// action buttons. A surface only presents the request: its answers are the values of the
// request's own kind (its declared fallback), sent and validated like any other answer.
// A surface this page cannot draw is not guessed at: the request's kind is rendered
// instead, with a note saying so.

import { SURFACE_CONTRACT } from "./contract.js";
import { all, h, uid } from "./dom.js";

/** @import { CardSurface, Interaction, Kind, Row, TableSurface } from "./contract.js" */

// The surfaces this page draws, by the type the contract gives them.
/** @type {TableSurface["type"]} */
const TABLE = "table";
/** @type {CardSurface["type"]} */
const CARD = "card";
const TOOL_APPROVAL = "tool_approval";
/** A tool approval's tag on its block, whatever its kind (a confirm). */
export const APPROVAL_TAG = "Approval";

/**
 * An agent's tool call waiting for a decision (pawflow.interactions.tool_approval).
 * @typedef {object} ToolApprovalSurface
 * @property {string} tool
 * @property {string | null} [agent]
 * @property {string} [description]
 * @property {string | null} [title]
 * @property {Record<string, unknown>} arguments
 * @property {{properties?: Record<string, {type?: string, enum?: unknown[], description?: string}>}} schema
 * @property {string[]} decisions
 */

/**
 * One argument's input; ``read`` gives its value (undefined: left out).
 * @typedef {object} ArgumentInput
 * @property {HTMLElement} element
 * @property {string} name
 * @property {"text"} kind
 * @property {() => any} read
 * @property {() => void} focus
 * @property {(message: string) => void} setError
 * @property {() => void} clearError
 */

/**
 * ``act(value)`` sends ``value`` as the answer.
 * @typedef {(value: unknown) => void} Act
 */

/**
 * The fields of ``surface``, whatever it is.
 * @param {unknown} surface
 * @returns {Record<string, unknown>}
 */
function fieldsOf(surface) {
  return surface && typeof surface === "object" ? /** @type {Record<string, unknown>} */ (surface) : {};
}

/**
 * Whether ``surface`` is a table (rows to pick from).
 * @param {unknown} surface
 * @returns {surface is TableSurface}
 */
export function isTable(surface) {
  const { type, columns, rows } = fieldsOf(surface);
  return type === TABLE && Array.isArray(columns) && Array.isArray(rows);
}

/**
 * Whether ``surface`` is a card (a summary, with action buttons).
 * @param {unknown} surface
 * @returns {surface is CardSurface}
 */
function isCard(surface) {
  return fieldsOf(surface).type === CARD;
}

/**
 * Whether ``surface`` is a tool approval (a call to approve, edit, reject or answer).
 * @param {unknown} surface
 * @returns {surface is ToolApprovalSurface}
 */
export function isToolApproval(surface) {
  const { type, arguments: args, decisions } = fieldsOf(surface);
  return type === TOOL_APPROVAL && Boolean(args) && typeof args === "object" && Array.isArray(decisions);
}

/**
 * A decision on a tool approval, as the outcome says it.
 * @param {unknown} answer
 * @returns {string}
 */
export function decisionText(answer) {
  const { decision, arguments: args, reason, text } = fieldsOf(answer);
  if (decision === "approve") return "Approved";
  if (decision === "edit") return `Approved with edits: ${JSON.stringify(args)}`;
  if (decision === "reject") return reason ? `Rejected: ${reason}` : "Rejected";
  if (decision === "respond") return `Answered instead of running it: ${text}`;
  return String(decision);
}

/**
 * Why ``surface`` cannot be drawn here (null when it can).
 * @param {unknown} surface
 * @param {Kind} kind
 * @returns {string | null}
 */
export function unsupported(surface, kind) {
  if (!surface || typeof surface !== "object") return "it is not a surface";
  const { contract, fallback, type } = fieldsOf(surface);
  if (contract !== SURFACE_CONTRACT) return `its contract ${contract} is unknown`;
  if (fallback !== kind) return "it does not declare this request's kind";
  if (isTable(surface) || isCard(surface) || isToolApproval(surface)) return null;
  return `this page cannot show a “${type}”`;
}

/** @param {unknown} value */
function cellText(value) {
  if (value === null || value === undefined) return "";
  if (value === true) return "yes";
  if (value === false) return "no";
  return String(value);
}

/**
 * Draw the surface of ``record``. ``act(value)`` answers. Returns {element, answers}:
 * ``answers`` is true when the surface carries the answering controls itself.
 * ``disabled`` draws it for a request that is no longer pending. Only for a surface
 * ``unsupported`` has nothing against.
 * @param {Interaction} record
 * @param {Act} act
 * @param {{disabled?: boolean}} [options]
 * @returns {{element: HTMLElement, answers: boolean, fields?: ArgumentInput[]}}
 */
export function renderSurface(record, act, { disabled = false } = {}) {
  const surface = record.ui_surface;
  if (isTable(surface)) return table(surface, record, act, disabled);
  if (isCard(surface)) return card(surface, record, act, disabled);
  if (isToolApproval(surface)) return toolApproval(surface, act, disabled);
  throw new Error("renderSurface: a surface this page cannot show");
}

/**
 * @param {TableSurface} surface
 * @param {Interaction} record
 * @param {Act} act
 * @param {boolean} disabled
 */
function table(surface, record, act, disabled) {
  const pick = record.kind === "choice" || record.kind === "multi";
  const captionId = uid("caption");
  const firstKey = surface.columns[0].key;
  /** @param {Row} row */
  const rowName = (row) => cellText(row.cells[firstKey]) || row.value;
  const header = h(
    "tr",
    null,
    record.kind === "multi" ? h("th", { scope: "col" }, h("span", { class: "sr-only" }, "Select")) : null,
    surface.columns.map((column) =>
      h("th", { scope: "col", class: `align-${column.align || "start"}` }, column.label),
    ),
    record.kind === "choice" ? h("th", { scope: "col" }, h("span", { class: "sr-only" }, "Action")) : null,
  );
  /** @type {unknown[]} */
  const chosen = record.status === "answered" ? [record.answer].flat() : [];
  const body = surface.rows.map((row) => {
    const isChosen = pick && chosen.includes(row.value);
    return h(
      "tr",
      { class: isChosen ? "chosen" : null, dataset: row.value ? { value: row.value } : {} },
      record.kind === "multi"
        ? h(
            "td",
            null,
            disabled
              ? isChosen
                ? h("span", { class: "chosen-mark" }, "✓", h("span", { class: "sr-only" }, " chosen"))
                : null
              : h("input", {
                  type: "checkbox",
                  value: row.value,
                  "aria-label": `Select ${rowName(row)}`,
                }),
          )
        : null,
      surface.columns.map((column) =>
        h("td", { class: `align-${column.align || "start"}` }, cellText(row.cells[column.key])),
      ),
      record.kind === "choice"
        ? h(
            "td",
            { class: "align-end" },
            isChosen
              ? h("span", { class: "chosen-mark" }, "Chosen")
              : disabled
                ? null
                : h(
                    "button",
                    {
                      type: "button",
                      class: "small",
                      "aria-label": `Choose ${rowName(row)}`,
                      onclick: () => act(row.value),
                    },
                    "Choose",
                  ),
          )
        : null,
    );
  });
  const tableEl = h(
    "table",
    { class: "surface-table", "aria-labelledby": surface.title ? captionId : null },
    surface.title ? h("caption", { id: captionId }, surface.title) : null,
    h("thead", null, header),
    h("tbody", null, body),
  );
  const element = h("div", { class: "surface surface--table" }, h("div", { class: "scroll" }, tableEl));
  if (record.kind === "multi" && !disabled) {
    element.append(
      h(
        "div",
        { class: "actions" },
        h(
          "button",
          {
            type: "button",
            class: "primary",
            onclick: () =>
              act(
                all(tableEl, "input[type=checkbox]", HTMLInputElement)
                  .filter((box) => box.checked)
                  .map((box) => box.value),
              ),
          },
          "Validate",
        ),
      ),
    );
  }
  return { element, answers: pick };
}

/**
 * @param {CardSurface} surface
 * @param {Interaction} record
 * @param {Act} act
 * @param {boolean} disabled
 */
function card(surface, record, act, disabled) {
  const actions = Array.isArray(surface.actions) ? surface.actions : [];
  const answers = actions.length > 0 && (record.kind === "confirm" || record.kind === "choice");
  const fields = Array.isArray(surface.fields) ? surface.fields : [];
  const element = h(
    "div",
    { class: "surface surface--card" },
    surface.title ? h("p", { class: "card-title" }, surface.title) : null,
    surface.subtitle ? h("p", { class: "card-subtitle" }, surface.subtitle) : null,
    surface.body ? h("p", { class: "card-body" }, surface.body) : null,
    fields.length
      ? h(
          "dl",
          { class: "card-fields" },
          fields.map((f) => h("div", null, h("dt", null, f.label), h("dd", null, f.value))),
        )
      : null,
    answers && !disabled
      ? h(
          "div",
          { class: "actions" },
          actions.map((a) =>
            h(
              "button",
              {
                type: "button",
                class: a.style === "primary" ? "primary" : a.style === "danger" ? "danger" : null,
                onclick: () => act(a.value),
              },
              a.label,
            ),
          ),
        )
      : null,
  );
  return { element, answers };
}

/**
 * The input of one argument, pre-filled with the proposed value: a list for an enum of
 * text, else text (a value that is not text is written, and read back, as JSON).
 * @param {string} name
 * @param {{type?: string, enum?: unknown[], description?: string}} property
 * @param {unknown} proposed
 * @param {boolean} disabled
 * @returns {ArgumentInput}
 */
function argumentInput(name, property, proposed, disabled) {
  const id = uid("arg");
  const errorId = uid("error");
  const asText = property.type === "string" || (proposed === undefined ? false : typeof proposed === "string");
  const shown = proposed === undefined ? "" : asText && typeof proposed === "string" ? proposed : JSON.stringify(proposed);
  const choices = Array.isArray(property.enum) && property.enum.every((v) => typeof v === "string") ? property.enum : null;
  /** @type {HTMLInputElement | HTMLSelectElement} */
  const control = choices
    ? h(
        "select",
        { id, name, disabled },
        proposed === undefined ? h("option", { value: "" }, "") : null,
        choices.map((v) => h("option", { value: String(v), selected: v === proposed }, String(v))),
      )
    : h("input", { id, name, type: "text", value: shown, disabled, autocomplete: "off" });
  if (choices && proposed !== undefined) control.value = String(proposed);
  const error = h("p", { class: "field-error", id: errorId, hidden: true });
  const element = h(
    "div",
    { class: "field field--argument" },
    h("label", { for: id }, name),
    control,
    property.description ? h("p", { class: "hint" }, property.description) : null,
    error,
  );
  return {
    element,
    name,
    kind: "text",
    read() {
      const raw = control.value;
      if (raw === "" && proposed === undefined) return undefined;
      if (asText || choices) return raw;
      try {
        return JSON.parse(raw);
      } catch {
        return raw;
      }
    },
    focus: () => control.focus(),
    setError(message) {
      error.textContent = message;
      error.hidden = false;
      element.classList.add("field--invalid");
      control.setAttribute("aria-invalid", "true");
      control.setAttribute("aria-describedby", errorId);
    },
    clearError() {
      error.textContent = "";
      error.hidden = true;
      element.classList.remove("field--invalid");
      control.removeAttribute("aria-invalid");
    },
  };
}

/**
 * A tool call to decide on: its arguments in a form pre-filled with the proposed ones,
 * and a button per decision the tool offers (a reason box for reject, a result box for
 * respond). Edited arguments are checked by the server against the tool's schema.
 * @param {ToolApprovalSurface} surface
 * @param {Act} act
 * @param {boolean} disabled
 */
function toolApproval(surface, act, disabled) {
  const offered = new Set(surface.decisions);
  const properties = surface.schema?.properties || {};
  const names = [...new Set([...Object.keys(properties), ...Object.keys(surface.arguments)])];
  const inputs = names.map((name) => argumentInput(name, properties[name] || {}, surface.arguments[name], disabled));
  const edited = () => {
    /** @type {Record<string, unknown>} */
    const args = {};
    for (const input of inputs) {
      const value = input.read();
      if (value !== undefined) args[input.name] = value;
    }
    return args;
  };
  const same = () => JSON.stringify(edited()) === JSON.stringify(surface.arguments);
  const always = h("input", { type: "checkbox", id: uid("always"), name: "always" });
  const reason = h("textarea", { name: "reason", rows: "2", "aria-label": "Reason (optional)", placeholder: "Why not? (optional)" });
  const result = h("textarea", { name: "result", rows: "2", "aria-label": "Result to give instead", placeholder: "The result to give instead" });
  const alwaysPart = () => (always.checked ? { always: "conversation" } : {});
  const element = h(
    "div",
    { class: "surface surface--tool-approval" },
    h("p", { class: "card-title" }, surface.title || `Run ${surface.tool}?`),
    surface.description ? h("p", { class: "card-body" }, surface.description) : null,
    h("fieldset", { class: "tool-arguments" }, h("legend", null, `Arguments of ${surface.tool}`), inputs.map((i) => i.element)),
  );
  if (!disabled) {
    // "Approve" runs the call as proposed; once an argument is changed it says so.
    const approve = h(
      "button",
      {
        type: "button",
        class: "primary",
        onclick: () =>
          act(
            offered.has("edit") && !same()
              ? { decision: "edit", arguments: edited(), ...alwaysPart() }
              : { decision: "approve", ...alwaysPart() },
          ),
      },
      "Approve",
    );
    const relabel = () => {
      approve.textContent = offered.has("edit") && !same() ? "Approve with my edits" : "Approve";
    };
    for (const input of inputs) {
      input.element.addEventListener("input", relabel);
      input.element.addEventListener("change", relabel);
    }
    element.append(
      h("p", { class: "always" }, always, h("label", { for: always.id }, "Always allow this call in this conversation")),
      h("div", { class: "actions" }, approve),
      h(
        "div",
        { class: "reject" },
        reason,
        h(
          "button",
          {
            type: "button",
            class: "danger",
            onclick: () => act({ decision: "reject", ...(reason.value.trim() ? { reason: reason.value.trim() } : {}) }),
          },
          "Reject",
        ),
      ),
    );
    if (offered.has("respond")) {
      element.append(
        h(
          "div",
          { class: "respond" },
          result,
          h("button", { type: "button", onclick: () => act({ decision: "respond", text: result.value }) }, "Respond instead"),
        ),
      );
    }
  }
  return { element, answers: true, fields: inputs };
}

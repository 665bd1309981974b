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
  if (isTable(surface) || isCard(surface)) return null;
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
 * @returns {{element: HTMLElement, answers: boolean}}
 */
export function renderSurface(record, act, { disabled = false } = {}) {
  const surface = record.ui_surface;
  if (isTable(surface)) return table(surface, record, act, disabled);
  if (isCard(surface)) return card(surface, record, act, disabled);
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

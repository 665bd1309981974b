// @ts-check
// Times, sizes and answers as people read them.

import { KINDS, oneOf } from "./contract.js";
import { isTable } from "./surfaces.js";

/** @import { FileRef, Interaction, Kind, OptionItem } from "./contract.js" */

/**
 * A response schema, or one field of a form's: the contract's subset of JSON Schema, with
 * PawFlow's own keywords (x-pawflow-kind, -hint, -currency; mediaTypes, maxBytes for files).
 * The server has checked it; the page only reads it.
 * @typedef {object} SchemaWords
 * @property {string} [type]
 * @property {string} [format]
 * @property {string} [title]
 * @property {string} [description]
 * @property {string[]} [enum]
 * @property {string[]} [enumNames]
 * @property {Array<{const?: string, title?: string}>} [oneOf]
 * @property {Array<{const?: string, title?: string}>} [anyOf]
 * @property {Schema} [items]
 * @property {Record<string, Schema>} [properties]
 * @property {string[]} [required]
 * @property {number} [minLength]
 * @property {number} [maxLength]
 * @property {string} [pattern]
 * @property {number} [minimum]
 * @property {number} [maximum]
 * @property {number} [exclusiveMinimum]
 * @property {number} [exclusiveMaximum]
 * @property {number} [multipleOf]
 * @property {number} [minItems]
 * @property {number} [maxItems]
 * @property {string[]} [mediaTypes]
 * @property {number} [maxBytes]
 */
/**
 * @typedef {SchemaWords & {
 *   "x-pawflow-kind"?: string,
 *   "x-pawflow-hint"?: string,
 *   "x-pawflow-currency"?: string,
 * }} Schema
 */

/** @type {Record<Kind, string>} */
const KIND_NAMES = {
  confirm: "Yes or no",
  choice: "Choice",
  multi: "Several choices",
  text: "Text",
  multiline: "Long text",
  integer: "Whole number",
  decimal: "Number",
  date: "Date",
  datetime: "Date and time",
  file: "File",
  form: "Form",
};

/**
 * A kind as people call it; an unknown one (from a newer server) as it is.
 * @param {string} kind
 */
export function kindName(kind) {
  return oneOf(KINDS, kind) ? KIND_NAMES[kind] : kind;
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "always" });
const MINUTE = 60;
const HOUR = 3600;
const DAY = 24 * HOUR;
// The largest unit that reads naturally: "in 20 hours" rather than "in 1 day" until 22 h.
/** @type {Array<[below: number, size: number, unit: Intl.RelativeTimeFormatUnit]>} */
const STEPS = [
  [45 * MINUTE, MINUTE, "minute"],
  [22 * HOUR, HOUR, "hour"],
  [7 * DAY, DAY, "day"],
  [26 * DAY, 7 * DAY, "week"],
  [320 * DAY, 30 * DAY, "month"],
  [Infinity, 365 * DAY, "year"],
];

/**
 * "3 days ago", "in 2 hours", "just now".
 * @param {string} iso
 */
export function fromNow(iso, now = Date.now()) {
  const seconds = (Date.parse(iso) - now) / 1000;
  const span = Math.abs(seconds);
  if (span < 45) return seconds < 0 ? "just now" : "in a moment";
  for (const [below, size, unit] of STEPS) {
    if (span < below) return relative.format(Math.round(seconds / size), unit);
  }
  return when(iso);
}

const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

/** @param {string} iso */
export function when(iso) {
  return absolute.format(new Date(iso));
}

/**
 * A <time> element: relative text, the exact moment in its title.
 * @param {string} iso
 */
export function timeText(iso) {
  return { text: fromNow(iso), title: when(iso) };
}

/**
 * "expires in 2 hours", "no deadline", "deadline passed".
 * @param {string | null} iso
 */
export function expiryText(iso, now = Date.now()) {
  if (!iso) return "no deadline";
  if (Date.parse(iso) <= now) return "deadline passed";
  return `expires ${fromNow(iso, now)}`;
}

const decimal = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });

/**
 * Sizes in the units people and requesters write them in: 5000000 bytes is "5 MB".
 * @param {number} bytes
 */
export function size(bytes) {
  if (bytes < 1000) return `${decimal.format(bytes)} bytes`;
  if (bytes < 1000 * 1000) return `${decimal.format(bytes / 1000)} KB`;
  if (bytes < 1000 * 1000 * 1000) return `${decimal.format(bytes / 1000 / 1000)} MB`;
  return `${decimal.format(bytes / 1000 / 1000 / 1000)} GB`;
}

/** @type {Record<string, string>} */
const MEDIA_WORDS = {
  "application/pdf": "a PDF",
  "application/zip": "a ZIP archive",
  "application/json": "a JSON file",
  "text/plain": "a text file",
  "text/csv": "a CSV file",
  "text/markdown": "a Markdown file",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "an Excel sheet",
  "application/vnd.ms-excel": "an Excel sheet",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "a Word document",
  "application/msword": "a Word document",
  "image/*": "an image",
  "audio/*": "an audio file",
  "video/*": "a video",
  "text/*": "a text file",
};

/**
 * One media type in words: "image/png" is "a PNG image".
 * @param {string} type
 */
export function mediaWords(type) {
  const lowered = String(type).toLowerCase();
  if (MEDIA_WORDS[lowered]) return MEDIA_WORDS[lowered];
  const [main, sub = ""] = lowered.split("/");
  const name = sub.replace(/^(x-|vnd\.)/, "").split(/[.+]/)[0].toUpperCase();
  /** @type {Record<string, string>} */
  const nouns = { image: "image", audio: "audio file", video: "video", text: "text file" };
  const noun = nouns[main] || "file";
  return /^[AEFHILMNORSX]/.test(name) ? `an ${name} ${noun}` : `a ${name} ${noun}`;
}

/**
 * Whether ``type`` is one of ``accepted`` ("image/png" is one of ["image/*"]).
 * @param {string} type
 * @param {string[]} accepted
 */
export function mediaAccepted(type, accepted) {
  const [main] = String(type).toLowerCase().split("/");
  return accepted.some((entry) => {
    const wanted = String(entry).toLowerCase();
    return wanted === "*/*" || wanted === String(type).toLowerCase() || wanted === `${main}/*`;
  });
}

/**
 * Accepted media types in words: "a PDF or an image".
 * @param {string[]} types
 */
export function mediaList(types) {
  const words = [...new Set(types.map(mediaWords))];
  if (words.length <= 1) return words.join("");
  return `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`;
}

// Amounts are written one way wherever PawFlow shows them (the terminal app and the flows'
// messages too, pawflow.interactions.money): as English writes money, "€1,234.50".
const MONEY_LOCALE = "en-US";

/**
 * An amount in ``currency`` (ISO 4217): "€42.50", "¥1,235", "CHF 42.50".
 * @param {number | Intl.StringNumericLiteral} amount
 * @param {string} currency
 */
export function money(amount, currency) {
  try {
    return new Intl.NumberFormat(MONEY_LOCALE, { style: "currency", currency }).format(amount);
  } catch {
    return `${amount} ${currency}`;
  }
}

/**
 * The symbol of ``currency`` as amounts are written ("€").
 * @param {string} currency
 */
export function currencySymbol(currency) {
  try {
    const parts = new Intl.NumberFormat(MONEY_LOCALE, { style: "currency", currency }).formatToParts(0);
    return parts.find((part) => part.type === "currency")?.value || currency;
  } catch {
    return currency;
  }
}

export function timeZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "your local time";
}

/**
 * @param {OptionItem[]} options
 * @param {unknown} value
 */
function optionLabel(options, value) {
  const found = (options || []).find((o) => o.value === value);
  return found ? found.label : String(value);
}

/**
 * A field's choices as {value, label}: enum with enumNames, or oneOf/anyOf of const+title.
 * @param {Schema} schema
 * @returns {OptionItem[]}
 */
export function enumOptions(schema) {
  const items = schema.items || {};
  const listed = schema.oneOf || schema.anyOf || items.oneOf || items.anyOf;
  if (Array.isArray(listed)) {
    /** @type {OptionItem[]} */
    const found = [];
    for (const entry of listed) {
      if (entry && entry.const !== undefined) {
        found.push({ value: entry.const, label: entry.title || String(entry.const) });
      }
    }
    return found;
  }
  const enumValues = schema.enum || items.enum || [];
  const names = schema.enumNames || items.enumNames || [];
  return enumValues.map((value, i) => ({ value, label: names[i] || String(value) }));
}

/**
 * A request's options with their labels, as the person saw them: the rows of its table
 * surface (named by their first cell), else its own options, else its schema's.
 * @param {Interaction} record
 * @returns {OptionItem[]}
 */
export function optionsOf(record) {
  const surface = record.ui_surface;
  if (isTable(surface)) {
    const first = surface.columns[0] && surface.columns[0].key;
    /** @type {OptionItem[]} */
    const rows = [];
    for (const row of surface.rows) {
      if (!row || !row.value) continue;
      rows.push({ value: row.value, label: String((row.cells || {})[first] ?? "") || row.value });
    }
    if (rows.length) return rows;
  }
  if (Array.isArray(record.options) && record.options.length) return record.options;
  return enumOptions(schemaOf(record));
}

/**
 * The response schema of ``record``, as the page reads it.
 * @param {Interaction} record
 * @returns {Schema}
 */
export function schemaOf(record) {
  return record.response_schema || {};
}

/**
 * One normalized answer as text, for the block's outcome line.
 * @param {string} kind
 * @param {unknown} answer
 * @param {{options?: OptionItem[], schema?: Schema}} [context]
 */
export function answerText(kind, answer, { options, schema } = {}) {
  if (answer === null || answer === undefined) return "—";
  switch (kind) {
    case "confirm":
      return answer ? "Yes" : "No";
    case "choice":
      return optionLabel(options || enumOptions(schema || {}), answer);
    case "multi": {
      if (!Array.isArray(answer)) return String(answer);
      const list = options || enumOptions(schema || {});
      return answer.length ? answer.map((v) => optionLabel(list, v)).join(", ") : "none";
    }
    case "datetime":
      return when(String(answer));
    case "date":
      return new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeZone: "UTC" }).format(
        new Date(`${answer}T00:00:00Z`),
      );
    case "file": {
      const file = /** @type {FileRef} */ (answer);
      return `${file.name} (${size(file.size)})`;
    }
    case "decimal":
    case "integer": {
      const currency = schema && schema["x-pawflow-currency"];
      // Decimals may come as exact strings ("42.5"): Intl formats those without rounding.
      if (!currency) return String(answer);
      if (typeof answer === "number") return money(answer, currency);
      const text = String(answer);
      return /^-?\d+(\.\d+)?$/.test(text)
        ? money(/** @type {Intl.StringNumericLiteral} */ (text), currency)
        : text;
    }
    default:
      return String(answer);
  }
}

// @ts-check
// Typed inputs for the scalar kinds, used alone (a text, a date… request) and as the fields
// of a form. An input reads what the person entered into the JSON value the contract
// expects; it checks nothing itself: the server validates every answer and its field
// errors are shown back here, beside the input they are about.

import { SCALAR_KINDS, oneOf } from "./contract.js";
import { datePattern, dateTimePattern, exampleDate, parseDate, parseDateTime } from "./dates.js";
import { all, h, uid } from "./dom.js";
import {
  currencySymbol,
  enumOptions,
  mediaAccepted,
  mediaList,
  mediaWords,
  size,
  timeZone,
} from "./format.js";

/** @import { ScalarKind } from "./contract.js" */
/** @import { Schema } from "./format.js" */

/**
 * Which scalar kind a form field's schema describes (as the server decides it).
 * @param {Schema} schema
 * @returns {ScalarKind | null}
 */
export function kindOfProperty(schema) {
  const marker = schema["x-pawflow-kind"];
  if (oneOf(SCALAR_KINDS, marker)) return marker;
  switch (schema.type) {
    case "boolean":
      return "confirm";
    case "integer":
      return "integer";
    case "number":
      return "decimal";
    case "string":
      if ("enum" in schema) return "choice";
      if (schema.format === "date") return "date";
      return schema.format === "date-time" ? "datetime" : "text";
    case "array":
      return "multi";
    default:
      return null;
  }
}

/**
 * @param {number} count
 * @param {string} word
 */
function plural(count, word) {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "1234567890";
/** @type {Record<string, string>} */
const CLASS_SAMPLES = { "A-Z": UPPER, "a-z": LOWER, "0-9": DIGITS, "A-Za-z": UPPER, "a-zA-Z": LOWER };
/** @type {Record<string, string>} */
const ESCAPE_SAMPLES = { d: DIGITS, w: LOWER, s: " " };

/**
 * An example of what a simple pattern accepts ("^[A-Z]{3}-\\d{4}$" gives "ABC-1234"), or
 * null when the pattern is beyond these few constructs: a regex is no hint to a person.
 * @param {string} pattern
 */
export function patternExample(pattern) {
  let rest = String(pattern).replace(/^\^/, "").replace(/\$$/, "");
  let out = "";
  while (rest) {
    let unit;
    let match;
    if ((match = /^\[([^\]]+)\]/.exec(rest))) {
      unit = CLASS_SAMPLES[match[1]];
      if (unit === undefined) {
        const plain = /^[^\\^-]/.exec(match[1]);
        if (!plain) return null;
        unit = plain[0];
      }
    } else if ((match = /^\\([dws])/.exec(rest))) {
      unit = ESCAPE_SAMPLES[match[1]];
    } else if ((match = /^\\([^A-Za-z0-9])/.exec(rest))) {
      unit = match[1];
    } else if ((match = /^[^\\()[\]{}|.*+?^$]/.exec(rest))) {
      unit = match[0];
    } else {
      return null;
    }
    rest = rest.slice(match[0].length);
    let times = 1;
    const counted = /^\{(\d+)(?:,(\d*))?\}/.exec(rest);
    if (counted) {
      times = Number(counted[1]) || 1;
      rest = rest.slice(counted[0].length);
    } else if (/^[+*?]/.test(rest)) {
      times = rest[0] === "+" ? 2 : rest[0] === "*" ? 2 : 1;
      rest = rest.slice(1);
    }
    if (times > 40) return null;
    for (let i = 0; i < times; i += 1) out += unit[i % unit.length];
  }
  return out || null;
}

/**
 * What the schema asks for, in words, so nobody has to learn it from an error.
 * @param {ScalarKind} kind
 * @param {Schema} schema
 */
export function hints(kind, schema) {
  const found = [];
  const own = schema["x-pawflow-hint"];
  if (schema.description) found.push(schema.description);
  if (typeof own === "string" && own) found.push(own);
  if (kind === "text" || kind === "multiline") {
    if (schema.minLength && schema.maxLength) {
      found.push(`${schema.minLength} to ${plural(schema.maxLength, "character")}`);
    } else if (schema.minLength) found.push(`at least ${plural(schema.minLength, "character")}`);
    else if (schema.maxLength) found.push(`at most ${plural(schema.maxLength, "character")}`);
    if (schema.format === "email") found.push("an email address");
    if (schema.format === "uri") found.push("a link such as https://…");
    if (schema.pattern && !own) {
      const example = patternExample(schema.pattern);
      found.push(example ? `like ${example}` : "in the format the requester expects");
    }
  }
  if (kind === "integer" || kind === "decimal") {
    const currency = schema["x-pawflow-currency"];
    if (currency) found.push(`an amount in ${currencySymbol(currency)}${currencySymbol(currency) === currency ? "" : ` (${currency})`}`);
    if ("minimum" in schema && "maximum" in schema) {
      found.push(`from ${schema.minimum} to ${schema.maximum}`);
    } else if ("minimum" in schema) found.push(`at least ${schema.minimum}`);
    else if ("maximum" in schema) found.push(`at most ${schema.maximum}`);
    if ("exclusiveMinimum" in schema) found.push(`more than ${schema.exclusiveMinimum}`);
    if ("exclusiveMaximum" in schema) found.push(`less than ${schema.exclusiveMaximum}`);
    if ("multipleOf" in schema && !(kind === "integer" && schema.multipleOf === 1)) {
      found.push(`in steps of ${schema.multipleOf}`);
    }
  }
  if (kind === "multi") {
    if (schema.minItems) found.push(`choose at least ${schema.minItems}`);
    if (schema.maxItems) found.push(`choose at most ${schema.maxItems}`);
  }
  if (kind === "date") found.push(`as ${datePattern()}`);
  if (kind === "datetime") found.push(`as ${dateTimePattern()}, in your time zone (${timeZone()})`);
  if (kind === "file") {
    const types = schema.mediaTypes;
    if (Array.isArray(types) && !(types.length === 1 && types[0] === "*/*")) {
      found.push(mediaList(types));
    }
    if (schema.maxBytes) found.push(`at most ${size(schema.maxBytes)}`);
  }
  return found;
}

/** @type {Partial<Record<ScalarKind, string>>} */
const LABELS = {
  text: "Your answer",
  multiline: "Your answer",
  integer: "Whole number",
  decimal: "Number",
  date: "Date",
  datetime: "Date and time",
  file: "File",
};

/**
 * A date typed in the locale's order as YYYY-MM-DD; null when it does not read as one.
 * @param {string} text
 */
function dateValue(text) {
  return parseDate(text);
}

/**
 * A local date and time as an instant in UTC; null when it does not read as one.
 * @param {string} text
 */
function datetimeValue(text) {
  const moment = parseDateTime(text);
  return moment === null || Number.isNaN(moment.getTime()) ? null : moment.toISOString();
}

/**
 * The server's refusal of what was entered, in the words of the field's hint. The server
 * speaks of what it received (an ISO date, media types); the person typed a date as their
 * locale writes it, or picked a file: the message says what to write, or what to pick.
 * @param {ScalarKind} kind
 * @param {Schema} schema
 * @param {string} message
 * @param {Entered} entered
 */
function explained(kind, schema, message, entered) {
  if ((kind === "date" || kind === "datetime") && entered.unreadable) {
    const example = exampleDate();
    return kind === "date"
      ? `Write the date as ${datePattern()}, such as ${example}.`
      : `Write the date and time as ${dateTimePattern()}, such as ${example} 09:30.`;
  }
  const file = entered.file;
  if (kind === "file" && file) {
    const types = Array.isArray(schema.mediaTypes) ? schema.mediaTypes : ["*/*"];
    const maxBytes = schema.maxBytes;
    if (typeof maxBytes === "number" && Number.isInteger(maxBytes) && file.size > maxBytes) {
      return `This file is ${size(file.size)}: choose one of at most ${size(maxBytes)}.`;
    }
    if (!mediaAccepted(file.type || "", types)) {
      const what = file.type ? `This file is ${mediaWords(file.type)}` : "This type of file is not taken here";
      return `${what}: choose ${mediaList(types)}.`;
    }
  }
  return message;
}

/**
 * What was entered when an input was last read: a date that did not read as one, a file.
 * @typedef {{unreadable: boolean, file: File | null}} Entered
 */

/**
 * A whole number as a number; anything else as typed (the server says what is wrong).
 * @param {string} text
 */
function integerValue(text) {
  if (/^[+-]?\d+$/.test(text)) {
    const number = Number(text);
    if (Number.isSafeInteger(number)) return number;
  }
  return text;
}

/**
 * What an input reads: the value the contract expects for its kind (a File for a file,
 * uploaded by the caller), or null when left empty in a form.
 * @typedef {boolean | number | string | string[] | File | null} Value
 */

/**
 * One input, alone or in a form.
 * @typedef {object} Field
 * @property {HTMLElement} element
 * @property {string} name its property in a form ("" alone)
 * @property {ScalarKind} kind
 * @property {() => Value} read
 * @property {() => void} focus
 * @property {(message: string) => void} setError show the server's refusal beside it
 * @property {() => void} clearError
 */

/**
 * @typedef {object} FieldOptions
 * @property {string} [name]
 * @property {string} [label]
 * @property {boolean} [required]
 * @property {boolean} [inForm] a field of a form (empty reads as null)
 * @property {string} [describedBy] the id of what describes it
 */

/**
 * One input for ``kind``. ``read()`` gives the typed value, null when left empty (a File
 * for file inputs, uploaded by the caller).
 * @param {ScalarKind} kind
 * @param {Schema} schema
 * @param {FieldOptions} [options]
 * @returns {Field}
 */
export function field(kind, schema, options = {}) {
  const id = uid("field");
  const hintId = uid("hint");
  const errorId = uid("error");
  const hintList = hints(kind, schema);
  const hint = hintList.length
    ? h("p", { class: "hint", id: hintId }, hintList.join(" · "))
    : null;
  const error = h("p", { class: "field-error", id: errorId, hidden: true });
  const described = [options.describedBy, hint ? hintId : null].filter(Boolean).join(" ");
  const labelText = options.label || LABELS[kind] || "Your answer";
  const required = Boolean(options.required);
  const requiredMark = required
    ? h("span", { class: "required", "aria-hidden": "true", title: "required" }, " *")
    : null;
  /** @type {HTMLElement} what the label is for (a multi's fieldset) */
  let control;
  /** @type {() => Value} */
  let read;
  /** @type {{focus: () => void}} */
  let focusable;
  /** @type {HTMLElement | null} */
  let wrapper = null;
  // What was entered when it was last read, for explaining the server's refusal of it.
  /** @type {Entered} */
  const entered = { unreadable: false, file: null };

  const common = {
    id,
    name: options.name || "answer",
    "aria-describedby": described || null,
    "aria-required": required ? "true" : null,
  };

  if (kind === "confirm") {
    const box = h("input", { ...common, type: "checkbox", class: "check" });
    control = box;
    read = () => box.checked;
    focusable = box;
    wrapper = h(
      "div",
      { class: "field field--check" },
      h("label", { for: id, class: "check-label" }, box, " ", labelText, requiredMark),
      hint,
      error,
    );
  } else if (kind === "choice") {
    const choices = enumOptions(schema);
    const select = h(
      "select",
      common,
      h("option", { value: "" }, required ? "Choose…" : "—"),
      choices.map((o) => h("option", { value: o.value }, o.label)),
    );
    control = select;
    read = () => (select.value === "" ? null : select.value);
    focusable = select;
  } else if (kind === "multi") {
    const choices = enumOptions(schema);
    const legendId = uid("legend");
    const boxes = choices.map((o) => {
      const boxId = uid("option");
      return h(
        "div",
        { class: "option-line" },
        h("input", { type: "checkbox", id: boxId, value: o.value, name: common.name }),
        h("label", { for: boxId }, o.label),
      );
    });
    const fieldset = h(
      "fieldset",
      {
        class: "field field--multi",
        "aria-describedby": [described, errorId].filter(Boolean).join(" ") || null,
      },
      h("legend", { id: legendId }, labelText, requiredMark),
      h("div", { class: "options" }, boxes),
      hint,
      error,
    );
    const inputs = () => all(fieldset, "input[type=checkbox]", HTMLInputElement);
    read = () => {
      const chosen = inputs()
        .filter((box) => box.checked)
        .map((box) => box.value);
      return chosen.length || !options.inForm ? chosen : null;
    };
    focusable = { focus: () => inputs()[0] && inputs()[0].focus() };
    wrapper = fieldset;
    control = fieldset;
  } else if (kind === "multiline") {
    const area = h("textarea", { ...common, rows: 4 });
    control = area;
    read = () => (area.value === "" && options.inForm ? null : area.value);
    focusable = area;
  } else if (kind === "file") {
    const accept = Array.isArray(schema.mediaTypes) ? schema.mediaTypes.join(",") : null;
    const input = h("input", { ...common, type: "file", accept: accept === "*/*" ? null : accept });
    control = input;
    read = () => {
      entered.file = input.files && input.files.length ? input.files[0] : null;
      return entered.file;
    };
    focusable = input;
  } else {
    const attrs = { ...common, autocomplete: "off" };
    if (kind === "integer") Object.assign(attrs, { type: "text", inputmode: "numeric" });
    else if (kind === "decimal") Object.assign(attrs, { type: "text", inputmode: "decimal" });
    else if (kind === "date") Object.assign(attrs, { type: "text", placeholder: datePattern() });
    else if (kind === "datetime") {
      Object.assign(attrs, { type: "text", placeholder: dateTimePattern() });
    }
    else if (schema.format === "email") Object.assign(attrs, { type: "email" });
    else if (schema.format === "uri") Object.assign(attrs, { type: "url" });
    else Object.assign(attrs, { type: "text" });
    const input = h("input", attrs);
    control = input;
    read = () => {
      const text = kind === "text" ? input.value : input.value.trim();
      entered.unreadable = false;
      if (text === "" && options.inForm) return null;
      if (kind === "integer") return integerValue(text);
      if ((kind === "date" || kind === "datetime") && text !== "") {
        const value = kind === "date" ? dateValue(text) : datetimeValue(text);
        entered.unreadable = value === null;
        return value === null ? text : value; // as typed: the server says what is wrong
      }
      return text;
    };
    focusable = input;
  }

  const element =
    wrapper ||
    h(
      "div",
      { class: `field field--${kind}` },
      h("label", { for: id }, labelText, requiredMark),
      control,
      hint,
      error,
    );

  const targets = () => (kind === "multi" ? [...element.querySelectorAll("input")] : [control]);
  return {
    element,
    name: options.name || "",
    kind,
    read,
    focus: () => focusable.focus(),
    setError(message) {
      error.textContent = explained(kind, schema, message, entered);
      error.hidden = false;
      element.classList.add("field--invalid");
      for (const target of targets()) {
        target.setAttribute("aria-invalid", "true");
        if (kind !== "multi") {
          const ids = new Set((target.getAttribute("aria-describedby") || "").split(" "));
          ids.add(errorId);
          target.setAttribute("aria-describedby", [...ids].filter(Boolean).join(" "));
        }
      }
    },
    clearError() {
      error.textContent = "";
      error.hidden = true;
      element.classList.remove("field--invalid");
      for (const target of targets()) target.removeAttribute("aria-invalid");
    },
  };
}

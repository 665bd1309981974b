// Times, sizes and answers as people read them.

const KIND_NAMES = {
  confirm: "Yes or no",
  choice: "Choice",
  multi: "Several choices",
  text: "Text",
  multiline: "Text",
  integer: "Whole number",
  decimal: "Number",
  date: "Date",
  datetime: "Date and time",
  file: "File",
  form: "Form",
};

export function kindName(kind) {
  return KIND_NAMES[kind] || kind;
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "always" });
const MINUTE = 60;
const HOUR = 3600;
const DAY = 24 * HOUR;
// The largest unit that reads naturally: "in 20 hours" rather than "in 1 day" until 22 h.
const STEPS = [
  [45 * MINUTE, MINUTE, "minute"],
  [22 * HOUR, HOUR, "hour"],
  [7 * DAY, DAY, "day"],
  [26 * DAY, 7 * DAY, "week"],
  [320 * DAY, 30 * DAY, "month"],
  [Infinity, 365 * DAY, "year"],
];

/** "3 days ago", "in 2 hours", "just now". */
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

export function when(iso) {
  return absolute.format(new Date(iso));
}

/** A <time> element: relative text, the exact moment in its title. */
export function timeText(iso) {
  return { text: fromNow(iso), title: when(iso) };
}

/** "expires in 2 hours", "no deadline", "deadline passed". */
export function expiryText(iso, now = Date.now()) {
  if (!iso) return "no deadline";
  if (Date.parse(iso) <= now) return "deadline passed";
  return `expires ${fromNow(iso, now)}`;
}

const decimal = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });

/** Sizes in the units people and requesters write them in: 5000000 bytes is "5 MB". */
export function size(bytes) {
  if (bytes < 1000) return `${decimal.format(bytes)} bytes`;
  if (bytes < 1000 * 1000) return `${decimal.format(bytes / 1000)} KB`;
  if (bytes < 1000 * 1000 * 1000) return `${decimal.format(bytes / 1000 / 1000)} MB`;
  return `${decimal.format(bytes / 1000 / 1000 / 1000)} GB`;
}

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

/** One media type in words: "image/png" is "a PNG image". */
export function mediaWords(type) {
  const lowered = String(type).toLowerCase();
  if (MEDIA_WORDS[lowered]) return MEDIA_WORDS[lowered];
  const [main, sub = ""] = lowered.split("/");
  const name = sub.replace(/^(x-|vnd\.)/, "").split(/[.+]/)[0].toUpperCase();
  const noun = { image: "image", audio: "audio file", video: "video", text: "text file" }[main] || "file";
  return /^[AEFHILMNORSX]/.test(name) ? `an ${name} ${noun}` : `a ${name} ${noun}`;
}

/** Whether ``type`` is one of ``accepted`` ("image/png" is one of ["image/*"]). */
export function mediaAccepted(type, accepted) {
  const [main] = String(type).toLowerCase().split("/");
  return accepted.some((entry) => {
    const wanted = String(entry).toLowerCase();
    return wanted === "*/*" || wanted === String(type).toLowerCase() || wanted === `${main}/*`;
  });
}

/** Accepted media types in words: "a PDF or an image". */
export function mediaList(types) {
  const words = [...new Set(types.map(mediaWords))];
  if (words.length <= 1) return words.join("");
  return `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`;
}

/** An amount in ``currency`` (ISO 4217), as the reader's locale writes money. */
export function money(amount, currency) {
  try {
    return new Intl.NumberFormat(undefined, { style: "currency", currency }).format(amount);
  } catch {
    return `${amount} ${currency}`;
  }
}

/** The symbol of ``currency`` in the reader's locale ("€"). */
export function currencySymbol(currency) {
  try {
    const parts = new Intl.NumberFormat(undefined, { style: "currency", currency }).formatToParts(0);
    return (parts.find((part) => part.type === "currency") || {}).value || currency;
  } catch {
    return currency;
  }
}

export function timeZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "your local time";
}

function optionLabel(options, value) {
  const found = (options || []).find((o) => o.value === value);
  return found ? found.label : String(value);
}

/** A field's choices as {value, label}: enum with enumNames, or oneOf/anyOf of const+title. */
export function enumOptions(schema) {
  const items = schema.items || {};
  const listed = schema.oneOf || schema.anyOf || items.oneOf || items.anyOf;
  if (Array.isArray(listed)) {
    return listed
      .filter((entry) => entry && "const" in entry)
      .map((entry) => ({ value: entry.const, label: entry.title || String(entry.const) }));
  }
  const enumValues = schema.enum || items.enum || [];
  const names = schema.enumNames || items.enumNames || [];
  return enumValues.map((value, i) => ({ value, label: names[i] || String(value) }));
}

/**
 * A request's options with their labels, as the person saw them: the rows of its table
 * surface (named by their first cell), else its own options, else its schema's.
 */
export function optionsOf(record) {
  const surface = record.ui_surface;
  if (surface && surface.type === "table" && Array.isArray(surface.rows) && Array.isArray(surface.columns)) {
    const first = surface.columns[0] && surface.columns[0].key;
    const rows = surface.rows
      .filter((row) => row && row.value)
      .map((row) => ({ value: row.value, label: String((row.cells || {})[first] ?? "") || row.value }));
    if (rows.length) return rows;
  }
  if (Array.isArray(record.options) && record.options.length) return record.options;
  return enumOptions(record.response_schema || {});
}

/** One normalized answer as text, for the block's outcome line. */
export function answerText(kind, answer, { options, schema } = {}) {
  if (answer === null || answer === undefined) return "—";
  switch (kind) {
    case "confirm":
      return answer ? "Yes" : "No";
    case "choice":
      return optionLabel(options || enumOptions(schema || {}), answer);
    case "multi": {
      const list = options || enumOptions(schema || {});
      return answer.length ? answer.map((v) => optionLabel(list, v)).join(", ") : "none";
    }
    case "datetime":
      return when(answer);
    case "date":
      return new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeZone: "UTC" }).format(
        new Date(`${answer}T00:00:00Z`),
      );
    case "file":
      return `${answer.name} (${size(answer.size)})`;
    case "decimal":
    case "integer": {
      const currency = schema && schema["x-pawflow-currency"];
      // Decimals may come as exact strings ("42.5"): Intl formats those without rounding.
      const numeric = typeof answer === "number" || /^-?\d+(\.\d+)?$/.test(String(answer));
      return currency && numeric ? money(answer, currency) : String(answer);
    }
    default:
      return String(answer);
  }
}

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

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
const UNITS = [
  ["year", 365 * 24 * 3600],
  ["month", 30 * 24 * 3600],
  ["week", 7 * 24 * 3600],
  ["day", 24 * 3600],
  ["hour", 3600],
  ["minute", 60],
];

/** "3 days ago", "in 2 hours", "now". */
export function fromNow(iso, now = Date.now()) {
  const seconds = (Date.parse(iso) - now) / 1000;
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
  }
  return seconds < 0 ? "just now" : "in less than a minute";
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

export function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function timeZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "your local time";
}

function optionLabel(options, value) {
  const found = (options || []).find((o) => o.value === value);
  return found ? found.label : String(value);
}

/** A field's schema enum labels, as options. */
export function enumOptions(schema) {
  const enumValues = schema.enum || (schema.items && schema.items.enum) || [];
  const names = schema.enumNames || (schema.items && schema.items.enumNames) || [];
  return enumValues.map((value, i) => ({ value, label: names[i] || String(value) }));
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
    default:
      return String(answer);
  }
}

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

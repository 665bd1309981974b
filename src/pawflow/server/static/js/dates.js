// @ts-check
// Dates typed the way the reader's locale writes them. A native date input shows the
// browser's own format, whatever the page's language; these text inputs follow the locale
// (31/12/2025 in en-GB, 12/31/2025 in en-US, 31.12.2025 in de-DE) and also take ISO dates.

const SAMPLE = new Date(2033, 10, 22, 17, 45); // every part distinct: 22, 11, 2033

/** @typedef {"day" | "month" | "year"} DatePart */

/**
 * The order of the parts of a date in the reader's locale, and what separates them.
 * @returns {{order: DatePart[], separator: string}}
 */
function layout() {
  const parts = new Intl.DateTimeFormat(undefined, {
    day: "2-digit",
    month: "2-digit",
    year: "numeric",
  }).formatToParts(SAMPLE);
  /** @type {DatePart[]} */
  const order = [];
  for (const { type } of parts) {
    if (type === "day" || type === "month" || type === "year") order.push(type);
  }
  const literal = parts.find((p) => p.type === "literal");
  return { order, separator: literal ? literal.value.trim() || "/" : "/" };
}

const WORDS = { day: "dd", month: "mm", year: "yyyy" };

/** The locale's date pattern in letters, as a placeholder: "dd/mm/yyyy". */
export function datePattern() {
  const { order, separator } = layout();
  return order.map((part) => WORDS[part]).join(separator);
}

export function dateTimePattern() {
  return `${datePattern()} hh:mm`;
}

/** @param {number} number */
function pad(number, width = 2) {
  return String(number).padStart(width, "0");
}

/**
 * ``date`` (local) as the locale writes it, for examples and defaults.
 * @param {Date} date
 */
export function dateText(date) {
  const { order, separator } = layout();
  const value = { day: pad(date.getDate()), month: pad(date.getMonth() + 1), year: pad(date.getFullYear(), 4) };
  return order.map((part) => value[part]).join(separator);
}

/**
 * A date to show as an example, near ``today``, whose day is past 12 so that it cannot be
 * read with the day and the month swapped (28/02/2026, never 12/02/2026).
 * @param {Date} [today]
 */
export function exampleDate(today = new Date()) {
  if (today.getDate() > 12) return dateText(today);
  return dateText(new Date(today.getFullYear(), today.getMonth(), 28));
}

/**
 * @param {number} year
 * @param {number} month
 * @param {number} day
 */
function valid(year, month, day) {
  const made = new Date(Date.UTC(year, month - 1, day));
  return made.getUTCFullYear() === year && made.getUTCMonth() === month - 1 && made.getUTCDate() === day;
}

/**
 * "31/12/2025" (in the locale's order) or "2025-12-31" as "2025-12-31"; null if neither.
 * @param {string} text
 */
export function parseDate(text) {
  const trimmed = text.trim();
  const iso = /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(trimmed);
  let year;
  let month;
  let day;
  if (iso) {
    [year, month, day] = iso.slice(1).map(Number);
  } else {
    const found = /^(\d{1,4})\D+(\d{1,2})\D+(\d{1,4})$/.exec(trimmed);
    if (!found) return null;
    const values = { day: 0, month: 0, year: 0 };
    layout().order.forEach((part, i) => {
      values[part] = Number(found[i + 1]);
    });
    ({ year, month, day } = values);
    if (year < 100) year += 2000;
  }
  if (!valid(year, month, day)) return null;
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
}

/**
 * "31/12/2025 17:45" (local) or "2025-12-31T17:45" as a Date; null if neither.
 * @param {string} text
 */
export function parseDateTime(text) {
  const found = /^(.+?)(?:\s+|T)(\d{1,2})[:.h](\d{2})$/.exec(text.trim());
  if (!found) return null;
  const day = parseDate(found[1]);
  const hour = Number(found[2]);
  const minute = Number(found[3]);
  if (!day || hour > 23 || minute > 59) return null;
  const [year, month, date] = day.split("-").map(Number);
  return new Date(year, month - 1, date, hour, minute);
}

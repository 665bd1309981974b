// Which editor UI answers which request: a pure function of the record, so every kind and
// every surface case is decided (and tested) in one place. Nothing here validates an answer:
// the server does, and its refusals are shown back where the person typed.

import type { InboxWhy, Interaction, Json, JsonObject, Kind, ToolDecision } from "./wire";
import { KINDS, SURFACE_CONTRACT, TOOL_DECISIONS } from "./wire";

export interface PickItem {
  label: string;
  description?: string;
  value: Json;
  picked?: boolean;
}

export type Ui =
  | { ui: "quickPick"; canPickMany: boolean; items: PickItem[]; placeholder: string }
  | { ui: "inputBox"; prompt: string; placeholder: string }
  | { ui: "webview"; view: "multiline" | "form" | "surface" }
  | { ui: "openDialog"; mediaTypes: string[]; maxBytes: number | null }
  | { ui: "handoff"; reason: string };

/** How a surface is shown: not at all, drawn, replaced by its fallback kind, or handed off. */
export type SurfaceMode = "none" | "render" | "fallback" | "handoff";

export type UiDescriptor = Ui & {
  kind: string;
  surface: SurfaceMode;
  /** Said to the person beside the UI (why the rich view is missing, constraints…). */
  note: string | null;
};

const KNOWN = new Set<string>(KINDS);
const RENDERED_SURFACES: Record<string, readonly Kind[]> = {
  // A table answers by picking rows; a card by its action buttons.
  table: ["choice", "multi"],
  card: ["confirm", "choice"],
  // A tool approval answers its confirm with a decision (approve, edit, reject, respond).
  tool_approval: ["confirm"],
};

const WHY: Record<InboxWhy, string> = {
  own: "asked by you",
  others: "waiting for others",
  mine: "assigned to you",
  groups: "assigned to your group",
  claimed: "claimed by you",
};

/** Why an inbox item waits for the person, in words. */
export function whyText(why: InboxWhy): string {
  return WHY[why] ?? why;
}

/** The decisions a tool approval offers, in the order they are shown (known ones only). */
export function toolDecisions(surface: JsonObject): ToolDecision[] {
  const offered = Array.isArray(surface.decisions) ? surface.decisions : [...TOOL_DECISIONS];
  return TOOL_DECISIONS.filter((d) => offered.includes(d));
}

const PLACEHOLDERS: Partial<Record<Kind, string>> = {
  text: "Your answer",
  integer: "A whole number, e.g. 42",
  decimal: "A number, e.g. 3.75",
  date: "YYYY-MM-DD",
  datetime: "YYYY-MM-DDTHH:MM with a time zone, e.g. 2030-01-31T09:30+01:00 or …Z",
};

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

/** The schema's constraints in words, so nobody has to learn them from an error. */
export function hints(kind: string, schema: JsonObject): string[] {
  const found: string[] = [];
  const num = (key: string): number | null =>
    typeof schema[key] === "number" ? (schema[key] as number) : null;
  if (typeof schema.description === "string") found.push(schema.description);
  if (kind === "text" || kind === "multiline") {
    const min = num("minLength");
    const max = num("maxLength");
    if (min && max) found.push(`${min} to ${plural(max, "character")}`);
    else if (min) found.push(`at least ${plural(min, "character")}`);
    else if (max) found.push(`at most ${plural(max, "character")}`);
    if (schema.format === "email") found.push("an email address");
    if (schema.format === "uri") found.push("a link such as https://…");
    if (typeof schema.pattern === "string") found.push(`matching ${schema.pattern}`);
  }
  if (kind === "integer" || kind === "decimal") {
    const min = num("minimum");
    const max = num("maximum");
    if (min !== null && max !== null) found.push(`from ${min} to ${max}`);
    else if (min !== null) found.push(`at least ${min}`);
    else if (max !== null) found.push(`at most ${max}`);
  }
  if (kind === "multi") {
    const min = num("minItems");
    const max = num("maxItems");
    if (min) found.push(`choose at least ${min}`);
    if (max) found.push(`choose at most ${max}`);
  }
  return found;
}

function options(record: Interaction): PickItem[] {
  return (record.options ?? []).map((o) => ({
    label: o.label,
    description: o.label === o.value ? undefined : o.value,
    value: o.value,
  }));
}

/** The native UI of a kind (no surface involved); null for a kind this client does not know. */
function native(record: Interaction, kind: string): Ui | null {
  const schema = record.response_schema;
  // The title is the pick's or the box's own title: the prompt carries the message.
  switch (kind) {
    case "confirm":
      return {
        ui: "quickPick",
        canPickMany: false,
        placeholder: record.message,
        items: [
          { label: "Yes", value: true },
          { label: "No", value: false },
        ],
      };
    case "choice":
      return { ui: "quickPick", canPickMany: false, items: options(record), placeholder: record.message };
    case "multi":
      return { ui: "quickPick", canPickMany: true, items: options(record), placeholder: record.message };
    case "text":
    case "integer":
    case "decimal":
    case "date":
    case "datetime":
      return { ui: "inputBox", prompt: record.message, placeholder: PLACEHOLDERS[kind] ?? "" };
    case "multiline":
      return { ui: "webview", view: "multiline" };
    case "form":
      return { ui: "webview", view: "form" };
    case "file": {
      const types = schema.mediaTypes;
      return {
        ui: "openDialog",
        mediaTypes: Array.isArray(types) ? types.filter((t): t is string => typeof t === "string") : ["*/*"],
        maxBytes: typeof schema.maxBytes === "number" ? schema.maxBytes : null,
      };
    }
    default:
      return null;
  }
}

function handoff(kind: string, surface: SurfaceMode, reason: string): UiDescriptor {
  return { ui: "handoff", reason, kind, surface, note: reason };
}

/** Decide how `record` is answered in the editor. Never a silent accept: when nothing here
 * can answer it faithfully, the descriptor is a hand-off to the web chat. */
export function uiFor(record: Interaction): UiDescriptor {
  const kind: string = record.kind;
  const surface = record.ui_surface;
  const hinted = hints(kind, record.response_schema);
  const note = hinted.length ? hinted.join(" · ") : null;
  if (!KNOWN.has(kind)) {
    return handoff(kind, surface ? "handoff" : "none", `This editor cannot answer a "${kind}" request.`);
  }
  if (surface === null || surface === undefined) {
    return { ...(native(record, kind) as Ui), kind, surface: "none", note };
  }
  const fallback = surface.fallback;
  if (typeof fallback !== "string" || fallback !== kind) {
    // The surface's meaning is unclear: the web chat, where the publisher's intent is
    // checked, is the only honest place to answer it.
    return handoff(kind, "handoff", "This request's rich view has no usable fallback here.");
  }
  const type = surface.type;
  const renders =
    surface.contract === SURFACE_CONTRACT &&
    typeof type === "string" &&
    (RENDERED_SURFACES[type] ?? []).includes(kind as Kind);
  if (renders) {
    return { ui: "webview", view: "surface", kind, surface: "render", note };
  }
  const plain = native(record, fallback) as Ui;
  const why = "The rich view of this request is not available in the editor; it is asked plainly.";
  return { ...plain, kind, surface: "fallback", note: note ? `${why} ${note}` : why };
}

/** What the person typed in an input box, as the JSON value the kind expects. Only the
 * shape is converted (a whole number becomes a number); the server judges the rest. */
export function parseTyped(kind: string, text: string): Json {
  const trimmed = text.trim();
  if (kind === "integer" && /^[+-]?\d+$/.test(trimmed)) {
    const value = Number(trimmed);
    if (Number.isSafeInteger(value)) return value;
  }
  if (kind === "text") return text;
  return trimmed;
}

/** The label of a request in lists: its title, else the start of its message. */
export function summary(record: Interaction): string {
  const text = record.title || record.message;
  const line = text.split("\n", 1)[0] ?? "";
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

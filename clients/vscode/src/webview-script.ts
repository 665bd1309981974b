// The script of the webview page. It is serialized into the page with
// `webviewMain.toString()`, so it must stay self-contained: no imports, no outer names.

/* eslint-disable */
export function webviewMain(): void {
  type Json = any;
  interface Field {
    name: string;
    kind: string;
    element: HTMLElement;
    read: () => Json;
    file?: () => File | null;
    error: HTMLElement;
    focus: () => void;
    invalid: (on: boolean) => void;
  }

  const vscode = (window as any).acquireVsCodeApi();
  const { record, note } = JSON.parse(document.getElementById("pawflow-data")!.textContent!);
  const root = document.getElementById("root")!;
  let counter = 0;
  const uid = (prefix: string) => `${prefix}-${++counter}`;

  function h(tag: string, attrs: Record<string, any> = {}, ...children: any[]): HTMLElement {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") el.className = value;
      else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
      else el.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  }

  function kindOf(schema: any): string | null {
    const marker = schema["x-pawflow-kind"];
    if (typeof marker === "string") return marker;
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

  function choices(schema: any): { value: string; label: string }[] {
    const source = schema.type === "array" ? schema.items || {} : schema;
    const values: string[] = source.enum || [];
    const labels: string[] = source.enumNames || [];
    return values.map((value, i) => ({ value, label: labels[i] || value }));
  }

  function integerValue(text: string): Json {
    if (/^[+-]?\d+$/.test(text.trim())) {
      const n = Number(text.trim());
      if (Number.isSafeInteger(n)) return n;
    }
    return text.trim();
  }

  function datetimeValue(text: string): Json {
    if (!text) return "";
    const moment = new Date(text);
    return Number.isNaN(moment.getTime()) ? text : moment.toISOString();
  }

  /** One input of a form (or the single textarea of a multiline request). */
  function field(name: string, kind: string, schema: any, label: string, required: boolean): Field {
    const id = uid("field");
    const errorId = uid("error");
    const hintId = uid("hint");
    const error = h("p", { class: "field-error", id: errorId, hidden: true });
    const hintText = schema.description || null;
    const hint = hintText ? h("p", { class: "hint", id: hintId }, hintText) : null;
    const described = [hint ? hintId : null, errorId].filter(Boolean).join(" ");
    const mark = required ? h("span", { class: "required", title: "required" }, " *") : null;
    const common = { id, name, "aria-describedby": described, "aria-required": required ? "true" : null };
    let control: HTMLElement;
    let read: () => Json;
    let file: (() => File | null) | undefined;
    let element: HTMLElement;
    if (kind === "confirm") {
      control = h("input", { ...common, type: "checkbox" });
      read = () => (control as HTMLInputElement).checked;
      element = h("div", { class: "field field--check" }, control, " ", h("label", { for: id }, label, mark), hint, error);
    } else if (kind === "multi") {
      const boxes = choices(schema).map((o) => {
        const boxId = uid("option");
        return h(
          "div",
          { class: "option-line" },
          h("input", { type: "checkbox", id: boxId, value: o.value, name }),
          " ",
          h("label", { for: boxId }, o.label),
        );
      });
      control = h("fieldset", { class: "field", "aria-describedby": described }, h("legend", {}, label, mark), boxes, hint, error);
      read = () => {
        const chosen = [...control.querySelectorAll("input:checked")].map((b) => (b as HTMLInputElement).value);
        return chosen.length ? chosen : null;
      };
      element = control;
    } else {
      if (kind === "choice") {
        control = h(
          "select",
          common,
          h("option", { value: "" }, required ? "Choose…" : "—"),
          choices(schema).map((o) => h("option", { value: o.value }, o.label)),
        );
      } else if (kind === "multiline") {
        control = h("textarea", { ...common, rows: 6 });
      } else if (kind === "date") {
        control = h("input", { ...common, type: "date" });
      } else if (kind === "datetime") {
        control = h("input", { ...common, type: "datetime-local" });
      } else if (kind === "file") {
        control = h("input", { ...common, type: "file" });
      } else {
        const mode = kind === "integer" ? "numeric" : kind === "decimal" ? "decimal" : null;
        control = h("input", { ...common, type: "text", inputmode: mode });
      }
      const value = () => (control as HTMLInputElement).value;
      if (kind === "file") {
        file = () => ((control as HTMLInputElement).files || [])[0] || null;
        read = () => null;
      } else if (kind === "integer") read = () => (value() === "" ? null : integerValue(value()));
      else if (kind === "decimal") read = () => (value().trim() === "" ? null : value().trim());
      else if (kind === "datetime") read = () => (value() === "" ? null : datetimeValue(value()));
      else read = () => (value() === "" ? null : value());
      element = h("div", { class: "field" }, h("label", { for: id }, label, mark), control, hint, error);
    }
    return {
      name,
      kind,
      element,
      read,
      file,
      error,
      focus: () => ((control.querySelector("input") as HTMLElement) || control).focus(),
      invalid: (on: boolean) => {
        if (on) control.setAttribute("aria-invalid", "true");
        else control.removeAttribute("aria-invalid");
      },
    };
  }

  let fields: Field[] = [];
  const toolApproval = Boolean(record.ui_surface && record.ui_surface.type === "tool_approval");
  let formError: HTMLElement | null = null;
  const buttons: HTMLButtonElement[] = [];

  function busy(on: boolean) {
    for (const b of buttons) b.disabled = on;
  }

  function clearErrors() {
    if (formError) {
      formError.hidden = true;
      formError.textContent = "";
    }
    for (const f of fields) {
      f.error.hidden = true;
      f.error.textContent = "";
      f.invalid(false);
    }
  }

  function showErrors(message: string, errors: { path: string; message: string }[]) {
    clearErrors();
    const general: string[] = [];
    let first: Field | null = null;
    for (const e of errors) {
      // A path names the field first ("replicas", "tags.0"): the error goes beside it.
      const name = e.path.split(/[.[]/, 1)[0];
      const byName = record.kind === "form" || toolApproval;
      const target = byName ? fields.find((f) => f.name === name) : fields[0];
      if (target && (e.path !== "" || !byName)) {
        target.error.textContent = target.error.textContent ? `${target.error.textContent}; ${e.message}` : e.message;
        target.error.hidden = false;
        target.invalid(true);
        first = first || target;
      } else general.push(e.path ? `${e.path}: ${e.message}` : e.message);
    }
    if (!errors.length) general.push(message);
    if (formError && general.length) {
      formError.textContent = general.join("; ");
      formError.hidden = false;
    }
    if (first) first.focus();
  }

  async function fileData(f: File) {
    const bytes = new Uint8Array(await f.arrayBuffer());
    let text = "";
    for (let i = 0; i < bytes.length; i += 0x8000) {
      text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    }
    return { name: f.name, mediaType: f.type || "application/octet-stream", base64: btoa(text) };
  }

  async function submit(answer: Json) {
    clearErrors();
    busy(true);
    const files: Record<string, any> = {};
    for (const f of fields) {
      const chosen = f.file ? f.file() : null;
      if (chosen) files[f.name] = await fileData(chosen);
    }
    vscode.postMessage({ type: "submit", answer, files });
  }

  function button(label: string, onclick: () => void, cls: string | null = null, type = "button") {
    const b = h("button", { type, class: cls, onclick }, label) as HTMLButtonElement;
    buttons.push(b);
    return b;
  }

  function formAnswer(): Json {
    const answer: Record<string, Json> = {};
    for (const f of fields) {
      const value = f.read();
      if (value !== null) answer[f.name] = value;
    }
    return answer;
  }

  function renderTable(surface: any) {
    const multi = record.kind === "multi";
    const columns: any[] = surface.columns || [];
    const head = h("tr", {}, multi ? h("th", {}, h("span", { class: "sr" }, "")) : null, columns.map((c) => h("th", { class: c.align || "start" }, c.label)), multi ? null : h("th", {}, ""));
    const rows = (surface.rows || []).map((row: any) => {
      const cells = columns.map((c) => {
        const v = row.cells[c.key];
        return h("td", { class: c.align || "start" }, v === null || v === undefined ? "" : String(v));
      });
      const name = String(row.cells[columns[0].key] ?? row.value);
      if (multi) {
        const box = h("input", { type: "checkbox", value: row.value, "aria-label": name });
        return h("tr", {}, h("td", {}, box), cells);
      }
      return h("tr", {}, cells, h("td", {}, button("Choose", () => submit(row.value), null)));
    });
    const table = h("table", {}, h("thead", {}, head), h("tbody", {}, rows));
    const error = h("p", { class: "field-error", hidden: true });
    fields = [
      {
        name: "answer",
        kind: record.kind,
        element: table,
        read: () => [...table.querySelectorAll("input:checked")].map((b) => (b as HTMLInputElement).value),
        error,
        focus: () => (table.querySelector("input,button") as HTMLElement | null)?.focus(),
        invalid: () => undefined,
      },
    ];
    if (surface.title) root.append(h("h2", {}, surface.title));
    root.append(table, error);
    if (multi) root.append(h("div", { class: "actions" }, button("Send", () => submit(fields[0].read()), "primary")));
  }

  function renderCard(surface: any) {
    const pairs = (surface.fields || []).flatMap((f: any) => [h("dt", {}, f.label), h("dd", {}, f.value)]);
    const error = h("p", { class: "field-error", hidden: true });
    const card = h(
      "section",
      { class: "card" },
      surface.title ? h("h2", {}, surface.title) : null,
      surface.subtitle ? h("p", { class: "subtitle" }, surface.subtitle) : null,
      surface.body ? h("p", { class: "message" }, surface.body) : null,
      pairs.length ? h("dl", {}, pairs) : null,
      h(
        "div",
        { class: "actions" },
        (surface.actions || []).map((a: any) =>
          button(a.label, () => submit(a.value), a.style === "primary" ? "primary" : a.style === "danger" ? "danger" : null),
        ),
      ),
      error,
    );
    fields = [{ name: "answer", kind: record.kind, element: card, read: () => null, error, focus: () => (card.querySelector("button") as HTMLElement | null)?.focus(), invalid: () => undefined }];
    root.append(card);
  }

  function box(name: string, label: string, value: string, rows: number, hint: string | null = null): Field {
    const id = uid(name);
    const error = h("p", { class: "field-error", id: `${id}-error`, hidden: true, role: "alert" });
    const area = h("textarea", { id, name, rows: String(rows), spellcheck: "false" }) as HTMLTextAreaElement;
    area.value = value;
    const element = h("div", { class: "field" }, h("label", { for: id }, label), hint ? h("p", { class: "hint" }, hint) : null, area, error);
    return {
      name,
      kind: "multiline",
      element,
      read: () => area.value,
      error,
      focus: () => area.focus(),
      invalid: (on: boolean) => {
        if (on) {
          area.setAttribute("aria-invalid", "true");
          area.setAttribute("aria-describedby", `${id}-error`);
        } else area.removeAttribute("aria-invalid");
      },
    };
  }

  function renderToolApproval(surface: any) {
    const known = ["approve", "edit", "reject", "respond"];
    const offered: string[] = (Array.isArray(surface.decisions) ? surface.decisions : known).filter((d: string) => known.includes(d));
    const proposed = JSON.stringify(surface.arguments ?? {}, null, 2);
    const args = box("arguments", `Arguments of ${surface.tool}`, proposed, Math.min(16, proposed.split("\n").length + 1), offered.includes("edit") ? "Edit them as JSON to run the call with other arguments." : null);
    const area = args.element.querySelector("textarea") as HTMLTextAreaElement;
    if (!offered.includes("edit")) area.readOnly = true;
    const reason = box("reason", "Reason (optional)", "", 2);
    const text = box("text", "Result to give instead", "", 3);
    fields = [args];
    const section = h(
      "section",
      { class: "card tool-approval" },
      h("h2", {}, surface.title || `Run ${surface.tool}?`),
      h("p", { class: "subtitle" }, `Tool: ${surface.tool}`),
      surface.description ? h("p", { class: "message" }, surface.description) : null,
      args.element,
    );
    // As in the web chat: an approval may ask not to be asked again for this very call here.
    const always = h("input", { type: "checkbox", id: uid("always"), name: "always" }) as HTMLInputElement;
    const alwaysPart = (): Record<string, Json> => (always.checked ? { always: "conversation" } : {});
    if (offered.includes("approve") || offered.includes("edit")) {
      section.append(h("p", { class: "always" }, always, h("label", { for: always.id }, "Always allow this call in this conversation")));
    }
    const actions = h("div", { class: "actions" });
    if (offered.includes("approve")) actions.append(button("Approve", () => submit({ decision: "approve", ...alwaysPart() }), "primary"));
    if (offered.includes("edit")) {
      actions.append(
        button("Approve with my edits", () => {
          let edited: Json;
          try {
            edited = JSON.parse(area.value);
          } catch (e) {
            showErrors("", [{ path: "arguments", message: `not valid JSON: ${(e as Error).message}` }]);
            return;
          }
          submit({ decision: "edit", arguments: edited, ...alwaysPart() });
        }),
      );
    }
    section.append(actions);
    if (offered.includes("reject")) {
      fields.push(reason);
      section.append(
        reason.element,
        h("div", { class: "actions" }, button("Reject", () => {
          const why = (reason.read() as string).trim();
          submit(why ? { decision: "reject", reason: why } : { decision: "reject" });
        }, "danger")),
      );
    }
    if (offered.includes("respond")) {
      fields.push(text);
      section.append(text.element, h("div", { class: "actions" }, button("Respond instead", () => submit({ decision: "respond", text: text.read() }))));
    }
    root.append(section);
  }

  function render() {
    root.append(h("h1", {}, record.title || "A question for you"), h("p", { class: "message" }, record.message));
    if (note) root.append(h("p", { class: "note" }, note));
    formError = h("p", { class: "form-error", role: "alert", hidden: true });
    root.append(formError);
    const surface = record.ui_surface;
    if (surface && surface.type === "table") return renderTable(surface);
    if (surface && surface.type === "card") return renderCard(surface);
    if (toolApproval) return renderToolApproval(surface);
    if (record.kind === "multiline") {
      const f = field("answer", "multiline", record.response_schema, "Your answer", true);
      fields = [f];
      const form = h("form", { onsubmit: (e: Event) => (e.preventDefault(), submit(f.read() ?? "")) }, f.element, button("Send", () => undefined, null, "submit"));
      f.element.querySelector("textarea")!.addEventListener("keydown", (e: any) => {
        if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
          e.preventDefault();
          submit(f.read() ?? "");
        }
      });
      root.append(form);
      return;
    }
    if (record.kind === "form") {
      const schema = record.response_schema || {};
      const required = new Set(schema.required || []);
      fields = Object.entries(schema.properties || {}).map(([name, prop]: [string, any]) =>
        field(name, kindOf(prop) || "text", prop, prop.title || name, required.has(name)),
      );
      const form = h(
        "form",
        { onsubmit: (e: Event) => (e.preventDefault(), submit(formAnswer())), novalidate: true },
        fields.map((f) => f.element),
        button("Send", () => undefined, null, "submit"),
      );
      root.append(form);
      return;
    }
    root.append(h("p", {}, "This request cannot be answered here."), button("Open in the web chat", () => vscode.postMessage({ type: "handoff" })));
  }

  window.addEventListener("message", (event: MessageEvent) => {
    const message = event.data;
    if (!message || typeof message !== "object") return;
    if (message.type === "refused") {
      busy(false);
      showErrors(message.message, message.errors || []);
    } else if (message.type === "closed") {
      clearErrors();
      root.replaceChildren(
        h("h1", {}, record.title || "A question for you"),
        h("p", { class: "message" }, record.message),
        h("p", { class: "outcome", role: "status" }, message.status === "answered" ? "Answered." : `This request was ${message.status}.`),
      );
    }
  });

  render();
  const first = root.querySelector("input, select, textarea, button") as HTMLElement | null;
  if (first) first.focus();
}

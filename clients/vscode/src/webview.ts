// The webview panel's page: multiline answers, forms (a field per property, the server's
// field errors beside the fields) and rich surfaces (a table to pick rows from, a card with
// action buttons). The page only collects what the person entered and posts it to the
// extension, which sends it to the server; a refusal comes back as `refused` and is shown
// in place while the request stays open. Colours follow the editor's theme variables.

import type { Interaction } from "./wire";
import { webviewMain } from "./webview-script";

/** Messages the page posts to the extension. */
export type FromPage =
  | { type: "submit"; answer: unknown; files: Record<string, PageFile> }
  | { type: "handoff" };

/** A file chosen in a form field: uploaded by the extension before the answer is sent. */
export interface PageFile {
  name: string;
  mediaType: string;
  base64: string;
}

/** Messages the extension posts to the page. */
export type ToPage =
  | { type: "refused"; message: string; errors: { path: string; message: string }[] }
  | { type: "closed"; status: string };

export interface PageOptions {
  nonce: string;
  /** The webview's `cspSource` (where styles may come from); none outside the editor. */
  cspSource?: string;
  /** Said above the answer (constraints, why a rich view is missing). */
  note?: string | null;
}

function escapeJson(value: unknown): string {
  // Inside a <script> element: nothing may close it or start a comment.
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

function escapeAttr(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `
:root { color-scheme: light dark; }
body {
  font-family: var(--vscode-font-family, system-ui, sans-serif);
  font-size: var(--vscode-font-size, 13px);
  color: var(--vscode-foreground, #1f1f1f);
  background: var(--vscode-editor-background, #ffffff);
  margin: 0; padding: 16px 20px; max-width: 760px;
}
h1 { font-size: 1.3em; margin: 0 0 8px; font-weight: 600; }
.message { white-space: pre-wrap; margin: 0 0 12px; line-height: 1.45; }
.note, .hint { color: var(--vscode-descriptionForeground, #616161); margin: 4px 0 10px; }
label, legend { display: block; font-weight: 600; margin-bottom: 4px; }
.field { margin: 0 0 14px; border: 0; padding: 0; }
.field--check label { display: inline; font-weight: 400; }
.option-line label { display: inline; font-weight: 400; }
input[type=text], input[type=date], input[type=datetime-local], select, textarea {
  width: 100%; box-sizing: border-box; padding: 5px 7px; font: inherit;
  color: var(--vscode-input-foreground, inherit);
  background: var(--vscode-input-background, #fff);
  border: 1px solid var(--vscode-input-border, var(--vscode-panel-border, #c8c8c8));
  border-radius: 2px;
}
textarea { min-height: 120px; resize: vertical; }
[aria-invalid=true] { border-color: var(--vscode-inputValidation-errorBorder, #be1100) !important; }
.field-error, .form-error {
  color: var(--vscode-errorForeground, #be1100); margin: 4px 0 0;
}
.form-error { margin: 0 0 12px; }
.required { color: var(--vscode-errorForeground, #be1100); }
button {
  font: inherit; padding: 5px 14px; margin: 0 6px 6px 0; cursor: pointer; border-radius: 2px;
  border: 1px solid var(--vscode-button-border, transparent);
  color: var(--vscode-button-secondaryForeground, #1f1f1f);
  background: var(--vscode-button-secondaryBackground, #e5e5e5);
}
button.primary, button[type=submit] {
  color: var(--vscode-button-foreground, #fff); background: var(--vscode-button-background, #005fb8);
}
button.danger { color: #fff; background: var(--vscode-errorForeground, #be1100); }
button:disabled { opacity: .6; cursor: default; }
button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible {
  outline: 1px solid var(--vscode-focusBorder, #005fb8); outline-offset: 1px;
}
table { border-collapse: collapse; width: 100%; margin: 0 0 12px; }
th, td {
  text-align: start; padding: 5px 8px;
  border-bottom: 1px solid var(--vscode-panel-border, #e0e0e0);
}
th { font-weight: 600; }
td.end, th.end { text-align: end; } td.center, th.center { text-align: center; }
.card { border: 1px solid var(--vscode-panel-border, #e0e0e0); border-radius: 4px; padding: 12px 14px; margin: 0 0 12px; }
.card h2 { font-size: 1.1em; margin: 0 0 2px; }
.subtitle { color: var(--vscode-descriptionForeground, #616161); margin: 0 0 8px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 8px 0; }
dt { font-weight: 600; } dd { margin: 0; }
.outcome { font-weight: 600; }
.actions { margin-top: 6px; }
`;

/** The whole page for `record`, as the webview panel shows it. */
export function renderPage(record: Interaction, options: PageOptions): string {
  const nonce = escapeAttr(options.nonce);
  const styleSource = options.cspSource ? ` ${escapeAttr(options.cspSource)}` : "";
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'${styleSource}`,
    `script-src 'nonce-${nonce}'`,
    "img-src data:",
  ].join("; ");
  const data = { record, note: options.note ?? null };
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeAttr(record.title || "PawFlow request")}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main id="root" aria-live="polite"></main>
<script type="application/json" id="pawflow-data">${escapeJson(data)}</script>
<script nonce="${nonce}">(${webviewMain.toString()})();</script>
</body>
</html>`;
}

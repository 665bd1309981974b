// The webview page in Debian's chromium (Playwright, no downloaded browser), wired to a real
// server the way the extension wires it: what the page posts is sent with `submitFromPage`,
// and the outcome is posted back. Refused answers show their field errors beside the fields
// and the request stays pending; accepted ones are stored normalized.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, before, describe, test } from "node:test";

import { chromium, type Browser, type Page } from "playwright-core";

import { submitFromPage, toPage } from "../src/answer";
import { PawflowClient } from "../src/client";
import { renderPage, type FromPage } from "../src/webview";
import type { Interaction, JsonObject, RequestInteraction } from "../src/wire";
import { Served, eventually } from "./server";

const CHROMIUM = process.env.PAWFLOW_CHROMIUM ?? "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
const missing = !existsSync(CHROMIUM);
if (missing && process.env.CI === "true") {
  throw new Error(`${CHROMIUM} is missing (apt-get install chromium)`);
}

let served: Served;
let ann: PawflowClient;
let conversation: string;
let browser: Browser;
const pageErrors: string[] = [];
before(async () => {
  if (missing) return;
  [served, browser] = await Promise.all([
    Served.start(),
    chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }),
  ]);
  ann = await served.client();
  conversation = (await ann.action("create_conversation", { title: "Webview" })).conversation.id;
});
after(async () => {
  await browser?.close();
  await served?.stop();
  assert.deepEqual(pageErrors, [], "the page raised script errors");
});

async function ask(body: Omit<RequestInteraction, "conversation_id">): Promise<Interaction> {
  return (await ann.action("request_interaction", { conversation_id: conversation, ...body })).interaction;
}

/** The page of `record` in chromium, answered through the real server. */
async function open(record: Interaction, note: string | null = null): Promise<{ page: Page; posted: FromPage[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  const posted: FromPage[] = [];
  await page.exposeFunction("__post", async (message: FromPage) => {
    posted.push(message);
    if (message.type !== "submit") return;
    const reply = toPage(await submitFromPage(ann, record, message));
    await page.evaluate((data) => window.postMessage(data, "*"), reply);
  });
  // The editor provides acquireVsCodeApi; here a stub hands each message to the test.
  const stub = `<script nonce="n0nce">window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__post(m) });</script>`;
  const html = renderPage(record, { nonce: "n0nce", note }).replace("<head>", `<head>${stub}`);
  await page.setContent(html);
  page.on("close", () => pageErrors.push(...errors));
  return { page, posted };
}

const RELEASE_FORM = {
  type: "object",
  properties: {
    version: { type: "string", title: "Version", pattern: "^v\\d+$", description: "like v12" },
    replicas: { type: "integer", title: "Replicas", minimum: 1, maximum: 9 },
    region: { type: "string", title: "Region", enum: ["eu", "us"], enumNames: ["Europe", "America"] },
    notify: { type: "boolean", title: "Notify the team" },
    starts: { type: "string", format: "date", title: "Start date" },
  },
  required: ["version", "replicas", "region"],
};

describe("the webview page", { skip: missing ? `${CHROMIUM} is missing` : false, timeout: 120_000 }, () => {
  test("a form: field errors beside the fields, the request pending, then a normalized answer", async () => {
    const record = await ask({ kind: "form", message: "Release details", title: "Release", response_schema: RELEASE_FORM });
    const { page } = await open(record);
    try {
      assert.equal(await page.getByRole("heading", { level: 1 }).textContent(), "Release");
      await page.getByLabel("Version").fill("twelve");
      await page.getByLabel("Replicas").fill("12");
      await page.getByLabel("Region").selectOption("eu");
      await page.getByRole("button", { name: "Send" }).click();

      const versionError = page.locator(".field", { has: page.getByLabel("Version") }).locator(".field-error");
      const replicasError = page.locator(".field", { has: page.getByLabel("Replicas") }).locator(".field-error");
      await versionError.waitFor({ state: "visible" });
      assert.match((await versionError.textContent()) ?? "", /expected format/);
      assert.match((await replicasError.textContent()) ?? "", /9/);
      assert.equal(await page.getByLabel("Version").getAttribute("aria-invalid"), "true");
      assert.equal(await page.getByLabel("Region").getAttribute("aria-invalid"), null);
      assert.equal(await page.locator(".field-error:visible").count(), 2);
      assert.equal((await ann.get(record.id)).status, "pending");
      // The error is tied to its input for assistive technology.
      const described = (await page.getByLabel("Version").getAttribute("aria-describedby")) ?? "";
      assert.ok(described.split(" ").includes((await versionError.getAttribute("id")) ?? "-"));

      await page.getByLabel("Version").fill("v12");
      await page.getByLabel("Replicas").fill("3");
      await page.getByLabel("Notify the team").check();
      await page.getByLabel("Start date").fill("2030-01-31");
      await page.getByRole("button", { name: "Send" }).click();
      await page.getByRole("status").waitFor();
      assert.equal(await page.getByRole("status").textContent(), "Answered.");
      const stored = await ann.get(record.id);
      assert.deepEqual(stored.answer, { version: "v12", replicas: 3, region: "eu", notify: true, starts: "2030-01-31" });
    } finally {
      await page.close();
    }
  });

  test("a multiline answer keeps its line breaks; Ctrl+Enter sends; a refusal shows in place", async () => {
    const record = await ask({
      kind: "multiline",
      message: "Release notes?",
      response_schema: { type: "string", minLength: 10 },
    });
    const { page } = await open(record, "at least 10 characters");
    try {
      assert.equal(await page.locator(".note").textContent(), "at least 10 characters");
      const box = page.getByLabel("Your answer");
      await box.fill("short");
      await box.press("Control+Enter");
      const error = page.locator(".field-error");
      await error.waitFor({ state: "visible" });
      assert.match((await error.textContent()) ?? "", /10/);
      assert.equal((await ann.get(record.id)).status, "pending");
      await box.fill("Fixed the export.\nFaster start.");
      await page.getByRole("button", { name: "Send" }).click();
      await page.getByRole("status").waitFor();
      assert.equal((await ann.get(record.id)).answer, "Fixed the export.\nFaster start.");
    } finally {
      await page.close();
    }
  });

  test("a form's file field is uploaded, then answered with the upload", async () => {
    const record = await ask({
      kind: "form",
      message: "Attach the log",
      response_schema: {
        type: "object",
        properties: { log: { "x-pawflow-kind": "file", title: "Log file", mediaTypes: ["text/plain"], maxBytes: 100 } },
        required: ["log"],
      },
    });
    const { page } = await open(record);
    try {
      await page.getByLabel("Log file").setInputFiles({ name: "big.txt", mimeType: "text/plain", buffer: Buffer.alloc(200, 97) });
      await page.getByRole("button", { name: "Send" }).click();
      const error = page.locator(".field-error");
      await error.waitFor({ state: "visible" });
      assert.match((await error.textContent()) ?? "", /100 bytes/);
      await page.getByLabel("Log file").setInputFiles({ name: "run.txt", mimeType: "text/plain", buffer: Buffer.from("ok\n") });
      await page.getByRole("button", { name: "Send" }).click();
      await page.getByRole("status").waitFor();
      const stored = await ann.get(record.id);
      const log = (stored.answer as { log: { name: string; size: number } }).log;
      assert.deepEqual([log.name, log.size], ["run.txt", 3]);
    } finally {
      await page.close();
    }
  });

  test("a table surface answers a multi by its rows; a card by its actions", async () => {
    const table = await ask({
      kind: "multi",
      message: "Which flights?",
      options: ["af", "kl", "lh"],
      ui_surface: {
        contract: "pawflow.ui-surface.v1",
        type: "table",
        title: "Flights to Berlin",
        fallback: "multi",
        columns: [
          { key: "flight", label: "Flight" },
          { key: "price", label: "Price", align: "end" },
        ],
        rows: [
          { value: "af", cells: { flight: "AF 1234", price: "€142" } },
          { value: "kl", cells: { flight: "KL 1008", price: "€96" } },
          { value: "lh", cells: { flight: "LH 2", price: "€120" } },
        ],
      },
    });
    const first = await open(table);
    try {
      assert.equal(await first.page.getByRole("columnheader", { name: "Price" }).count(), 1);
      await first.page.getByRole("checkbox", { name: "LH 2" }).check();
      await first.page.getByRole("checkbox", { name: "AF 1234" }).check();
      await first.page.getByRole("button", { name: "Send" }).click();
      await first.page.getByRole("status").waitFor();
      assert.deepEqual((await ann.get(table.id)).answer, ["af", "lh"]);
    } finally {
      await first.page.close();
    }

    const card = await ask({
      kind: "confirm",
      message: "Merge the update?",
      ui_surface: {
        contract: "pawflow.ui-surface.v1",
        type: "card",
        title: "Update httpx",
        subtitle: "pull request #412",
        fallback: "confirm",
        fields: [{ label: "Tests", value: "1,204 passed" }],
        actions: [
          { label: "Merge", value: true, style: "primary" },
          { label: "Not now", value: false },
        ],
      },
    });
    const second = await open(card);
    try {
      assert.equal(await second.page.locator("dd").textContent(), "1,204 passed");
      await second.page.getByRole("button", { name: "Not now" }).click();
      await second.page.getByRole("status").waitFor();
      assert.equal((await ann.get(card.id)).answer, false);
    } finally {
      await second.page.close();
    }
  });

  test("a request closed elsewhere meanwhile is reported, not answered again", async () => {
    const record = await ask({ kind: "multiline", message: "Notes?" });
    const { page, posted } = await open(record);
    try {
      await ann.cancel(record.id);
      await page.getByLabel("Your answer").fill("too late");
      await page.getByRole("button", { name: "Send" }).click();
      await eventually(() => posted.length === 1, { what: "the submit" });
      await page.getByRole("status").waitFor();
      assert.equal(await page.getByRole("status").textContent(), "This request was cancelled.");
      assert.equal((await ann.get(record.id)).status, "cancelled");
    } finally {
      await page.close();
    }
  });

  test("a tool approval: an edit refused in place, then run with the edited arguments", async () => {
    const record = await ask({ kind: "confirm", message: "Allow releaser to run deploy?", ui_surface: deploySurface() });
    const { page } = await open(record);
    try {
      assert.match((await page.locator(".tool-approval h2").textContent()) ?? "", /releaser wants to run deploy/);
      assert.match((await page.locator(".tool-approval .subtitle").textContent()) ?? "", /deploy/);
      const args = page.getByLabel("Arguments of deploy");
      assert.deepEqual(JSON.parse(await args.inputValue()), { environment: "production", version: "1.2" });
      for (const name of ["Approve", "Approve with my edits", "Reject", "Respond instead"]) {
        assert.equal(await page.getByRole("button", { name, exact: true }).count(), 1, name);
      }

      // Not JSON: said beside the arguments, nothing sent.
      await args.fill("{environment:");
      await page.getByRole("button", { name: "Approve with my edits" }).click();
      const error = page.locator(".field", { has: args }).locator(".field-error");
      await error.waitFor({ state: "visible" });
      assert.match((await error.textContent()) ?? "", /not valid JSON/);

      // Against the tool's schema: the server's field error beside the arguments, still pending.
      await args.fill(JSON.stringify({ environment: "moon", version: "1.3" }));
      await page.getByRole("button", { name: "Approve with my edits" }).click();
      await eventually(async () => /arguments\.environment|moon|one of/.test((await error.textContent()) ?? "") || undefined, {
        what: "the server's field error",
      });
      assert.equal(await args.getAttribute("aria-invalid"), "true");
      assert.equal((await ann.get(record.id)).status, "pending");

      await args.fill(JSON.stringify({ environment: "staging", version: "1.3" }));
      await page.getByRole("button", { name: "Approve with my edits" }).click();
      await page.getByRole("status").waitFor();
      assert.equal(await page.getByRole("status").textContent(), "Answered.");
      const answer = (await ann.get(record.id)).answer as { [key: string]: unknown };
      assert.equal(answer.decision, "edit");
      assert.deepEqual(answer.arguments, { environment: "staging", version: "1.3" });
    } finally {
      await page.close();
    }
  });

  test("a tool approval: rejected with a reason; only the offered decisions are shown", async () => {
    const record = await ask({
      kind: "confirm",
      message: "Allow releaser to run deploy?",
      ui_surface: deploySurface(["approve", "reject"]),
    });
    const { page } = await open(record);
    try {
      assert.equal(await page.getByRole("button", { name: "Approve with my edits" }).count(), 0);
      assert.equal(await page.getByRole("button", { name: "Respond instead" }).count(), 0);
      assert.equal(await page.getByLabel("Arguments of deploy").getAttribute("readonly"), "");
      await page.getByLabel("Reason (optional)").fill("use staging first");
      await page.getByRole("button", { name: "Reject" }).click();
      await page.getByRole("status").waitFor();
      const answer = (await ann.get(record.id)).answer as { [key: string]: unknown };
      assert.equal(answer.decision, "reject");
      assert.equal(answer.reason, "use staging first");
    } finally {
      await page.close();
    }
  });

  test("a tool approval: approved with always allow, the rule kept for the conversation", async () => {
    const record = await ask({ kind: "confirm", message: "Allow releaser to run deploy?", ui_surface: deploySurface() });
    const { page } = await open(record);
    try {
      const always = page.getByLabel("Always allow this call in this conversation");
      assert.equal(await always.isChecked(), false);
      await always.check();
      await page.getByRole("button", { name: "Approve", exact: true }).click();
      await page.getByRole("status").waitFor();
      const answer = (await ann.get(record.id)).answer as { [key: string]: unknown };
      assert.equal(answer.decision, "approve");
      assert.equal(answer.always, "conversation");
      const listed = await fetch(`${served.url}/api/actions/list_approval_rules`, {
        method: "POST",
        headers: { Authorization: ann.authorization, "Content-Type": "application/json" },
        body: JSON.stringify({ conversation_id: conversation }),
      });
      const { rules } = (await listed.json()) as { rules: { tool: string; scope: string; request_id: string }[] };
      const rule = rules.find((r) => r.request_id === record.id);
      assert.ok(rule, "the always-allow rule is listed");
      assert.equal(rule.tool, "deploy");
      assert.equal(rule.scope, "conversation");
    } finally {
      await page.close();
    }
  });

  test("a tool approval: a reject with the always-allow box checked makes no rule", async () => {
    const record = await ask({ kind: "confirm", message: "Allow releaser to run deploy?", ui_surface: deploySurface(["approve", "reject"]) });
    const { page } = await open(record);
    try {
      await page.getByLabel("Always allow this call in this conversation").check();
      await page.getByRole("button", { name: "Reject" }).click();
      await page.getByRole("status").waitFor();
      const answer = (await ann.get(record.id)).answer as { [key: string]: unknown };
      assert.equal(answer.decision, "reject");
      assert.equal("always" in answer, false);
    } finally {
      await page.close();
    }
  });
});

function deploySurface(decisions = ["approve", "edit", "reject", "respond"]): JsonObject {
  return {
    contract: "pawflow.ui-surface.v1",
    type: "tool_approval",
    fallback: "confirm",
    title: "releaser wants to run deploy",
    tool: "deploy",
    agent: "releaser",
    description: "Deploy a version of the service to an environment.",
    arguments: { environment: "production", version: "1.2" },
    schema: {
      type: "object",
      properties: { environment: { enum: ["staging", "production"] }, version: { type: "string" } },
      required: ["environment", "version"],
    },
    decisions,
  };
}

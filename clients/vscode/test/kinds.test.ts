// Each kind to its editor UI, and each surface case to render / fallback / hand-off. The
// records are made by a real server, so they are exactly what the extension receives.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { PawflowClient } from "../src/client";
import { parseTyped, toolDecisions, uiFor, whyText, type UiDescriptor } from "../src/kinds";
import type { Interaction, JsonObject, Kind, RequestInteraction } from "../src/wire";
import { KINDS } from "../src/wire";
import { Served } from "./server";

let served: Served;
let ann: PawflowClient;
let conversation: string;
before(async () => {
  served = await Served.start();
  ann = await served.client();
  conversation = (await ann.action("create_conversation", { title: "Kinds" })).conversation.id;
});
after(async () => {
  await served?.stop();
});

async function ask(kind: Kind, extra: Partial<RequestInteraction> = {}): Promise<Interaction> {
  const body: RequestInteraction = { conversation_id: conversation, kind, message: `a ${kind}`, ...extra };
  return (await ann.action("request_interaction", body)).interaction;
}

const OPTIONS = ["staging", { value: "prod", label: "Production" }];
const EXTRA: Partial<Record<Kind, Partial<RequestInteraction>>> = {
  choice: { options: OPTIONS },
  multi: { options: OPTIONS },
  form: {
    response_schema: {
      type: "object",
      properties: { note: { type: "string" } },
    },
  },
};

const TABLE: JsonObject = {
  contract: "pawflow.ui-surface.v1",
  type: "table",
  columns: [{ key: "env", label: "Environment" }],
  rows: [
    { value: "staging", cells: { env: "Staging" } },
    { value: "prod", cells: { env: "Production" } },
  ],
};
const CARD: JsonObject = {
  contract: "pawflow.ui-surface.v1",
  type: "card",
  title: "Merge?",
  actions: [
    { label: "Merge", value: true, style: "primary" },
    { label: "Not now", value: false },
  ],
};

describe("each kind's UI", { timeout: 120_000 }, () => {
  const expected: Record<Kind, (ui: UiDescriptor) => void> = {
    confirm: (ui) => {
      assert.equal(ui.ui, "quickPick");
      assert.ok(ui.ui === "quickPick" && !ui.canPickMany);
      assert.deepEqual(ui.ui === "quickPick" && ui.items.map((i) => [i.label, i.value]), [
        ["Yes", true],
        ["No", false],
      ]);
    },
    choice: (ui) => {
      assert.ok(ui.ui === "quickPick" && !ui.canPickMany);
      assert.deepEqual(ui.items.map((i) => [i.label, i.value]), [
        ["staging", "staging"],
        ["Production", "prod"],
      ]);
    },
    multi: (ui) => {
      assert.ok(ui.ui === "quickPick" && ui.canPickMany);
      assert.deepEqual(ui.items.map((i) => i.value), ["staging", "prod"]);
    },
    text: (ui) => assert.equal(ui.ui, "inputBox"),
    integer: (ui) => assert.equal(ui.ui, "inputBox"),
    decimal: (ui) => assert.equal(ui.ui, "inputBox"),
    date: (ui) => assert.ok(ui.ui === "inputBox" && ui.placeholder === "YYYY-MM-DD"),
    datetime: (ui) => assert.ok(ui.ui === "inputBox" && /time zone/.test(ui.placeholder)),
    multiline: (ui) => assert.ok(ui.ui === "webview" && ui.view === "multiline"),
    form: (ui) => assert.ok(ui.ui === "webview" && ui.view === "form"),
    file: (ui) => assert.ok(ui.ui === "openDialog" && ui.mediaTypes.length > 0),
  };

  for (const kind of KINDS) {
    test(`${kind}`, async () => {
      const ui = uiFor(await ask(kind, EXTRA[kind]));
      assert.equal(ui.kind, kind);
      assert.equal(ui.surface, "none");
      expected[kind](ui);
    });
  }

  test("every kind of the contract has a UI here (none is a hand-off)", () => {
    assert.deepEqual(Object.keys(expected).sort(), [...KINDS].sort());
  });

  test("constraints become a note, file limits reach the dialog", async () => {
    const text = uiFor(await ask("text", { response_schema: { type: "string", minLength: 2, maxLength: 10 } }));
    assert.equal(text.note, "2 to 10 characters");
    const file = uiFor(
      await ask("file", {
        response_schema: { type: "object", "x-pawflow-kind": "file", maxBytes: 1024, mediaTypes: ["image/png"] },
      }),
    );
    assert.ok(file.ui === "openDialog");
    assert.deepEqual([file.mediaTypes, file.maxBytes], [["image/png"], 1024]);
  });
});

describe("surfaces", { timeout: 120_000 }, () => {
  test("a table for choice and multi, a card for confirm and choice are rendered", async () => {
    const cases: [Kind, JsonObject, Partial<RequestInteraction>][] = [
      ["choice", TABLE, { options: OPTIONS }],
      ["multi", TABLE, { options: OPTIONS }],
      ["confirm", CARD, {}],
      [
        "choice",
        { ...CARD, actions: [{ label: "Ship", value: "prod" }] },
        { options: OPTIONS },
      ],
    ];
    for (const [kind, surface, extra] of cases) {
      const ui = uiFor(await ask(kind, { ...extra, ui_surface: { ...surface, fallback: kind } }));
      assert.equal(ui.surface, "render", `${kind} with a ${String(surface.type)}`);
      assert.ok(ui.ui === "webview" && ui.view === "surface");
    }
  });

  test("a tool approval is drawn in the panel; its decisions and the inbox's why in words", async () => {
    const surface: JsonObject = {
      contract: "pawflow.ui-surface.v1",
      type: "tool_approval",
      fallback: "confirm",
      tool: "deploy",
      agent: "releaser",
      description: "Deploy.",
      arguments: { environment: "production" },
      schema: { type: "object" },
      decisions: ["reject", "approve", "respond"],
    };
    const ui = uiFor(await ask("confirm", { ui_surface: surface }));
    assert.equal(ui.surface, "render");
    assert.ok(ui.ui === "webview" && ui.view === "surface");
    assert.deepEqual(toolDecisions(surface), ["approve", "reject", "respond"]);
    assert.deepEqual(
      (["mine", "groups", "claimed"] as const).map(whyText),
      ["assigned to you", "assigned to your group", "claimed by you"],
    );
  });

  test("a surface this editor cannot draw falls back to the kind's own UI, saying so", async () => {
    const unknownType = uiFor(
      await ask("choice", {
        options: OPTIONS,
        ui_surface: { contract: "pawflow.ui-surface.v1", type: "map", fallback: "choice", pins: [] },
      }),
    );
    assert.equal(unknownType.surface, "fallback");
    assert.ok(unknownType.ui === "quickPick" && !unknownType.canPickMany);
    assert.match(unknownType.note ?? "", /rich view .* not available/);

    const tableForText = uiFor(await ask("text", { ui_surface: { ...TABLE, fallback: "text", rows: [{ cells: { env: "x" } }] } }));
    assert.equal(tableForText.surface, "fallback");
    assert.equal(tableForText.ui, "inputBox");
  });

  test("what cannot be answered faithfully is handed off, never accepted silently", () => {
    const base: Interaction = {
      contract: "pawflow.user-interaction.v1",
      id: "r1",
      kind: "confirm",
      title: null,
      message: "Deploy?",
      options: null,
      response_schema: { type: "boolean" },
      owner: "ann",
      conversation_id: "c1",
      requester: { type: "api", name: "ann" },
      signal_id: "confirmation:r1",
      status: "pending",
      answer: null,
      answered_by: null,
      answered_at: null,
      answered_via: null,
      answered_seq: null,
      created_at: "2030-01-01T00:00:00Z",
      expires_at: null,
      ui_surface: null,
    };
    // A kind newer than this client (the server may grow kinds before the editor does).
    const newer = uiFor({ ...base, kind: "signature" as Kind });
    assert.equal(newer.ui, "handoff");
    assert.equal(newer.surface, "none");
    // A surface whose fallback is not the request's kind.
    const mismatched = uiFor({ ...base, ui_surface: { ...CARD, fallback: "choice" } });
    assert.equal(mismatched.ui, "handoff");
    assert.equal(mismatched.surface, "handoff");
    const noFallback = uiFor({ ...base, ui_surface: { contract: "pawflow.ui-surface.v2", type: "card" } });
    assert.equal(noFallback.ui, "handoff");
    for (const ui of [newer, mismatched, noFallback]) {
      assert.ok(ui.ui === "handoff" && ui.reason.length > 0);
    }
  });
});

describe("typed input", { timeout: 120_000 }, () => {
  test("whole numbers become numbers; everything else goes as typed for the server to judge", () => {
    assert.equal(parseTyped("integer", " 42 "), 42);
    assert.equal(parseTyped("integer", "4.2"), "4.2");
    assert.equal(parseTyped("integer", "99999999999999999999"), "99999999999999999999");
    assert.equal(parseTyped("decimal", " 1.50 "), "1.50");
    assert.equal(parseTyped("text", "  spaced  "), "  spaced  ");
    assert.equal(parseTyped("date", "2030-01-31 "), "2030-01-31");
  });

  test("a parsed answer is accepted by the server for each typed kind", async () => {
    const cases: [Kind, string, unknown][] = [
      ["integer", "42", 42],
      ["decimal", "1.50", "1.5"],
      ["date", "2030-01-31", "2030-01-31"],
      ["datetime", "2030-01-31T09:30+01:00", "2030-01-31T08:30:00Z"],
      ["text", "hello", "hello"],
    ];
    for (const [kind, typed, stored] of cases) {
      const record = await ask(kind);
      const answered = await ann.respond(record.id, parseTyped(kind, typed));
      assert.deepEqual(answered.answer, stored, kind);
    }
  });
});

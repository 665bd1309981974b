// The client module against a real server: the pending list across conversations and pages,
// answers of every shape, refused answers with their field errors, conflicts, uploads.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { send } from "../src/answer";
import { InvalidInput, NotFound, NotPending, PawflowClient, Unreachable } from "../src/client";
import type { InteractionPage } from "../src/wire";
import { whyText } from "../src/kinds";
import { Served } from "./server";

let served: Served;
let ann: PawflowClient;
let bob: PawflowClient;
let many: PawflowClient;
before(async () => {
  served = await Served.start();
  // `pawflow users add` starts a Python process each time: make the users once, together.
  [ann, bob, many] = await Promise.all([served.client("ann"), served.client("bob"), served.client("many")]);
});
after(async () => {
  await served?.stop();
});

async function conversation(client: PawflowClient, title = "Releases"): Promise<string> {
  return (await client.action("create_conversation", { title })).conversation.id;
}

describe("the client", { timeout: 120_000 }, () => {
  test("lists every pending request of the user across conversations, oldest first", async () => {
    const first = await conversation(ann, "One");
    const second = await conversation(ann, "Two");
    const a = await ann.action("request_interaction", {
      conversation_id: first,
      kind: "confirm",
      message: "Deploy?",
    });
    const b = await ann.action("request_interaction", {
      conversation_id: second,
      kind: "choice",
      message: "Where?",
      options: ["staging", { value: "prod", label: "Production" }],
    });
    const done = await ann.action("request_interaction", {
      conversation_id: second,
      kind: "text",
      message: "Name?",
    });
    await ann.respond(done.interaction.id, "v1");
    await bob.action("request_interaction", {
      conversation_id: await conversation(bob),
      kind: "confirm",
      message: "Not ann's",
    });

    const pending = await ann.listPending();
    assert.deepEqual(
      pending.map((i) => i.id),
      [a.interaction.id, b.interaction.id],
    );
    assert.deepEqual(pending[1]?.options, [
      { value: "staging", label: "staging" },
      { value: "prod", label: "Production" },
    ]);
    assert.equal(pending[0]?.conversation_id, first);
    assert.equal(pending[1]?.conversation_id, second);
  });

  test("follows next_cursor until every pending request is read", async () => {
    const id = await conversation(many);
    const asked: string[] = [];
    for (let n = 0; n < 5; n += 1) {
      const made = await many.action("request_interaction", {
        conversation_id: id,
        kind: "integer",
        message: `n${n}`,
      });
      asked.push(made.interaction.id);
    }
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const page: InteractionPage = await many.action(
        "list_interactions",
        { status: "pending", limit: 2, cursor },
      );
      pages.push(page.interactions.map((i) => i.id));
      cursor = page.next_cursor;
    } while (cursor !== null);
    assert.ok(pages.length >= 3, "the server pages at the asked limit");
    assert.deepEqual(pages.flat(), asked);
    assert.deepEqual(
      (await many.listPending()).map((i) => i.id),
      asked,
    );
  });

  test("answers are returned normalized by the server", async () => {
    const id = await conversation(ann);
    const ask = async (kind: "multi" | "decimal" | "datetime" | "integer", extra = {}) =>
      (
        await ann.action("request_interaction", {
          conversation_id: id,
          kind,
          message: kind,
          ...extra,
        })
      ).interaction.id;
    const multi = await ann.respond(await ask("multi", { options: ["a", "b", "c"] }), ["c", "a"]);
    assert.deepEqual(multi.answer, ["a", "c"]);
    assert.equal(multi.status, "answered");
    assert.equal((await ann.respond(await ask("decimal"), "1.50")).answer, "1.5");
    assert.equal(
      (await ann.respond(await ask("datetime"), "2030-01-31T09:30+01:00")).answer,
      "2030-01-31T08:30:00Z",
    );
    assert.equal((await ann.respond(await ask("integer"), 42)).answer, 42);
  });

  test("a refused answer surfaces the server's field errors and leaves the request pending", async () => {
    const id = await conversation(ann);
    const form = await ann.action("request_interaction", {
      conversation_id: id,
      kind: "form",
      message: "Release details",
      response_schema: {
        type: "object",
        properties: {
          version: { type: "string", pattern: "^v\\d+$" },
          replicas: { type: "integer", minimum: 1, maximum: 9 },
        },
        required: ["version", "replicas"],
      },
    });
    const refused = await ann.respond(form.interaction.id, { version: "x", replicas: 12 }).then(
      () => assert.fail("the answer was accepted"),
      (error: unknown) => error,
    );
    assert.ok(refused instanceof InvalidInput);
    assert.equal(refused.status, 422);
    const paths = refused.fieldErrors.map((e) => e.path).sort();
    assert.deepEqual(paths, ["replicas", "version"]);
    assert.ok(refused.fieldErrors.every((e) => e.message.length > 0));
    assert.equal((await ann.get(form.interaction.id)).status, "pending");

    const integer = await ann.action("request_interaction", {
      conversation_id: id,
      kind: "integer",
      message: "How many?",
      response_schema: { type: "integer", minimum: 1 },
    });
    await assert.rejects(ann.respond(integer.interaction.id, "many"), InvalidInput);
    await assert.rejects(ann.respond(integer.interaction.id, 0), (error: unknown) => {
      assert.ok(error instanceof InvalidInput);
      assert.match(error.fieldErrors[0]?.message ?? "", /1/);
      return true;
    });
    assert.equal((await ann.respond(integer.interaction.id, 3)).answer, 3);
  });

  test("an answer to a request no longer pending is a conflict naming its status", async () => {
    const id = await conversation(ann);
    const made = await ann.action("request_interaction", {
      conversation_id: id,
      kind: "confirm",
      message: "Apply?",
    });
    await ann.cancel(made.interaction.id);
    await assert.rejects(ann.respond(made.interaction.id, true), (error: unknown) => {
      assert.ok(error instanceof NotPending);
      assert.equal(error.current, "cancelled");
      return true;
    });
  });

  test("an answer not the caller's to give is refused in the server's words", async () => {
    const [asker, voter] = await Promise.all([served.user("req"), served.user("vic")]);
    const req = new PawflowClient(served.url, asker.token);
    const vic = new PawflowClient(served.url, voter.token);
    const quorum = await req.action("request_interaction", {
      conversation_id: await conversation(req),
      kind: "confirm",
      message: "Ship?",
      assignees: [voter.name, "someone-else"],
      required_approvals: 2,
      requester_may_answer: false,
    });
    const id = quorum.interaction.id;
    const refused = await send(req, id, true); // the requester may not answer
    assert.ok(!refused.ok && !refused.refused);
    assert.match(refused.message, new RegExp(`waits for ${voter.name}, someone-else`));
    assert.equal((await vic.respond(id, true)).status, "pending"); // one vote of two
    const again = await send(vic, id, false); // a second vote of vic's changes nothing
    assert.ok(!again.ok && !again.refused);
    assert.equal(again.status, null);
    assert.equal(again.message, `${voter.name} has already voted yes: the vote stands`);
    assert.equal((await req.get(id)).status, "pending");
  });

  test("another user's request is not found, exactly as an unknown id", async () => {
    const eve = bob;
    const made = await ann.action("request_interaction", {
      conversation_id: await conversation(ann),
      kind: "confirm",
      message: "Mine",
    });
    const theirs = await eve.get(made.interaction.id).catch((e: unknown) => e);
    const unknown = await eve.get("no-such-request").catch((e: unknown) => e);
    assert.ok(theirs instanceof NotFound && unknown instanceof NotFound);
    assert.equal(theirs.message, unknown.message);
  });

  test("uploads a file and answers a file request with it", async () => {
    const made = await ann.action("request_interaction", {
      conversation_id: await conversation(ann),
      kind: "file",
      message: "The log, please",
      response_schema: { type: "object", "x-pawflow-kind": "file", maxBytes: 64, mediaTypes: ["text/*"] },
    });
    const request = made.interaction.id;
    const bytes = new TextEncoder().encode("line one\nline two\n");
    const ref = await ann.upload("build.log", bytes, { requestId: request, mediaType: "text/plain" });
    assert.equal(ref.name, "build.log");
    assert.equal(ref.size, bytes.length);
    assert.equal(ref.media_type, "text/plain");
    assert.match(ref.sha256, /^[0-9a-f]{64}$/);

    const tooBig = await ann
      .upload("big.log", new Uint8Array(65), { requestId: request, mediaType: "text/plain" })
      .catch((e: unknown) => e);
    assert.ok(tooBig instanceof InvalidInput);
    assert.equal(tooBig.fieldErrors[0]?.path, "file");

    const answered = await ann.respond(request, ref.id);
    assert.deepEqual(answered.answer, { ...ref });
  });

  test("an unreachable server is a clear error, not a crash", async () => {
    const nowhere = new PawflowClient("http://127.0.0.1:9", "pf_x", { timeoutMs: 2000 });
    await assert.rejects(nowhere.listPending(), (error: unknown) => {
      assert.ok(error instanceof Unreachable);
      assert.match(error.message, /cannot reach the PawFlow server at http:\/\/127\.0\.0\.1:9/);
      return true;
    });
  });

  test("lists what is assigned to the user, with why, and nothing of others'", async () => {
    const dan = await served.user("dan");
    const danClient = new PawflowClient(served.url, dan.token);
    const chat = await conversation(ann, "Assigned");
    const assigned = (
      await ann.action("request_interaction", {
        conversation_id: chat,
        kind: "confirm",
        message: "Ship it?",
        assignees: [dan.name],
      })
    ).interaction;
    await ann.action("request_interaction", { conversation_id: chat, kind: "text", message: "Not for dan" });
    const items = await danClient.inbox();
    assert.deepEqual(
      items.map((i) => [i.interaction.id, i.why, whyText(i.why)]),
      [[assigned.id, "mine", "assigned to you"]],
    );
    assert.deepEqual((await danClient.inbox("mine")).map((i) => i.interaction.id), [assigned.id]);
    assert.deepEqual(await danClient.inbox("claimed"), []);
    assert.deepEqual(await danClient.inbox("groups"), []);
    // The requester: hers to answer is not dan's; dan's waits for him, and says so.
    const hers = (await ann.listPending()).map((i) => i.id);
    assert.ok(!hers.includes(assigned.id), "a request that waits for dan is not ann's to answer");
    const others = (await ann.inbox("others")).filter((i) => i.interaction.id === assigned.id);
    assert.deepEqual(others.map((i) => [i.why, i.waiting_for]), [["others", [dan.name]]]);
    // Answered, it leaves the inbox.
    await danClient.respond(assigned.id, true);
    assert.deepEqual(await danClient.inbox(), []);
  });
});

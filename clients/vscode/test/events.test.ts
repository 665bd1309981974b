// The event stream against a real server: events arrive live, a dropped connection resumes
// with Last-Event-ID and replays exactly what was missed, state is re-read after every
// (re)connect, and an id the server cannot resume from gets a reset and a re-read.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { PawflowClient } from "../src/client";
import { EventStream, SseParser, type ServerEvent } from "../src/events";
import { PendingModel } from "../src/pending";
import type { Interaction } from "../src/wire";
import { Served, eventually } from "./server";

let served: Served;
before(async () => {
  served = await Served.start();
});
after(async () => {
  await served?.stop();
});

describe("the SSE parser", { timeout: 120_000 }, () => {
  test("splits events across chunks, joins data lines, keeps ids and retry", () => {
    const parser = new SseParser();
    const text = 'retry: 1500\n\n: keep-alive\n\nid: 7\nevent: ready\ndata: {"last_event_id"\ndata: :7}\n\nid: 8\r\nevent: x\r\ndata: plain\r\n\r\n';
    const found: ServerEvent[] = [];
    for (let i = 0; i < text.length; i += 3) found.push(...parser.feed(text.slice(i, i + 3)));
    assert.equal(parser.retry, 1500);
    assert.deepEqual(found, [
      { id: 7, type: "ready", data: { last_event_id: 7 } },
      { id: 8, type: "x", data: "plain" },
    ]);
    const parsed = new SseParser().feed('id: 3\nevent: ready\ndata: {"last_event_id":3}\n\n');
    assert.deepEqual(parsed, [{ id: 3, type: "ready", data: { last_event_id: 3 } }]);
  });
});

/** A Pending model fed by a stream, the way the extension wires it. */
function follow(client: PawflowClient, lastEventId: number | null = null) {
  const model = new PendingModel();
  const events: ServerEvent[] = [];
  let hydrations = 0;
  const stream = new EventStream({
    baseUrl: client.baseUrl,
    authorization: client.authorization,
    lastEventId,
    retryMs: 50,
    onConnect: async () => {
      model.beginHydration();
      model.hydrate(await client.listPending());
      hydrations += 1;
    },
    onEvent: (event) => {
      events.push(event);
      model.apply(event);
    },
  });
  return { model, events, stream, hydrations: () => hydrations };
}

async function ask(client: PawflowClient, conversationId: string, message: string): Promise<Interaction> {
  const made = await client.action("request_interaction", {
    conversation_id: conversationId,
    kind: "confirm",
    message,
  });
  return made.interaction;
}

describe("the event stream", { timeout: 120_000 }, () => {
  test("hydrates on connect, adds live requests and closes those answered elsewhere", async () => {
    const ann = await served.client();
    const conversation = (await ann.action("create_conversation", { title: "Live" })).conversation.id;
    const earlier = await ask(ann, conversation, "asked before the editor started");
    const live = follow(ann);
    try {
      await eventually(() => live.model.get(earlier.id), { what: "the hydrated request" });
      const later = await ask(ann, conversation, "asked while connected");
      await eventually(() => live.model.get(later.id), { what: "the live request" });
      assert.equal(live.model.size, 2);
      // Answered from another client (here, the plain API): closed here too.
      await ann.respond(earlier.id, true);
      await eventually(() => live.model.get(earlier.id) === undefined, { what: "the close" });
      assert.deepEqual(live.model.all().map((i) => i.id), [later.id]);
      assert.equal(live.hydrations(), 1);
    } finally {
      await live.stream.close();
    }
  });

  test("a dropped connection resumes with Last-Event-ID and replays exactly what was missed", async () => {
    const ann = await served.client();
    const conversation = (await ann.action("create_conversation", { title: "Cut" })).conversation.id;
    const live = follow(ann);
    try {
      // Once the stream is open and state read, every request arrives as an event: wait for
      // the event itself, not the model (which a hydration may fill first).
      await eventually(() => live.hydrations() === 1, { what: "the first hydration" });
      const first = await ask(ann, conversation, "first");
      await eventually(
        () =>
          live.events.some(
            (e) => e.type === "interaction_request" && (e.data as Interaction).id === first.id,
          ) && live.model.get(first.id),
        { what: "the first request's event" },
      );
      const seenBefore = live.events.length;
      const resumeFrom = live.stream.lastEventId;
      assert.ok(resumeFrom !== null);

      // Cut the connection and, while it is down, ask twice and answer the first.
      live.stream.interrupt();
      const missed = await ask(ann, conversation, "asked while cut");
      const alsoMissed = await ask(ann, conversation, "also asked while cut");
      await ann.respond(first.id, false);

      await eventually(() => live.stream.connections >= 2 && live.model.get(first.id) === undefined, {
        what: "the reconnect",
      });
      // Hydration alone can show the model the missed state: wait for the replayed events.
      const missedEvents = () =>
        live.events.slice(seenBefore).filter((e) => e.type.startsWith("interaction_"));
      await eventually(() => live.model.get(alsoMissed.id) && missedEvents().length >= 3, {
        what: "the replay",
      });
      const replayed = missedEvents();
      // Exactly the three missed events, in order, each once: the server resumed after the id.
      assert.deepEqual(
        replayed.map((e) => [e.type, (e.data as Interaction).id]),
        [
          ["interaction_request", missed.id],
          ["interaction_request", alsoMissed.id],
          ["interaction_answered", first.id],
        ],
      );
      assert.ok(replayed.every((e) => (e.id ?? 0) > resumeFrom));
      // A resumed stream does not start over with `ready`, and state was re-read again.
      assert.equal(live.events.filter((e) => e.type === "ready").length, 1);
      assert.equal(live.hydrations(), 2);
      assert.deepEqual(
        live.model.all().map((i) => i.id),
        [missed.id, alsoMissed.id],
      );
    } finally {
      await live.stream.close();
    }
  });

  test("an id the server cannot resume from gets a reset, and state is re-read", async () => {
    const ann = await served.client();
    const conversation = (await ann.action("create_conversation", { title: "Reset" })).conversation.id;
    const waiting = await ask(ann, conversation, "pending before the reset");
    const live = follow(ann, 10 ** 12);
    try {
      const reset = await eventually(() => live.events.find((e) => e.type === "reset"), { what: "the reset" });
      const position = (reset.data as { last_event_id: number }).last_event_id;
      assert.ok(position < 10 ** 12);
      await eventually(() => live.stream.lastEventId === position, { what: "the new position" });
      // Once on connecting and once more for the reset.
      await eventually(() => live.hydrations() === 2, { what: "the re-read" });
      assert.ok(live.model.get(waiting.id));
    } finally {
      await live.stream.close();
    }
  });
});

describe("the pending model", { timeout: 120_000 }, () => {
  const record = (id: string, status: Interaction["status"] = "pending", conversation = "c1"): Interaction => ({
    contract: "pawflow.user-interaction.v1",
    id,
    kind: "confirm",
    title: null,
    message: id,
    options: null,
    response_schema: { type: "boolean" },
    owner: "ann",
    conversation_id: conversation,
    requester: { type: "api", name: "ann" },
    signal_id: `confirmation:${id}`,
    status,
    answer: null,
    answered_by: null,
    answered_at: null,
    answered_via: null,
    answered_seq: null,
    created_at: `2030-01-01T00:00:0${id.length}Z`,
    expires_at: null,
    ui_surface: null,
  });

  test("a hydration read before an event neither loses a new request nor revives a closed one", () => {
    const model = new PendingModel();
    model.hydrate([record("a"), record("bb")]);
    model.beginHydration();
    // While the list is being read: one request arrives, one is answered elsewhere.
    model.apply({ id: 5, type: "interaction_request", data: record("ccc") });
    model.apply({ id: 6, type: "interaction_answered", data: record("a", "answered") });
    model.hydrate([record("a"), record("bb")]); // the read predates both events
    assert.deepEqual(model.all().map((i) => i.id), ["bb", "ccc"]);
  });

  test("groups by conversation, with titles when known", () => {
    const model = new PendingModel();
    model.titles.set("c2", "Deploys");
    model.hydrate([record("a", "pending", "c1"), record("bb", "pending", "c2"), record("ccc", "pending", "c1")]);
    assert.deepEqual(
      model.groups().map((g) => [g.title, g.requests.map((r) => r.id)]),
      [
        ["Untitled conversation", ["a", "ccc"]],
        ["Deploys", ["bb"]],
      ],
    );
  });
});

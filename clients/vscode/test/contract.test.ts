// The wire module against the server's own OpenAPI document: every schema it mirrors has
// exactly the declared fields and required fields, and the enums and paths agree. A change
// on either side fails here (the compiler checks the field lists against the interfaces).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { ACTION_NAMES, CONTRACT, KINDS, SCHEMAS, STATUSES } from "../src/wire";
import { Served } from "./server";

interface OpenApi {
  paths: Record<string, unknown>;
  components: { schemas: Record<string, { properties?: Record<string, SchemaNode>; required?: string[] } & SchemaNode> };
}
interface SchemaNode {
  enum?: string[];
  const?: string;
  anyOf?: SchemaNode[];
}

let served: Served;
let document: OpenApi;
before(async () => {
  served = await Served.start();
  const { token } = await served.user("schema");
  const response = await fetch(`${served.url}/openapi.json`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  assert.equal(response.status, 200);
  document = (await response.json()) as OpenApi;
});
after(async () => {
  await served?.stop();
});

test("every mirrored schema has exactly the declared fields", () => {
  const schemas = document.components.schemas;
  for (const [name, declared] of Object.entries(SCHEMAS)) {
    const schema = schemas[name];
    assert.ok(schema, `the server has no schema ${name}`);
    assert.deepEqual(
      Object.keys(schema.properties ?? {}).sort(),
      [...declared.fields].sort(),
      `fields of ${name}`,
    );
    assert.deepEqual([...(schema.required ?? [])].sort(), [...declared.required].sort(), `required fields of ${name}`);
  }
});

test("kinds, statuses and the contract name agree", () => {
  const schemas = document.components.schemas;
  assert.deepEqual(schemas.Kind?.enum, [...KINDS]);
  const interaction = schemas.Interaction?.properties ?? {};
  assert.deepEqual(interaction.status?.enum, [...STATUSES]);
  assert.equal(interaction.contract?.const, CONTRACT);
});

test("every action, the uploads and the event stream are paths of the server", () => {
  for (const name of ACTION_NAMES) {
    assert.ok(`/api/actions/${name}` in document.paths, `no action ${name}`);
  }
  assert.ok("/api/files" in document.paths);
  assert.ok("/api/events" in document.paths);
});

// Output schemas (issue 29) through the TypeScript SDK (a 2025-11-25 client, which validates
// every structuredContent against the tool's outputSchema): the declared schema is the one the
// answer is served by (wrapped under `result` where the root is not an object, projected by
// `fields:`), a conforming answer passes the SDK's own validation, and one that breaks the
// document's promise is an isError result with the body as text, never structuredContent.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { once } from "node:events";
import os from "node:os";
import path from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { freePort, startFerry, stop } from "./support.mjs";

const ITEM = {
  type: "object",
  properties: { id: { type: "integer" }, name: { type: "string" } },
  required: ["id", "name"],
};
const jsonOf = (schema) => ({ description: "ok", content: { "application/json": { schema } } });
const DOCUMENT = {
  openapi: "3.1.0",
  info: { title: "items", version: "1" },
  paths: {
    "/items": {
      get: {
        operationId: "listItems",
        responses: { 200: jsonOf({ type: "array", items: { $ref: "#/components/schemas/Item" } }) },
      },
      post: { operationId: "createItem", responses: { 201: jsonOf({ $ref: "#/components/schemas/Item" }) } },
    },
    "/broken": {
      get: {
        operationId: "listBroken",
        responses: { 200: jsonOf({ type: "array", items: { $ref: "#/components/schemas/Item" } }) },
      },
    },
  },
  components: { schemas: { Item: ITEM } },
};
const ITEMS = [{ id: 1, name: "Rex" }, { id: 2, name: "Tom" }];

function textOf(result) {
  return result.content.filter((block) => block.type === "text").map((block) => block.text).join("\n");
}

let api;
let folder;

before(async () => {
  api = createServer((request, response) => {
    const send = (status, value) => {
      const body = JSON.stringify(value);
      response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      response.end(body);
    };
    if (request.method === "POST") send(201, { id: "seven", name: "Kit" });
    else if (request.url.startsWith("/broken")) send(200, [{ id: 1 }, { id: "two", name: "Tom" }]);
    else send(200, ITEMS);
  });
  api.listen(0, "127.0.0.1");
  await once(api, "listening");
  folder = mkdtempSync(path.join(os.tmpdir(), "ferry-output-ts-"));
  writeFileSync(path.join(folder, "items.json"), JSON.stringify(DOCUMENT));
});

after(async () => {
  api?.close();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

for (const fields of [false, true]) {
  describe(`output schemas ${fields ? "with" : "without"} fields:`, () => {
    let ferryProcess;
    let client;

    before(async () => {
      const projected = fields ? "{fields: [id]}" : "{}";
      const curation = path.join(folder, `ferry-${fields}.yaml`);
      writeFileSync(
        curation,
        `openapi: items.json\nupstream: http://127.0.0.1:${api.address().port}\n` +
          `tools:\n  listItems: ${projected}\n  listBroken: ${projected}\n  createItem: {}\n`,
      );
      const port = await freePort();
      ferryProcess = await startFerry(["serve", "--config", curation, "--listen", `127.0.0.1:${port}`], process.env, port);
      client = new Client({ name: "ferry-e2e-ts", version: "1.0.0" }, { capabilities: {} });
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
    });

    after(async () => {
      if (client) await client.close();
      if (ferryProcess) await stop(ferryProcess);
    });

    test("an array answer is declared wrapped, as it is served", async () => {
      const { tools } = await client.listTools();
      const listed = tools.find((tool) => tool.name === "listItems").outputSchema;
      assert.equal(listed.type, "object");
      assert.deepEqual(listed.required, ["result"]);
      const item = listed.properties.result.items;
      if (fields) assert.deepEqual(item, { type: "object", properties: { id: { type: "integer" } }, required: ["id"] });
      else assert.deepEqual(listed.$defs.Item, ITEM);
    });

    test("a conforming answer passes the SDK's validation", async () => {
      await client.listTools();
      const result = await client.callTool({ name: "listItems", arguments: {} });
      assert.notEqual(result.isError, true, textOf(result));
      const expected = fields ? ITEMS.map(({ id }) => ({ id })) : ITEMS;
      assert.deepEqual(result.structuredContent, { result: expected });
    });

    test("a non-conforming answer is an error with the body as text", async () => {
      await client.listTools();
      const read = await client.callTool({ name: "listBroken", arguments: {} });
      assert.equal(read.isError, true);
      assert.equal(read.structuredContent, undefined);
      assert.match(textOf(read), /does not match this tool's declared output schema/);
      // The body as text: as received, or as `fields:` projected it.
      const body = fields ? '[{"id":1},{"id":"two"}]' : '[{"id":1},{"id":"two","name":"Tom"}]';
      assert.ok(textOf(read).includes(body), textOf(read));
      assert.doesNotMatch(textOf(read), /carried out/);
      const written = await client.callTool({ name: "createItem", arguments: {} });
      assert.equal(written.isError, true);
      assert.match(textOf(written), /answered success \(201 Created\): the operation was carried out/);
    });
  });
}

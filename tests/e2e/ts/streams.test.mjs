// Streamed answers (issue 28) through the TypeScript SDK (a 2025-11-25 client) over Streamable
// HTTP: a tool whose API answers with server-sent events gets the events as its result (an array,
// wrapped under `result` for this revision), and the SDK's `onprogress` hears
// `notifications/progress` as they come, ferry answering that call as an SSE stream.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { once } from "node:events";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { freePort, startFerry, stop } from "./support.mjs";

const DOCUMENT = {
  openapi: "3.2.0",
  info: { title: "events", version: "1" },
  paths: {
    "/events": {
      get: {
        operationId: "watchEvents",
        responses: {
          200: {
            description: "events",
            content: {
              "text/event-stream": {
                itemSchema: { type: "object", properties: { data: { type: "string" }, id: { type: "string" } } },
              },
            },
          },
        },
      },
    },
  },
};

let api;
let folder;
let ferryProcess;
let client;

before(async () => {
  api = createServer(async (request, response) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    for (const n of [1, 2, 3]) {
      response.write(`id: ${n}\ndata: tick ${n}\n\n`);
      await sleep(50);
    }
    response.end();
  });
  api.listen(0, "127.0.0.1");
  await once(api, "listening");
  folder = mkdtempSync(path.join(os.tmpdir(), "ferry-streams-ts-"));
  writeFileSync(path.join(folder, "events.json"), JSON.stringify(DOCUMENT));
  const curation = path.join(folder, "ferry.yaml");
  writeFileSync(
    curation,
    `openapi: events.json\nupstream: http://127.0.0.1:${api.address().port}\ntools:\n  watchEvents: {}\n`,
  );
  const port = await freePort();
  ferryProcess = await startFerry(["serve", "--config", curation, "--listen", `127.0.0.1:${port}`], process.env, port);
  client = new Client({ name: "ferry-e2e-ts", version: "1.0.0" }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
});

after(async () => {
  if (client) await client.close();
  if (ferryProcess) await stop(ferryProcess);
  api?.close();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

test("events are the result, and their progress is heard as they come", async () => {
  const heard = [];
  const result = await client.callTool({ name: "watchEvents", arguments: {} }, undefined, {
    onprogress: (progress) => heard.push(progress),
  });
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  assert.deepEqual(result.structuredContent, {
    result: [1, 2, 3].map((n) => ({ id: String(n), data: `tick ${n}` })),
  });
  assert.ok(heard.length > 0, "no progress was heard");
  const values = heard.map((progress) => progress.progress);
  assert.deepEqual(values, [...values].sort((a, b) => a - b));
  assert.equal(new Set(values).size, values.length);
  for (const progress of heard) assert.equal(progress.total, 1048576);
  assert.match(heard.at(-1).message, /items? so far$/);
});

test("without a progress callback the same events come as one JSON answer", async () => {
  const result = await client.callTool({ name: "watchEvents", arguments: {} });
  assert.equal(result.structuredContent.result.length, 3);
});

// The generated-body sample of issue 29 through the TypeScript SDK, which validates every
// structuredContent against the tool's outputSchema with Ajv (formats asserted): over 200
// operations drawn with a fixed seed from the corpus (tests/e2e/output_sample.py says how),
// each answering a body generated from its documented 2xx schema through a loopback upstream,
// are served as structured content the SDK accepts, with and without `fields:`; bodies made
// not to conform are isError results saying what did not match. The installed SDK speaks
// 2025-11-25 only, so this is that revision's half (the Python SDK and rmcp test both).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { e2e, freePort, python, startFerry, stop } from "./support.mjs";

const script = path.join(e2e, "output_sample.py");
const MISMATCH = "does not match this tool's declared output schema";
const PLACEHOLDER = "http://upstream.invalid";

let sample;
let cases;
let upstream;
let upstreamUrl;
let folder;

function textOf(result) {
  return result.content.filter((block) => block.type === "text").map((block) => block.text).join("\n");
}

/** What `fields:` leaves of a body: the named members of an object, or of each item. */
function project(value, fields) {
  if (!fields.length) return value;
  if (Array.isArray(value)) return value.map((item) => project(item, fields));
  if (value && typeof value === "object") {
    return Object.fromEntries(fields.filter((name) => name in value).map((name) => [name, value[name]]));
  }
  return value;
}

async function setMode(mode) {
  const answer = await fetch(`${upstreamUrl}/_mode/${mode}`, { method: "POST", signal: AbortSignal.timeout(10000) });
  assert.equal(answer.status, 204);
}

before(async () => {
  // Written once per checkout and binary (the Python and Rust tests share it).
  sample = execFileSync(python, [script, "cached"], { encoding: "utf8", timeout: 600000 }).trim();
  cases = JSON.parse(readFileSync(path.join(sample, "sample.json"), "utf8"));
  upstream = spawn(python, [script, "serve", sample], { stdio: ["ignore", "pipe", "inherit"] });
  const lines = readline.createInterface({ input: upstream.stdout });
  const timer = setTimeout(() => upstream.kill("SIGKILL"), 30000);
  for await (const line of lines) {
    if (line.startsWith("PORT ")) {
      upstreamUrl = `http://127.0.0.1:${line.slice(5).trim()}`;
      break;
    }
  }
  clearTimeout(timer);
  assert.ok(upstreamUrl, "the sample upstream did not start");
  folder = mkdtempSync(path.join(os.tmpdir(), "ferry-output-sample-ts-"));
});

after(async () => {
  if (upstream) await stop(upstream);
  if (folder) rmSync(folder, { recursive: true, force: true });
});

test("the sample is large", () => {
  assert.ok(cases.length >= 200, `${cases.length} operations`);
});

for (const variant of ["whole", "fields"]) {
  describe(`the generated-body sample ${variant === "fields" ? "with" : "without"} fields:`, () => {
    let ferryProcess;
    let client;

    before(async () => {
      const text = readFileSync(path.join(sample, `${variant}.yaml`), "utf8").replaceAll(PLACEHOLDER, upstreamUrl);
      const curation = path.join(folder, `${variant}.yaml`);
      writeFileSync(curation, text);
      const port = await freePort();
      ferryProcess = await startFerry(["serve", "--config", curation, "--listen", `127.0.0.1:${port}`], process.env, port);
      client = new Client({ name: "ferry-e2e-ts", version: "1.0.0" }, { capabilities: {} });
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
      // Listing caches each tool's output validator, which every callTool then applies.
      await client.listTools();
    });

    after(async () => {
      if (client) await client.close();
      if (ferryProcess) await stop(ferryProcess);
    });

    test("generated bodies are structured content the SDK accepts", async () => {
      await setMode("conforming");
      const failures = [];
      for (const item of cases) {
        const name = variant === "whole" ? item.tool : item.fields_tool;
        let result;
        try {
          // Throws when the structured content does not match the declared schema.
          result = await client.callTool({ name, arguments: item.arguments });
        } catch (error) {
          failures.push(`${name}: the SDK refused it: ${error.message.slice(0, 600)}`);
          continue;
        }
        if (result.isError) {
          failures.push(`${name}: ${textOf(result).slice(0, 600)}`);
          continue;
        }
        const body = variant === "whole" ? item.body : project(item.body, item.fields);
        const wrapped = body !== null && typeof body === "object" && !Array.isArray(body) ? body : { result: body };
        try {
          assert.deepEqual(result.structuredContent, wrapped);
        } catch {
          failures.push(`${name}: served ${JSON.stringify(result.structuredContent).slice(0, 300)}`);
        }
      }
      assert.deepEqual(failures.slice(0, 25), [], `${failures.length} of ${cases.length}`);
    });

    test("bodies made not to conform take the mismatch path", async () => {
      await setMode("broken");
      try {
        const failures = [];
        let checked = 0;
        for (const item of cases) {
          if (variant === "fields" && !item.broken_in_fields) continue;
          const name = variant === "whole" ? item.tool : item.fields_tool;
          const result = await client.callTool({ name, arguments: item.arguments });
          if (result.isError !== true || result.structuredContent !== undefined || !textOf(result).includes(MISMATCH)) {
            failures.push(`${name}: ${textOf(result).slice(0, 600)}`);
          }
          checked += 1;
        }
        assert.deepEqual(failures.slice(0, 25), [], `${failures.length} of ${checked}`);
        assert.ok(checked >= (variant === "whole" ? 200 : 100), `${checked} checked`);
      } finally {
        await setMode("conforming");
      }
    });
  });
}

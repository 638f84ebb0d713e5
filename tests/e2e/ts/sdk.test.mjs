// ferry through the TypeScript SDK (@modelcontextprotocol/sdk 1.32.2, a legacy 2025-11-25
// client) over Streamable HTTP and over stdio, against the fixture upstream of
// tests/e2e/upstream.py. Run with Node 22's test runner: `node --test 'tests/e2e/ts/*.test.mjs'`.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

import { canConnect, e2e, ferry, freePort, python, stop } from "./support.mjs";

const curation = path.join(e2e, "fixtures", "pets.ferry.yaml");

const TOOL_NAMES = ["createPet", "getPet", "listPets", "slowReport"];
const REX = { id: 1, name: "Rex", tag: "dog" };
const TOM = { id: 2, name: "Tom", tag: "cat" };

/** Starts a child process and resolves once `ready(stdoutSoFar)` returns a value. */
function startProcess(command, args, ready, { timeoutMs = 20000 } = {}) {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} did not become ready in ${timeoutMs} ms:\n${stderr}`));
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code} before it was ready:\n${stderr}`));
    });
    const poll = async () => {
      const value = await ready(stdout);
      if (value !== undefined) {
        clearTimeout(timer);
        child.removeAllListeners("exit");
        resolve({ child, value });
      } else if (child.exitCode === null) {
        setTimeout(poll, 50);
      }
    };
    poll();
  });
}

function textOf(result) {
  return result.content.filter((block) => block.type === "text").map((block) => block.text);
}

let upstream;
let upstreamUrl;
let http;
let httpUrl;

before(async () => {
  assert.ok(existsSync(ferry), `ferry binary not found at ${ferry}: run cargo build first`);
  upstream = await startProcess(python, [path.join(e2e, "upstream.py")], (out) => {
    const match = /^PORT (\d+)$/m.exec(out);
    return match ? Number(match[1]) : undefined;
  });
  upstreamUrl = `http://127.0.0.1:${upstream.value}`;
  const port = await freePort();
  http = await startProcess(
    ferry,
    ["serve", "--config", curation, "--upstream", upstreamUrl, "--listen", `127.0.0.1:${port}`],
    async () => ((await canConnect(port)) ? port : undefined),
  );
  httpUrl = `http://127.0.0.1:${port}/mcp`;
});

after(async () => {
  if (http) await stop(http.child);
  if (upstream) await stop(upstream.child);
});

const transports = {
  http: () => new StreamableHTTPClientTransport(new URL(httpUrl)),
  stdio: () =>
    new StdioClientTransport({
      command: ferry,
      args: ["serve", "--stdio", "--config", curation, "--upstream", upstreamUrl],
      stderr: "pipe",
    }),
};

for (const [name, makeTransport] of Object.entries(transports)) {
  describe(`typescript sdk over ${name}`, () => {
    let client;

    before(async () => {
      client = new Client({ name: "ferry-e2e-ts", version: "1.0.0" }, { capabilities: {} });
      await client.connect(makeTransport());
    });

    after(async () => {
      if (client) await client.close();
    });

    test("the handshake names the server, its instructions and the tools capability", () => {
      assert.equal(client.getServerVersion()?.name, "pets-e2e");
      assert.equal(client.getInstructions(), "A pet is read by its numeric id; list pets to find ids.");
      assert.ok(client.getServerCapabilities()?.tools, "tools capability declared");
      assert.equal(client.getServerCapabilities()?.resources, undefined, "no resources capability");
    });

    test("tools/list returns the curated tools in a stable order", async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((tool) => tool.name),
        TOOL_NAMES,
      );
      const getPet = tools.find((tool) => tool.name === "getPet");
      assert.deepEqual(getPet.inputSchema.required, ["petId"]);
      assert.equal(getPet.annotations?.readOnlyHint, true);
      const again = await client.listTools();
      assert.deepEqual(again.tools, tools);
    });

    test("a call returns the upstream object as structured content", async () => {
      const result = await client.callTool({ name: "getPet", arguments: { petId: 1 } });
      assert.notEqual(result.isError, true);
      assert.deepEqual(result.structuredContent, REX);
      assert.deepEqual(textOf(result).map((text) => JSON.parse(text)), [REX]);
      assert.equal(result._meta?.["dev.ferry/http"]?.status, 200);
    });

    test("an array answer is wrapped under `result` for a 2025-11-25 client", async () => {
      const result = await client.callTool({ name: "listPets", arguments: { limit: 2 } });
      assert.notEqual(result.isError, true);
      assert.deepEqual(result.structuredContent, { result: [REX, TOM] });
    });

    test("an invalid argument is an isError result naming it", async () => {
      const result = await client.callTool({ name: "getPet", arguments: { petId: "one" } });
      assert.equal(result.isError, true);
      assert.match(textOf(result).join(" "), /petId/);
    });

    test("an unknown tool is a -32602 protocol error", async () => {
      await assert.rejects(
        client.callTool({ name: "deletePet", arguments: { petId: 1 } }),
        (error) => error instanceof McpError && error.code === -32602,
      );
    });

    test("a Problem Details answer arrives as an embedded application/problem+json resource", async () => {
      const result = await client.callTool({ name: "getPet", arguments: { petId: 999 } });
      assert.equal(result.isError, true);
      assert.equal(result.content[0].type, "text");
      const resource = result.content.find((block) => block.type === "resource")?.resource;
      assert.equal(resource?.mimeType, "application/problem+json");
      const problem = JSON.parse(resource.text);
      assert.equal(problem.type, "https://pets.example/problems/no-such-pet");
      assert.equal(problem.status, 404);
      assert.equal(problem.petId, 999);
      assert.equal(result._meta?.["dev.ferry/http"]?.status, 404);
    });
  });
}

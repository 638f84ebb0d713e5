//! A composite tool's runtime over the upstream's answers: every criterion, output and action
//! choice of a fixed Arazzo workflow evaluated against any answer, read into an exchange the
//! way the runner reads one.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use http::StatusCode;
use serde_json::{Map, Value, json};

use super::{fixed_document, header_map, split_head};
use crate::arazzo::{Context, evaluate};
use crate::catalog::{self, WorkflowPlan};
use crate::client::Response;
use crate::curation::{self, Curation};
use crate::openapi::{self, LoadOptions};
use crate::run::workflow;
use crate::upstream::redact::Secrets;
use crate::upstream::response::{self, Shaping};

/// Two steps over [`super::DOCUMENT`]: the first reads its answer every way Arazzo can (simple
/// conditions on the status, headers and body pointers, `regex` and RFC 9535 `jsonpath`
/// criteria, outputs of every source), the second sends what the first found.
const WORKFLOW: &str = r#"
arazzo: 1.0.1
info: {title: fuzz runtime, version: "1"}
sourceDescriptions:
  - {name: api, url: ./openapi.json, type: openapi}
workflows:
  - workflowId: readThenCreate
    inputs:
      type: object
      properties:
        id: {type: string}
        trace: {type: string}
    steps:
      - stepId: read
        operationId: getItem
        parameters:
          - {name: id, in: path, value: $inputs.id}
          - {name: q, in: query, value: "item {$inputs.id} for {$inputs.trace}"}
          - {name: X-Trace, in: header, value: $inputs.trace}
        successCriteria:
          - condition: $statusCode == 200
          - condition: $response.header.Content-Type == 'application/json' || $response.header.X-Kind != 'html'
          - condition: $response.body#/status == 'ok' && $response.body#/count >= 3
          - condition: $response.body#/items/0/price < 10.5 || $response.body#/flag == true || $response.body#/none == null
          - condition: $response.body == 'plain' || $response.body#/a~1b/~0c != 'x'
          - {context: $response.body#/name, condition: '^[a-z]+[0-9]*$', type: regex}
          - {context: $response.header.ETag, condition: '^(W/)?"[^"]*"$', type: regex}
          - {context: $statusCode, condition: '^2\d\d$', type: regex}
          - {context: $response.header.Link, condition: 'rel="?next"?', type: regex}
          - {context: $response.body, condition: '$.items[?@.price < 10 && @.name]', type: jsonpath}
          - context: $response.body
            condition: $..id
            type: {type: jsonpath, version: rfc9535}
          - context: $response.body
            condition: "$[?length(@.tags) > 2 || count(@..x) == 1 || match(@.name, '[a-z]+') || search(@.name, 'b.?') || value(@..v) == 1]"
            type: jsonpath
          - {context: $response.body#/items, condition: '$[-1:0:-1].price', type: jsonpath}
        onSuccess:
          - name: again
            type: goto
            stepId: read
            criteria:
              - condition: $response.body#/more == true
          - name: done
            type: end
            criteria:
              - {context: $response.body, condition: $.done, type: jsonpath}
        onFailure:
          - name: wait
            type: retry
            retryAfter: 1
            retryLimit: 2
            criteria:
              - condition: $statusCode == 503 || $statusCode == 429
          - name: create
            type: goto
            stepId: create
            criteria:
              - condition: $statusCode >= 400 && $statusCode < 500
              - {context: $response.header.Retry-After, condition: '^\d+$', type: regex}
          - name: stop
            type: end
        outputs:
          whole: $response.body
          name: $response.body#/name
          price: $response.body#/items/0/price
          odd: $response.body#/a~1b/~0c/-
          etag: $response.header.ETag
          next: $response.header.Link
          status: $statusCode
          url: $url
          method: $method
          trace: $request.header.X-Trace
          id: $request.path.id
          q: $request.query.q
      - stepId: create
        operationId: createItem
        requestBody:
          contentType: application/json
          payload:
            name: "{$steps.read.outputs.name} at {$steps.read.outputs.status}"
            count: $steps.read.outputs.price
            flag: $steps.read.outputs.whole
        successCriteria:
          - condition: $statusCode == 201
          - {context: $response.body#/id, condition: '^[0-9a-f-]{36}$', type: regex}
        outputs:
          id: $response.body#/id
          location: $response.header.Location
    outputs:
      name: $steps.read.outputs.name
      created: $steps.create.outputs.id
      status: $steps.read.outputs.status
"#;

/// An upstream answer, given to each step: two bytes of status (taken into 100 to 999), a
/// flags byte (bit 0: the body was cut at the size cap), then `Name: value` header lines, an
/// empty line and the body, JSON or not. The answer is shaped and read into each step's
/// exchange as the runner does, and every criterion, action choice and output is evaluated:
/// nothing panics, evaluating again gives the same, and it all takes a moment.
pub fn arazzo_runtime(data: &[u8]) {
    let [high, low, flags, rest @ ..] = data else {
        return;
    };
    let status = StatusCode::from_u16(100 + u16::from_be_bytes([*high, *low]) % 900)
        .expect("100 to 999 is a status");
    let (head, body) = split_head(rest).unwrap_or((b"", rest));
    let observed = Response {
        status,
        headers: header_map(head),
        body: body.to_vec(),
        truncated: flags & 1 != 0,
    };
    let started = Instant::now();
    let first = evaluate_all(&observed);
    let again = evaluate_all(&observed);
    assert_eq!(first, again, "a workflow's evaluation is not deterministic");
    // Generous: a debug build on a loaded machine takes a small fraction of it, and an
    // evaluation that grows faster than its input takes far more.
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "evaluating a workflow over a {}-byte answer took {:?}",
        data.len(),
        started.elapsed()
    );
}

/// Everything the workflow's steps evaluate over `observed`, in order: each criterion's
/// outcome, the actions chosen, each step's outputs and the workflow's.
fn evaluate_all(observed: &Response) -> Vec<Value> {
    let tool = runtime_workflow();
    let inputs = json!({"id": "item-7", "trace": "t-1"});
    let secrets = Secrets::default();
    let mut steps: HashMap<String, Map<String, Value>> = HashMap::new();
    let mut seen = Vec::new();
    for (step, plan) in tool.workflow.steps.iter().zip(&tool.plans) {
        let call = &plan.operation.call;
        let shaping = Shaping {
            tool: &plan.operation.name,
            limit_bytes: call.max_response_bytes,
            report_headers: &call.report_headers,
            next: call.next.as_ref(),
            authenticated: false,
            secrets: &secrets,
            query_credential: None,
        };
        let answer = response::shape(observed.clone(), &shaping);
        let before = Context {
            inputs: &inputs,
            steps: &steps,
            outputs: None,
            exchange: None,
        };
        let mut exchange = match workflow::request(step, plan, &before) {
            Ok((_, exchange)) => exchange,
            Err(failure) => {
                seen.push(Value::from(format!("{failure:?}")));
                break;
            }
        };
        if plan.reads_url {
            exchange.url = "http://127.0.0.1:9/api/v1/items/item-7/tail".into();
        }
        if !workflow::readable(&answer, plan) {
            seen.push(Value::from("unreadable"));
            break;
        }
        workflow::answered(&mut exchange, &answer);
        let context = Context {
            exchange: Some(&exchange),
            ..before
        };
        let criteria = step.success_criteria.iter().chain(
            step.on_success
                .iter()
                .chain(&step.on_failure)
                .flat_map(|action| &action.criteria),
        );
        for criterion in criteria {
            seen.push(Value::Bool(evaluate::holds(criterion, &context)));
        }
        seen.push(Value::Bool(evaluate::all_hold(
            &step.success_criteria,
            &context,
        )));
        let named = |action: Option<&crate::arazzo::Action>| {
            action.map_or(Value::Null, |action| Value::from(action.name.as_str()))
        };
        seen.push(named(evaluate::choose(&step.on_success, &context)));
        seen.push(named(evaluate::choose(&step.on_failure, &context)));
        seen.push(named(workflow::failure_action(step, &context, |_, _| true)));
        seen.push(named(workflow::failure_action(step, &context, |_, _| {
            false
        })));
        let mut outputs = Map::new();
        for output in &step.outputs {
            if let Some(value) = evaluate::value(&output.value, &context) {
                outputs.insert(output.name.clone(), value);
            }
        }
        seen.push(Value::Object(outputs.clone()));
        steps.insert(step.id.clone(), outputs);
    }
    // The workflow's outputs, read as the runner reads them once its last step has run.
    let mut outputs = Map::new();
    for output in &tool.workflow.outputs {
        let context = Context {
            inputs: &inputs,
            steps: &steps,
            outputs: Some(&outputs),
            exchange: None,
        };
        let value = evaluate::value(&output.value, &context);
        seen.push(value.clone().unwrap_or(Value::Null));
        if let Some(value) = value {
            outputs.insert(output.name.clone(), value);
        }
    }
    seen
}

/// [`WORKFLOW`], read and compiled against [`super::DOCUMENT`] once.
fn runtime_workflow() -> &'static WorkflowPlan {
    static WORKFLOW_PLAN: OnceLock<WorkflowPlan> = OnceLock::new();
    WORKFLOW_PLAN.get_or_init(|| {
        let name = "runtime.arazzo.yaml";
        let value = openapi::parse_with(WORKFLOW, name, &LoadOptions::default())
            .expect("the fuzzing workflow is YAML");
        let curation = Curation {
            openapi: Some("openapi.json".into()),
            workflows: Some(curation::Workflows {
                document: name.into(),
                tools: vec![curation::WorkflowEntry {
                    workflow: "readThenCreate".into(),
                    ..curation::WorkflowEntry::default()
                }],
            }),
            ..Curation::default()
        };
        let (mut catalog, _) = catalog::compile_chosen(fixed_document(), &curation);
        let file = openapi::SourceFile {
            name: name.into(),
            value,
        };
        let diagnostics = catalog::add_workflows(&mut catalog, fixed_document(), &curation, &file);
        let plan = catalog
            .tools
            .iter()
            .find_map(|tool| tool.workflow().cloned())
            .unwrap_or_else(|| panic!("the fuzzing workflow compiles: {diagnostics:?}"));
        assert_eq!(plan.plans.len(), 2, "{diagnostics:?}");
        assert!(
            diagnostics.iter().all(|diagnostic| !diagnostic.is_error()),
            "the fuzzing workflow reads cleanly: {diagnostics:?}"
        );
        plan
    })
}

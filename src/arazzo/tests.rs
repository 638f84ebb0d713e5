//! Reading Arazzo documents: whole files from `tests/data/arazzo/`, and snippets, each with a
//! snapshot of what was read and every diagnostic.

use std::fmt::Write as _;
use std::path::Path;

use expect_test::{Expect, expect};
use serde_json::{Map, Value};

use super::evaluate;
use super::expression::{self, Comparison, Operand, Operator};
use super::*;
use crate::openapi::{LoadError, LoadOptions, load_file};

fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/arazzo")
        .join(name)
}

/// Reads `name` from `tests/data/arazzo/` and compares a summary with `expect`.
fn check_file(name: &str, expect: Expect) {
    let file = load_file(&data(name), &LoadOptions::default()).expect("fixture loads");
    let (arazzo, diagnostics) = parse(&file.name, &file.value);
    expect.assert_eq(&summary(&arazzo, &diagnostics));
}

/// Reads a YAML snippet as the file `test.arazzo.yaml`, with the loader's YAML 1.2 booleans.
fn check(yaml: &str, expect: Expect) {
    let options = LoadOptions::default();
    let value = crate::openapi::parse_with(yaml, "test.arazzo.yaml", &options)
        .expect("test document is YAML");
    let (arazzo, diagnostics) = parse("test.arazzo.yaml", &value);
    expect.assert_eq(&summary(&arazzo, &diagnostics));
}

fn summary(arazzo: &Arazzo, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for workflow in &arazzo.workflows {
        let _ = writeln!(out, "workflow {} ({})", workflow.id, workflow.pointer);
        for step in &workflow.steps {
            let _ = writeln!(out, "  step {}: {:?}", step.id, step.target);
            for parameter in &step.parameters {
                let _ = writeln!(
                    out,
                    "    {:?} {} = {:?}",
                    parameter.location, parameter.name, parameter.value
                );
            }
            if let Some(body) = &step.body {
                let _ = writeln!(out, "    body {} expressions", body.expressions().len());
            }
            for condition in &step.success_criteria {
                let _ = writeln!(out, "    when {condition:?}");
            }
            for action in step.on_success.iter().chain(&step.on_failure) {
                let _ = writeln!(out, "    action {} {:?}", action.name, action.kind);
                for criterion in &action.criteria {
                    let _ = writeln!(out, "      when {criterion:?}");
                }
            }
            for output in &step.outputs {
                let _ = writeln!(out, "    output {} = {:?}", output.name, output.value);
            }
        }
        for output in &workflow.outputs {
            let _ = writeln!(out, "  output {} = {:?}", output.name, output.value);
        }
    }
    for diagnostic in diagnostics {
        let _ = writeln!(out, "{diagnostic}");
    }
    out
}

#[test]
fn a_two_step_workflow_is_read_with_its_expressions_parsed() {
    check_file(
        "pets.arazzo.yaml",
        expect![[r#"
            workflow adoptFirstAvailable (/workflows/0)
              step findPet: OperationId { source: None, id: "findPets" }
                Query status = Literal(String("available"))
                when Simple(Condition { any: [[Comparison { left: Expression(StatusCode), test: Some((Equal, Literal(Number(200)))) }]] })
                output petId = Response(Body("/0/id"))
                output petName = Response(Body("/0/name"))
              step adopt: OperationPath { source: "pets", pointer: "/paths/~1pets~1{petId}~1adoption/post" }
                Path petId = Expression(StepOutput { step: "findPet", name: "petId", pointer: "" })
                body 1 expressions
                when Simple(Condition { any: [[Comparison { left: Expression(StatusCode), test: Some((Equal, Literal(Number(201)))) }, Comparison { left: Expression(Response(Header("content-type"))), test: Some((NotEqual, Literal(String("text/html")))) }]] })
                action giveUp End
                output adoptionId = Response(Body("/adoptionId"))
              output petName = StepOutput { step: "findPet", name: "petName", pointer: "" }
              output adoptionId = StepOutput { step: "adopt", name: "adoptionId", pointer: "" }
            workflow showPet (/workflows/1)
              step get: OperationId { source: Some("pets"), id: "getPet" }
                Path petId = Expression(Input { name: "petId", pointer: "" })
                output pet = Response(Body(""))
              output pet = StepOutput { step: "get", name: "pet", pointer: "" }
            warning[workflow-optional-input-read]: parameter "petId" of step "get" reads the optional input "petId", which has no default: a call that leaves it out stops the workflow at this step, which cannot be sent without it; make the input required, or give it a default
              --> pets.arazzo.yaml#/workflows/1/steps/0/parameters/0
        "#]],
    );
}

#[test]
fn every_problem_in_a_broken_document_is_reported_where_it_is() {
    check_file(
        "broken.arazzo.json",
        expect![[r#"
            workflow broken (/workflows/0)
              step first: OperationId { source: None, id: "findPets" }
                when Regex { context: StatusCode, pattern: Pattern("^2") }
                action again Goto("second")
                action retryIt Retry(Retry { after_ms: Some(1000), limit: 1, step: None })
                output name = Input { name: "nobody", pointer: "" }
              step second: OperationId { source: None, id: "getPet" }
                Path petId = Expression(StepOutput { step: "first", name: "missing", pointer: "" })
                action loop Goto("first")
              step orphan: OperationId { source: None, id: "getPet" }
                body 2 expressions
              output result = StepOutput { step: "ghost", name: "x", pointer: "" }
            error: source description "flows" is of type "arazzo": only `openapi` sources are read yet
              --> broken.arazzo.json#/sourceDescriptions/1/type
            error: parameter "status" is `in: body`: expected path, query, header or cookie
              --> broken.arazzo.json#/workflows/0/steps/0/parameters/0/in
            error: `(` in condition "$statusCode == (200)" is not supported yet (only comparisons joined by `&&` and `||`)
              --> broken.arazzo.json#/workflows/0/steps/0/successCriteria/0/condition
            error: a `jsonpath` criterion needs a `context`: the runtime expression it applies to, such as `$response.body`
              --> broken.arazzo.json#/workflows/0/steps/0/successCriteria/1
            error: "$response.bdy#/id": expected `header.`, `query.`, `path.` or `body` after the request or response
              --> broken.arazzo.json#/workflows/0/steps/0/outputs/id
            error: a step that runs another workflow is not supported yet
              --> broken.arazzo.json#/workflows/0/steps/2/workflowId
            error: the workflow has no input "nobody"
              --> broken.arazzo.json#/workflows/0/steps/0/outputs/name
            error: step "first" has no output "missing"
              --> broken.arazzo.json#/workflows/0/steps/1/parameters/0
            error: no step is named "ghost"
              --> broken.arazzo.json#/workflows/0/outputs/result
            warning: step "orphan" cannot be reached from the first step
              --> broken.arazzo.json#/workflows/0/steps/3
            warning[workflow-loop-ends-only-failed]: every success leads back to step "first": a run leaves this loop only by a step's failure or by reaching `max_steps`, and either ends it as failed; give a success action with criteria that ends it (a `watch` that waits for a state, say)
              --> broken.arazzo.json#/workflows/0/steps/0
            warning[workflow-optional-input-read]: the request body of step "orphan" reads the optional input "owner", which has no default: a call that leaves it out leaves this out too
              --> broken.arazzo.json#/workflows/0/steps/3/requestBody/payload
        "#]],
    );
}

#[test]
fn a_document_that_is_not_arazzo_says_so() {
    check(
        "openapi: 3.1.0\ninfo: {title: x, version: '1'}\n",
        expect![[r#"
            error: not an Arazzo document (no `arazzo` version string such as "1.0.1")
              --> test.arazzo.yaml#
            error: `sourceDescriptions` is missing
              --> test.arazzo.yaml#
            error: `workflows` is missing
              --> test.arazzo.yaml#
        "#]],
    );
    check(
        "arazzo: 2.0.0\ninfo: {title: x, version: '1'}\nsourceDescriptions: []\nworkflows: []\n",
        expect![[r#"
            error: unsupported Arazzo version "2.0.0" (ferry reads 1.0.x)
              --> test.arazzo.yaml#/arazzo
        "#]],
    );
    check(
        "[1, 2]",
        expect![[r#"
        error: the document must be an object
          --> test.arazzo.yaml#
    "#]],
    );
}

#[test]
fn duplicate_ids_and_missing_keys_are_errors() {
    check(
        r#"
arazzo: 1.0.0
info: {title: x, version: '1'}
sourceDescriptions: [{name: api, url: ./api.yaml}]
workflows:
  - workflowId: w
    steps:
      - stepId: a
        operationId: one
      - stepId: a
        operationId: two
      - operationId: three
      - stepId: both
        operationId: one
        operationPath: '{$sourceDescriptions.api.url}#/paths/~1x/get'
      - stepId: badPath
        operationPath: '#/paths/~1x/get'
  - workflowId: w
    steps: []
"#,
        expect![[r##"
            workflow w (/workflows/0)
              step a: OperationId { source: None, id: "one" }
              step a: OperationId { source: None, id: "two" }
            workflow w (/workflows/1)
            error: a second step is named "a"
              --> test.arazzo.yaml#/workflows/0/steps/1/stepId
            error: `stepId` is missing
              --> test.arazzo.yaml#/workflows/0/steps/2
            error: step "both" names more than one of `operationId`, `operationPath` and `workflowId`
              --> test.arazzo.yaml#/workflows/0/steps/3
            error: operationPath "#/paths/~1x/get" is not `{$sourceDescriptions.NAME.url}#/paths/…/METHOD`
              --> test.arazzo.yaml#/workflows/0/steps/4/operationPath
            error: a workflow needs at least one step
              --> test.arazzo.yaml#/workflows/1/steps
            error: a second workflow is named "w"
              --> test.arazzo.yaml#/workflows/1/workflowId
        "##]],
    );
}

#[test]
fn an_expression_may_read_only_earlier_steps_and_declared_inputs() {
    check(
        r#"
arazzo: 1.0.1
info: {title: x, version: '1'}
sourceDescriptions: [{name: api, url: ./api.yaml}]
workflows:
  - workflowId: w
    inputs: {type: object, properties: {id: {type: string}}}
    steps:
      - stepId: a
        operationId: one
        parameters:
          - {name: x, in: query, value: $steps.b.outputs.y}
          - {name: self, in: query, value: $steps.a.outputs.z}
          - {name: out, in: header, value: $outputs.z}
        outputs:
          z: $response.body
      - stepId: b
        operationId: two
        parameters:
          - {name: id, in: path, value: $inputs.identifier}
          - {name: z, in: query, value: $steps.a.outputs.nope}
        successCriteria:
          - condition: $steps.a.outputs.z == 1
        outputs:
          y: $statusCode
    outputs:
      fine: $steps.b.outputs.y
      gone: $steps.b.outputs.q
      literal: $statusCode
"#,
        expect![[r#"
            workflow w (/workflows/0)
              step a: OperationId { source: None, id: "one" }
                Query x = Expression(StepOutput { step: "b", name: "y", pointer: "" })
                Query self = Expression(StepOutput { step: "a", name: "z", pointer: "" })
                Header out = Expression(Output { name: "z", pointer: "" })
                output z = Response(Body(""))
              step b: OperationId { source: None, id: "two" }
                Path id = Expression(Input { name: "identifier", pointer: "" })
                Query z = Expression(StepOutput { step: "a", name: "nope", pointer: "" })
                when Simple(Condition { any: [[Comparison { left: Expression(StepOutput { step: "a", name: "z", pointer: "" }), test: Some((Equal, Literal(Number(1)))) }]] })
                output y = StatusCode
              output fine = StepOutput { step: "b", name: "y", pointer: "" }
              output gone = StepOutput { step: "b", name: "q", pointer: "" }
              output literal = StatusCode
            error: no step before "a" is named "b"
              --> test.arazzo.yaml#/workflows/0/steps/0/parameters/0
            error: step "a" reads its own output: use `$response.` here
              --> test.arazzo.yaml#/workflows/0/steps/0/parameters/1
            error: `$outputs.` is read only in a workflow's outputs
              --> test.arazzo.yaml#/workflows/0/steps/0/parameters/2
            error: the workflow has no input "identifier"
              --> test.arazzo.yaml#/workflows/0/steps/1/parameters/0
            error: step "a" has no output "nope"
              --> test.arazzo.yaml#/workflows/0/steps/1/parameters/1
            error: step "b" has no output "q"
              --> test.arazzo.yaml#/workflows/0/outputs/gone
            error: a workflow's output reads `$steps.STEP.outputs.NAME` or `$inputs.NAME`
              --> test.arazzo.yaml#/workflows/0/outputs/literal
        "#]],
    );
}

#[test]
fn a_step_after_an_unconditional_end_is_unreachable() {
    check(
        r#"
arazzo: 1.0.1
info: {title: x, version: '1'}
sourceDescriptions: [{name: api, url: ./api.yaml}]
workflows:
  - workflowId: w
    steps:
      - stepId: a
        operationId: one
        onSuccess:
          - {name: maybe, type: goto, stepId: c, criteria: [{condition: $statusCode == 202}]}
          - {name: stop, type: end}
      - stepId: b
        operationId: two
      - stepId: c
        operationId: three
        onFailure:
          - {name: nowhere, type: goto, stepId: z}
"#,
        expect![[r#"
            workflow w (/workflows/0)
              step a: OperationId { source: None, id: "one" }
                action maybe Goto("c")
                  when Simple(Condition { any: [[Comparison { left: Expression(StatusCode), test: Some((Equal, Literal(Number(202)))) }]] })
                action stop End
              step b: OperationId { source: None, id: "two" }
              step c: OperationId { source: None, id: "three" }
                action nowhere Goto("z")
            error: `goto` names step "z", which this workflow does not have
              --> test.arazzo.yaml#/workflows/0/steps/2/onFailure/0/stepId
            warning: step "b" cannot be reached from the first step
              --> test.arazzo.yaml#/workflows/0/steps/1
        "#]],
    );
}

#[test]
fn runtime_expressions_parse_into_their_parts() {
    let cases = [
        "$url",
        "$method",
        "$statusCode",
        "$request.header.X-Trace",
        "$request.query.limit",
        "$request.path.petId",
        "$request.body",
        "$response.body#/items/0/id",
        "$response.header.ETag",
        "$inputs.petId",
        "$inputs.pet#/name",
        "$outputs.total",
        "$steps.find.outputs.id#/0",
    ];
    let mut out = String::new();
    for case in cases {
        let _ = writeln!(out, "{case} => {:?}", expression::parse(case).expect(case));
    }
    expect![[r#"
        $url => Url
        $method => Method
        $statusCode => StatusCode
        $request.header.X-Trace => Request(Header("x-trace"))
        $request.query.limit => Request(Query("limit"))
        $request.path.petId => Request(Path("petId"))
        $request.body => Request(Body(""))
        $response.body#/items/0/id => Response(Body("/items/0/id"))
        $response.header.ETag => Response(Header("etag"))
        $inputs.petId => Input { name: "petId", pointer: "" }
        $inputs.pet#/name => Input { name: "pet", pointer: "/name" }
        $outputs.total => Output { name: "total", pointer: "" }
        $steps.find.outputs.id#/0 => StepOutput { step: "find", name: "id", pointer: "/0" }
    "#]]
    .assert_eq(&out);
}

#[test]
fn malformed_runtime_expressions_say_what_is_wrong() {
    let cases = [
        "",
        "inputs.x",
        "$",
        "$inputs",
        "$inputs.",
        "$inputs.a b",
        "$inputs.x#y",
        "$response",
        "$response.bdy",
        "$response.body#x",
        "$response.header.",
        "$response.header.Bad Name",
        "$steps.a.y",
        "$steps..outputs.y",
        "$steps.a.outputs.",
        "$workflows.other.outputs.x",
        "$components.parameters.p",
        "$statusCodes",
    ];
    let mut out = String::new();
    for case in cases {
        let error = expression::parse(case).expect_err(case);
        let _ = writeln!(out, "{case:?}: {error}");
    }
    expect![[r#"
        "": "" is not a runtime expression (it must start with `$`)
        "inputs.x": "inputs.x" is not a runtime expression (it must start with `$`)
        "$": "$" is not a runtime expression ferry knows (expected `$url`, `$method`, `$statusCode`, `$request.`, `$response.`, `$inputs.`, `$outputs.` or `$steps.`)
        "$inputs": "$inputs" names no input
        "$inputs.": "$inputs." names no input
        "$inputs.a b": "$inputs.a b" names no input
        "$inputs.x#y": "$inputs.x#y": what follows `#` must be a JSON pointer (`#/a/b`)
        "$response": "$response": expected `header.`, `query.`, `path.` or `body` after the request or response
        "$response.bdy": "$response.bdy": expected `header.`, `query.`, `path.` or `body` after the request or response
        "$response.body#x": "$response.body#x": a body reference is `body` or `body#/json/pointer`
        "$response.header.": "$response.header." names no header parameter
        "$response.header.Bad Name": "$response.header.Bad Name": "Bad Name" is not a header name
        "$steps.a.y": "$steps.a.y" does not name a step's output (write `$steps.STEP.outputs.NAME`)
        "$steps..outputs.y": "$steps..outputs.y" names no step
        "$steps.a.outputs.": "$steps.a.outputs." names no output
        "$workflows.other.outputs.x": `$workflows` expressions are not supported yet (in "$workflows.other.outputs.x")
        "$components.parameters.p": `$components` expressions are not supported yet (in "$components.parameters.p")
        "$statusCodes": "$statusCodes" is not a runtime expression ferry knows (expected `$url`, `$method`, `$statusCode`, `$request.`, `$response.`, `$inputs.`, `$outputs.` or `$steps.`)
    "#]].assert_eq(&out);
}

#[test]
fn simple_conditions_parse_with_and_binding_tighter_than_or() {
    let condition = expression::parse_condition(
        "$statusCode >= 200 && $statusCode < 300 || $response.body#/ok == true",
    )
    .expect("condition parses");
    let status = |operator, value: i64| Comparison {
        left: Operand::Expression(Expression::StatusCode),
        test: Some((operator, Operand::Literal(value.into()))),
    };
    assert_eq!(
        condition.any,
        vec![
            vec![
                status(Operator::GreaterOrEqual, 200),
                status(Operator::Less, 300)
            ],
            vec![Comparison {
                left: Operand::Expression(Expression::Response(Source::Body("/ok".into()))),
                test: Some((Operator::Equal, Operand::Literal(Value::Bool(true)))),
            }],
        ]
    );
    let lone = expression::parse_condition("$response.body#/done").expect("lone operand");
    assert_eq!(lone.any[0][0].test, None);
    let quoted = expression::parse_condition("$method == \"GET\" && 'a' != 'é'").expect("quoted");
    assert_eq!(quoted.any[0].len(), 2);
}

#[test]
fn malformed_conditions_say_what_is_wrong() {
    let cases = [
        "",
        "   ",
        "$statusCode ==",
        "$statusCode == 200 &&",
        "== 200",
        "$statusCode 200",
        "$statusCode == available",
        "$statusCode == 'open",
        "!($statusCode == 200)",
        "$statusCode == 200 & $method == 'GET'",
        "$response.bdy == 1",
        "$statusCode == 200 == 300",
    ];
    let mut out = String::new();
    for case in cases {
        let error = expression::parse_condition(case).expect_err(case);
        let _ = writeln!(out, "{case:?}: {error}");
    }
    expect![[r#"
        "": the condition is empty
        "   ": the condition is empty
        "$statusCode ==": condition "$statusCode ==" ends where an expression or a value was expected
        "$statusCode == 200 &&": condition "$statusCode == 200 &&" ends where an expression or a value was expected
        "== 200": unexpected `==` in condition "== 200" (expected an expression or a value)
        "$statusCode 200": unexpected value 200 in condition "$statusCode 200" (expected `&&`, `||` or the end)
        "$statusCode == available": "available" in condition "$statusCode == available" is not an expression or a value (quote a string: 'available')
        "$statusCode == 'open": unterminated string in condition "$statusCode == 'open"
        "!($statusCode == 200)": `!` in condition "!($statusCode == 200)" is not supported yet (only comparisons joined by `&&` and `||`)
        "$statusCode == 200 & $method == 'GET'": `&` in condition "$statusCode == 200 & $method == 'GET'" is not an operator (write `&&`, `||`, `==`, `!=`, `<`, `<=`, `>` or `>=`)
        "$response.bdy == 1": "$response.bdy": expected `header.`, `query.`, `path.` or `body` after the request or response
        "$statusCode == 200 == 300": unexpected `==` in condition "$statusCode == 200 == 300" (expected `&&`, `||` or the end)
    "#]].assert_eq(&out);
}

#[test]
fn loading_an_arazzo_file_keeps_the_loaders_confinement_and_budgets() {
    let options = LoadOptions {
        root_dir: Some(data("").join("../diff")),
        ..LoadOptions::default()
    };
    let outside = load_file(&data("pets.arazzo.yaml"), &options).expect_err("outside the root");
    assert!(
        matches!(outside, LoadError::OutsideRoot { .. }),
        "{outside}"
    );
    let small = LoadOptions {
        max_file_bytes: 64,
        ..LoadOptions::default()
    };
    let large = load_file(&data("pets.arazzo.yaml"), &small).expect_err("over the size budget");
    assert!(matches!(large, LoadError::TooLarge { .. }), "{large}");
    let json = load_file(&data("broken.arazzo.json"), &LoadOptions::default()).expect("JSON loads");
    assert_eq!(json.name, "broken.arazzo.json");
    assert_eq!(json.value["arazzo"], "1.0.1");
}

fn exchange() -> Exchange {
    Exchange {
        url: "http://127.0.0.1:1/pets?status=available".into(),
        method: "GET".into(),
        request_headers: vec![("accept".into(), "application/json".into())],
        query: vec![("status".into(), "available".into())],
        path: Vec::new(),
        request_body: None,
        status: 200,
        response_headers: vec![("x-total".into(), "2".into())],
        response_body: Some(serde_json::json!([{"id": 7, "name": "Rex", "ok": true}])),
    }
}

#[test]
fn expressions_read_the_inputs_earlier_steps_and_the_exchange() {
    let inputs = serde_json::json!({"owner": "ann", "pet": {"name": "Rex"}});
    let mut steps = std::collections::HashMap::new();
    let mut found = Map::new();
    found.insert("petId".into(), Value::from(7));
    steps.insert("find".to_string(), found);
    let exchange = exchange();
    let context = Context {
        inputs: &inputs,
        steps: &steps,
        outputs: None,
        exchange: Some(&exchange),
    };
    let read = |text: &str| evaluate::value(&expression::parse(text).expect(text), &context);
    assert_eq!(read("$inputs.owner"), Some("ann".into()));
    assert_eq!(read("$inputs.pet#/name"), Some("Rex".into()));
    assert_eq!(read("$inputs.nobody"), None);
    assert_eq!(read("$steps.find.outputs.petId"), Some(7.into()));
    assert_eq!(read("$steps.other.outputs.petId"), None);
    assert_eq!(read("$statusCode"), Some(200.into()));
    assert_eq!(read("$response.body#/0/name"), Some("Rex".into()));
    assert_eq!(read("$response.body#/5/name"), None);
    assert_eq!(read("$response.header.X-Total"), Some("2".into()));
    assert_eq!(read("$request.query.status"), Some("available".into()));
    assert_eq!(read("$request.query.Status"), None);
    assert_eq!(read("$method"), Some("GET".into()));
    assert_eq!(read("$outputs.x"), None);

    let payload = Template::Object(vec![
        (
            "owner".into(),
            Template::Expression(expression::parse("$inputs.owner").expect("parses")),
        ),
        (
            "tags".into(),
            Template::Array(vec![Template::Literal("new".into())]),
        ),
    ]);
    assert_eq!(
        evaluate::fill(&payload, &context),
        Ok(serde_json::json!({"owner": "ann", "tags": ["new"]}))
    );
    let missing = Template::Expression(expression::parse("$inputs.nobody").expect("parses"));
    assert!(matches!(
        evaluate::fill(&missing, &context),
        Err(Expression::Input { name, .. }) if name == "nobody"
    ));
}

#[test]
fn conditions_compare_numbers_text_and_what_is_missing() {
    let inputs = Value::Null;
    let steps = std::collections::HashMap::new();
    let exchange = exchange();
    let context = Context {
        inputs: &inputs,
        steps: &steps,
        outputs: None,
        exchange: Some(&exchange),
    };
    let holds = |text: &str| {
        let condition = expression::parse_condition(text).expect(text);
        evaluate::holds(&Criterion::Simple(condition), &context)
    };
    assert!(holds("$statusCode == 200"));
    assert!(!holds("$statusCode == 201"));
    assert!(holds("$statusCode >= 200 && $statusCode < 300"));
    assert!(holds("$statusCode == 404 || $statusCode == 200"));
    assert!(!holds("$statusCode == 404 || $statusCode == 500"));
    assert!(
        holds("$response.header.x-total == 2"),
        "a header's text compares as a number"
    );
    assert!(holds("$response.header.x-total > 1"));
    assert!(holds("$response.body#/0/name == 'Rex'"));
    assert!(holds("$response.body#/0/name != 'Max'"));
    assert!(holds("$response.body#/0/ok"));
    assert!(
        !holds("$response.body#/0/name"),
        "a lone operand holds only when it is true"
    );
    assert!(holds("$response.body#/0/missing == null"));
    assert!(!holds("$response.body#/0/missing > 1"));
    assert!(
        !holds("$response.body#/0/name < 3"),
        "text and a number do not order"
    );

    let action = |name: &str, criteria: &[&str]| Action {
        name: name.into(),
        kind: ActionKind::End,
        criteria: criteria
            .iter()
            .map(|c| Criterion::Simple(expression::parse_condition(c).expect(c)))
            .collect(),
        pointer: String::new(),
    };
    let actions = [
        action("onNotFound", &["$statusCode == 404"]),
        action("onOk", &["$statusCode == 200"]),
        action("always", &[]),
    ];
    let chosen = evaluate::choose(&actions, &context).map(|a| a.name.as_str());
    assert_eq!(chosen, Some("onOk"));
    assert_eq!(evaluate::choose(&actions[..1], &context), None);
}

#[test]
fn values_of_the_wrong_kind_are_diagnostics_not_panics() {
    check(
        r#"
arazzo: 1.0.1
info: nope
sourceDescriptions: {name: api}
workflows:
  - 3
  - workflowId: [w]
  - workflowId: w
    inputs: [a]
    steps:
      - stepId: a
        operationId: 7
      - stepId: b
        operationId: one
        parameters: [{name: x, in: query}, 5, {name: why, in: query, value: [$inputs.q, {k: $bad}]}]
        requestBody: text
        successCriteria: [{condition: 200}, {condition: "$statusCode == 200", type: {type: jsonpath, version: draft-goessner-dispatch-jsonpath-00}}]
        onSuccess: [{name: g, type: goto}, {type: end}, {name: r, type: jump}]
        outputs: {"bad name": $statusCode, n: 5}
    outputs: []
"#,
        expect![[r#"
            workflow w (/workflows/2)
              step b: OperationId { source: None, id: "one" }
                Query why = Array([Expression(Input { name: "q", pointer: "" }), Object([("k", Literal(String("$bad")))])])
            error: `info` must be an object
              --> test.arazzo.yaml#/info
            error: `sourceDescriptions` must be a list
              --> test.arazzo.yaml#/sourceDescriptions
            error: a workflow must be an object
              --> test.arazzo.yaml#/workflows/0
            error: `workflowId` must be a string
              --> test.arazzo.yaml#/workflows/1/workflowId
            error: `inputs` must be a JSON Schema object
              --> test.arazzo.yaml#/workflows/2/inputs
            error: `operationId` must be a string
              --> test.arazzo.yaml#/workflows/2/steps/0/operationId
            error: parameter "x" has no `value`
              --> test.arazzo.yaml#/workflows/2/steps/1/parameters/0
            error: a parameter must be an object
              --> test.arazzo.yaml#/workflows/2/steps/1/parameters/1
            error: "$bad" is not a runtime expression ferry knows (expected `$url`, `$method`, `$statusCode`, `$request.`, `$response.`, `$inputs.`, `$outputs.` or `$steps.`)
              --> test.arazzo.yaml#/workflows/2/steps/1/parameters/2/value/1/k
            error: `requestBody` must be an object
              --> test.arazzo.yaml#/workflows/2/steps/1/requestBody
            error: `condition` must be a string
              --> test.arazzo.yaml#/workflows/2/steps/1/successCriteria/0/condition
            error: JSONPath "draft-goessner-dispatch-jsonpath-00" is not supported: ferry evaluates JSONPath as RFC 9535, so write `type: jsonpath`
              --> test.arazzo.yaml#/workflows/2/steps/1/successCriteria/1/type/version
            error: `stepId` is missing
              --> test.arazzo.yaml#/workflows/2/steps/1/onSuccess/0
            error: `name` is missing
              --> test.arazzo.yaml#/workflows/2/steps/1/onSuccess/1
            error: action type "jump" is not one of end, goto, retry
              --> test.arazzo.yaml#/workflows/2/steps/1/onSuccess/2/type
            error: output name "bad name" is not a name (letters, digits, `.`, `-`, `_`)
              --> test.arazzo.yaml#/workflows/2/steps/1/outputs/bad name
            error: output "n" must be a runtime expression
              --> test.arazzo.yaml#/workflows/2/steps/1/outputs/n
            error: `outputs` must be an object
              --> test.arazzo.yaml#/workflows/2/outputs
            error: the workflow has no input "q"
              --> test.arazzo.yaml#/workflows/2/steps/1/parameters/2
        "#]],
    );
}

#[test]
fn retry_actions_are_read_with_their_wait_limit_and_step() {
    check(
        "arazzo: 1.0.1
info: {title: x, version: '1'}
sourceDescriptions: [{name: api, url: ./api.yaml, type: openapi}]
workflows:
  - workflowId: poll
    steps:
      - stepId: look
        operationId: getJob
        onSuccess:
          - {name: again, type: retry}
        onFailure:
          - {name: wait, type: retry, retryAfter: 1.5, retryLimit: 3}
          - {name: fromTheTop, type: retry, stepId: look}
          - {name: never, type: retry, retryAfter: -1}
          - {name: ever, type: retry, retryLimit: 2.5}
          - {name: lost, type: retry, stepId: nowhere}
",
        expect![[r#"
            workflow poll (/workflows/0)
              step look: OperationId { source: None, id: "getJob" }
                action wait Retry(Retry { after_ms: Some(1500), limit: 3, step: None })
                action fromTheTop Retry(Retry { after_ms: None, limit: 1, step: Some("look") })
                action lost Retry(Retry { after_ms: None, limit: 1, step: Some("nowhere") })
            error: a `retry` action belongs in `onFailure`: a step that succeeded is not run again
              --> test.arazzo.yaml#/workflows/0/steps/0/onSuccess/0/type
            error: `retryAfter` must be a non-negative number of seconds
              --> test.arazzo.yaml#/workflows/0/steps/0/onFailure/2/retryAfter
            error: `retryLimit` must be a non-negative integer
              --> test.arazzo.yaml#/workflows/0/steps/0/onFailure/3/retryLimit
            error: `retry` names step "nowhere", which this workflow does not have
              --> test.arazzo.yaml#/workflows/0/steps/0/onFailure/4/stepId
        "#]],
    );
}

#[test]
fn a_loop_only_max_steps_could_end_is_an_error_and_any_other_is_not() {
    let document = |on_failure: &str| {
        format!(
            "arazzo: 1.0.1
info: {{title: x, version: '1'}}
sourceDescriptions: [{{name: api, url: ./api.yaml, type: openapi}}]
workflows:
  - workflowId: spin
    steps:
      - stepId: a
        operationId: getJob
        onSuccess: [{{name: on, type: goto, stepId: b}}]
        onFailure: [{{name: on, type: goto, stepId: b}}]
      - stepId: b
        operationId: getJob
        onSuccess: [{{name: back, type: goto, stepId: a}}]
        onFailure: [{on_failure}]
"
        )
    };
    check(
        &document("{name: back, type: goto, stepId: a}"),
        expect![[r#"
            workflow spin (/workflows/0)
              step a: OperationId { source: None, id: "getJob" }
                action on Goto("b")
                action on Goto("b")
              step b: OperationId { source: None, id: "getJob" }
                action back Goto("a")
                action back Goto("a")
            error: a `goto` loops back to step "a" whatever each step's outcome: no run could ever leave the loop
              --> test.arazzo.yaml#/workflows/0/steps/0
        "#]],
    );
    // A failure of `b` ends the run: the loop is bounded by `max_steps` when it runs.
    check(
        &document("{name: stop, type: end}"),
        expect![[r#"
            workflow spin (/workflows/0)
              step a: OperationId { source: None, id: "getJob" }
                action on Goto("b")
                action on Goto("b")
              step b: OperationId { source: None, id: "getJob" }
                action back Goto("a")
                action stop End
            warning[workflow-loop-ends-only-failed]: every success leads back to step "a": a run leaves this loop only by a step's failure or by reaching `max_steps`, and either ends it as failed; give a success action with criteria that ends it (a `watch` that waits for a state, say)
              --> test.arazzo.yaml#/workflows/0/steps/0
        "#]],
    );
}

#[test]
fn regex_and_jsonpath_criteria_are_read_once_with_their_context() {
    check(
        r#"
arazzo: 1.0.1
info: {title: x, version: '1'}
sourceDescriptions: [{name: api, url: ./api.yaml, type: openapi}]
workflows:
  - workflowId: w
    steps:
      - stepId: find
        operationId: findAccounts
        successCriteria:
          - {context: $statusCode, condition: '^2\d\d$', type: regex}
          - {context: $response.header.Content-Type, condition: '(?i)^application/json', type: regex}
          - {context: $response.body, condition: "$[?@.status == 'open']", type: jsonpath}
          - context: $response.body#/items
            condition: $[?length(@.id) > 2]
            type: {type: jsonpath, version: rfc9535}
        onFailure:
          - name: closed
            type: end
            criteria:
              - {context: $response.body, condition: "$..[?@.status == 'closed']", type: jsonpath}
"#,
        expect![[r#"
            workflow w (/workflows/0)
              step find: OperationId { source: None, id: "findAccounts" }
                when Regex { context: StatusCode, pattern: Pattern("^2\\d\\d$") }
                when Regex { context: Response(Header("content-type")), pattern: Pattern("(?i)^application/json") }
                when JsonPath { context: Response(Body("")), query: Query("$[?@.status == 'open']") }
                when JsonPath { context: Response(Body("/items")), query: Query("$[?length(@.id) > 2]") }
                action closed End
                  when JsonPath { context: Response(Body("")), query: Query("$..[?@.status == 'closed']") }
        "#]],
    );
}

#[test]
fn malformed_criteria_say_what_is_wrong() {
    check(
        r#"
arazzo: 1.0.1
info: {title: x, version: '1'}
sourceDescriptions: [{name: api, url: ./api.yaml, type: openapi}]
workflows:
  - workflowId: w
    steps:
      - stepId: find
        operationId: findAccounts
        successCriteria:
          - {condition: '^2', type: regex}
          - {context: 200, condition: '^2', type: regex}
          - {context: $statusCod, condition: '^2', type: regex}
          - {context: $statusCode, condition: '(2', type: regex}
          - {context: $statusCode, condition: '(?=2)', type: regex}
          - {context: $statusCode, condition: '\w{1000}{1000}', type: regex}
          - {context: $response.body, condition: "status == 'open'", type: jsonpath}
          - {context: $response.body, condition: "$[?@.status = 'open']", type: jsonpath}
          - {context: $response.body, condition: "$[?nope(@.a)]", type: jsonpath}
          - {context: $response.body, condition: '$.a', type: xpath}
          - {context: $response.body, condition: '$.a', type: jmespath}
          - {context: $response.body, condition: '$.a', type: 7}
          - {context: $response.body, condition: '$.a', type: {type: jsonpath, version: draft-goessner-dispatch-jsonpath-00}}
          - {context: $response.body, condition: '$.a', type: {type: xpath, version: xpath-30}}
          - {context: $response.body, condition: '$.a', type: {type: jsonpath}}
          - {context: $statusCode, condition: '$statusCode == 200'}
          - {context: $response.body, type: jsonpath}
          - {context: $request.path.account, condition: '/accounts/', type: regex}
          - {context: $steps.nobody.outputs.x, condition: "$", type: jsonpath}
"#,
        expect![[r#"
            workflow w (/workflows/0)
              step find: OperationId { source: None, id: "findAccounts" }
                when Regex { context: Request(Path("account")), pattern: Pattern("/accounts/") }
                when JsonPath { context: StepOutput { step: "nobody", name: "x", pointer: "" }, query: Query("$") }
            error: a `regex` criterion needs a `context`: the runtime expression it applies to, such as `$statusCode`
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/0
            error: `context` must be a runtime expression
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/1/context
            error: "$statusCod" is not a runtime expression ferry knows (expected `$url`, `$method`, `$statusCode`, `$request.`, `$response.`, `$inputs.`, `$outputs.` or `$steps.`)
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/2/context
            error: pattern "(2" is not a regular expression the linear-time engine reads: unclosed group
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/3/condition
            error: pattern "(?=2)" is not a regular expression the linear-time engine reads: look-around, including look-ahead and look-behind, is not supported
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/4/condition
            error: pattern "\\w{1000}{1000}" compiles to more than 1024 KiB: write a smaller one
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/5/condition
            error: "status == 'open'" is not an RFC 9535 JSONPath query: a query starts at its root, `$` (such as `$[?@.status == 'open']`)
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/6/condition
            error: "$[?@.status = 'open']" is not an RFC 9535 JSONPath query: in long-hand segment, expected closing ']' (at character 12)
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/7/condition
            error: "$[?nope(@.a)]" is not an RFC 9535 JSONPath query: in long-hand segment, function name 'nope' is not defined (at character 3)
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/8/condition
            error: `xpath` criteria are not supported: ferry reads JSON, so use `jsonpath`
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/9/type
            error: criterion type "jmespath" is not one of simple, regex, jsonpath
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/10/type
            error: `type` must be a string (simple, regex, jsonpath) or a Criterion Expression Type Object
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/11/type
            error: JSONPath "draft-goessner-dispatch-jsonpath-00" is not supported: ferry evaluates JSONPath as RFC 9535, so write `type: jsonpath`
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/12/type/version
            error: `xpath` criteria are not supported: ferry reads JSON, so use `jsonpath`
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/13/type/type
            error: `version` is missing
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/14/type
            error: a `simple` criterion with a `context` is not supported yet
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/15/context
            error: `condition` is missing
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/16
            warning: the pattern's slashes are part of it, matched as written: for a pattern without them, drop them (flags are written inside, as `(?i)`)
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria/17/condition
            error: no step before "find" is named "nobody"
              --> test.arazzo.yaml#/workflows/0/steps/0/successCriteria
        "#]],
    );
    let deep = format!("$[?{}@.a{}]", "(".repeat(40), ")".repeat(40));
    let error = expression::parse_query(&deep).expect_err("too deep");
    assert!(
        error.0.contains("nests brackets more than 32 deep"),
        "{error}"
    );
}

fn criterion(yaml: &str) -> Criterion {
    let options = LoadOptions::default();
    let value = crate::openapi::parse_with(yaml, "criterion.yaml", &options).expect("YAML");
    let mut reader = Reader {
        file: "criterion.yaml",
        diagnostics: Vec::new(),
        components: Components::default(),
    };
    let criterion = super::criteria::criterion(&mut reader, &value, "");
    assert!(reader.diagnostics.is_empty(), "{:?}", reader.diagnostics);
    criterion.expect("criterion reads")
}

#[test]
fn regex_and_jsonpath_criteria_hold_against_an_exchange() {
    let inputs = serde_json::json!({"name": "Rex"});
    let steps = std::collections::HashMap::new();
    let mut exchange = exchange();
    exchange.response_body = Some(serde_json::json!({
        "items": [{"id": 7, "name": "Rex", "status": "open"}, {"id": 8, "status": "closed"}],
        "total": 2
    }));
    let context = Context {
        inputs: &inputs,
        steps: &steps,
        outputs: None,
        exchange: Some(&exchange),
    };
    let holds = |yaml: &str| evaluate::holds(&criterion(yaml), &context);
    assert!(holds(
        "{context: $statusCode, condition: '^200$', type: regex}"
    ));
    assert!(
        !holds("{context: $statusCode, condition: '^20$', type: regex}"),
        "a number is matched as JSON writes it"
    );
    assert!(holds(
        "{context: $response.header.x-total, condition: '^\\d+$', type: regex}"
    ));
    assert!(
        holds("{context: $inputs.name, condition: 'e', type: regex}"),
        "a pattern matches anywhere unless anchored"
    );
    assert!(!holds(
        "{context: $inputs.name, condition: '^e', type: regex}"
    ));
    assert!(
        !holds("{context: $inputs.nobody, condition: '.*', type: regex}"),
        "a context that is not there holds nothing"
    );
    assert!(
        !holds("{context: $response.body, condition: '.*', type: regex}"),
        "an object is not text to match"
    );
    assert!(holds(
        "{context: $response.body#/items/0/status, condition: '^open$', type: regex}"
    ));

    // The context's value is the query's root node: `$[?…]` filters the root's children.
    assert!(holds(
        "{context: $response.body#/items, condition: \"$[?@.status == 'open']\", type: jsonpath}"
    ));
    assert!(!holds(
        "{context: $response.body#/items, condition: \"$[?@.status == 'gone']\", type: jsonpath}"
    ));
    assert!(
        !holds("{context: $response.body, condition: \"$[?@.status == 'open']\", type: jsonpath}"),
        "the body's children are `items` and `total`, neither with a status"
    );
    assert!(holds(
        "{context: $response.body, condition: \"$.items[?@.id > 7]\", type: jsonpath}"
    ));
    assert!(holds(
        "{context: $response.body, condition: \"$..[?@.status == 'closed']\", type: jsonpath}"
    ));
    assert!(holds(
        "{context: $response.body, condition: '$.total', type: jsonpath}"
    ));
    assert!(
        holds("{context: $response.body, condition: '$[?length(@) == 2]', type: jsonpath}"),
        "RFC 9535's functions are there"
    );
    assert!(holds(
        "{context: $response.body, condition: \"$.items[?match(@.name, 'R.x')]\", type: jsonpath}"
    ));
    assert!(!holds(
        "{context: $response.body, condition: '$.missing', type: jsonpath}"
    ));
    assert!(
        !holds("{context: $response.body#/nothing, condition: '$', type: jsonpath}"),
        "a context that is not there holds nothing, not even `$`"
    );
    assert!(holds(
        "{context: $statusCode, condition: '$', type: jsonpath}"
    ));

    let action = |name: &str, criteria: &[&str]| Action {
        name: name.into(),
        kind: ActionKind::End,
        criteria: criteria.iter().map(|yaml| criterion(yaml)).collect(),
        pointer: String::new(),
    };
    let actions = [
        action(
            "allClosed",
            &[
                "{context: $response.body, condition: \"$.items[?@.status != 'closed']\", type: jsonpath}",
            ],
        ),
        action(
            "someOpen",
            &[
                "{context: $statusCode, condition: '^2', type: regex}",
                "{context: $response.body, condition: \"$.items[?@.status == 'open']\", type: jsonpath}",
            ],
        ),
    ];
    let chosen = evaluate::choose(&actions, &context).map(|a| a.name.as_str());
    assert_eq!(
        chosen,
        Some("allClosed"),
        "the first whose criteria all hold"
    );
    assert_eq!(
        evaluate::choose(&actions[1..], &context).map(|a| a.name.as_str()),
        Some("someOpen")
    );
    assert!(evaluate::all_hold(&actions[1].criteria, &context));

    // The balance the end-to-end tests read: RFC 9535 filters the root's members, where
    // Redocly's respect filters a list holding the root (tests/e2e/python/test_workflows.py).
    let mut balance = exchange.clone();
    balance.response_body = Some(serde_json::json!({"amount": 1250, "currency": "EUR"}));
    let context = Context {
        exchange: Some(&balance),
        ..context
    };
    let holds = |yaml: &str| evaluate::holds(&criterion(yaml), &context);
    assert!(!holds(
        "{context: $response.body, condition: \"$[?@.currency == 'EUR']\", type: jsonpath}"
    ));
    assert!(holds(
        "{context: $response.body, condition: '$.currency', type: jsonpath}"
    ));
    assert!(holds(
        "{context: $response.body, condition: \"$..[?@ == 'EUR']\", type: jsonpath}"
    ));
}

#[test]
fn components_resolve_into_the_parameters_and_actions_they_name() {
    let yaml = r#"
arazzo: 1.0.1
info: {title: x, version: '1'}
sourceDescriptions: [{name: api, url: ./api.yaml, type: openapi}]
components:
  inputs:
    account:
      type: object
      required: [account]
      properties:
        account: {type: string}
        page: {$ref: '#/components/inputs/page'}
    page: {type: integer, minimum: 1}
  parameters:
    account: {name: account, in: path, value: $inputs.account}
    page: {name: page, in: query, value: 1}
  successActions:
    done: {name: done, type: end, criteria: [{context: $statusCode, condition: '^200$', type: regex}]}
  failureActions:
    again:
      name: again
      type: retry
      retryAfter: 0.5
      criteria: [{condition: $statusCode == 503}]
workflows:
  - workflowId: w
    inputs: {$ref: '#/components/inputs/account'}
    steps:
      - stepId: list
        operationId: listTransfers
        parameters:
          - reference: $components.parameters.account
          - {reference: $components.parameters.page, value: $inputs.page}
          - {name: limit, in: query, value: 10}
        onSuccess:
          - reference: $components.successActions.done
        onFailure:
          - reference: $components.failureActions.again
          - {name: stop, type: end}
  - workflowId: v
    inputs:
      type: object
      properties:
        account: {type: string}
        page: {$ref: '#/components/inputs/page', description: which page}
    steps:
      - stepId: one
        operationId: listTransfers
        parameters: [{reference: $components.parameters.page}]
"#;
    check(
        yaml,
        expect![[r#"
            workflow w (/workflows/0)
              step list: OperationId { source: None, id: "listTransfers" }
                Path account = Expression(Input { name: "account", pointer: "" })
                Query page = Expression(Input { name: "page", pointer: "" })
                Query limit = Literal(Number(10))
                action done End
                  when Regex { context: StatusCode, pattern: Pattern("^200$") }
                action again Retry(Retry { after_ms: Some(500), limit: 1, step: None })
                  when Simple(Condition { any: [[Comparison { left: Expression(StatusCode), test: Some((Equal, Literal(Number(503)))) }]] })
                action stop End
            workflow v (/workflows/1)
              step one: OperationId { source: None, id: "listTransfers" }
                Query page = Literal(Number(1))
            warning[workflow-optional-input-read]: parameter "page" of step "list" reads the optional input "page", which has no default: a call that leaves it out leaves this out too
              --> test.arazzo.yaml#/workflows/0/steps/0/parameters/1
        "#]],
    );
    let options = LoadOptions::default();
    let value = crate::openapi::parse_with(yaml, "test.arazzo.yaml", &options).expect("YAML");
    let (arazzo, _) = parse("test.arazzo.yaml", &value);
    assert_eq!(
        arazzo.workflows[0].inputs,
        Some(serde_json::json!({
            "type": "object",
            "required": ["account"],
            "properties": {"account": {"type": "string"}, "page": {"type": "integer", "minimum": 1}}
        })),
        "a `$ref` to components.inputs is the schema it names, at any depth"
    );
    assert_eq!(
        arazzo.workflows[1]
            .inputs
            .as_ref()
            .map(|i| &i["properties"]["page"]),
        Some(&serde_json::json!({
            "description": "which page",
            "allOf": [{"type": "integer", "minimum": 1}]
        })),
        "beside other keywords, the schema named is one of an allOf"
    );
    let step = &arazzo.workflows[0].steps[0];
    assert_eq!(
        step.parameters[1].pointer, "/workflows/0/steps/0/parameters/1",
        "a referenced parameter is where the reference is written"
    );
    assert_eq!(
        step.on_failure[0].pointer,
        "/workflows/0/steps/0/onFailure/0"
    );
}

#[test]
fn unknown_and_malformed_references_are_diagnostics_where_they_are_written() {
    check(
        r#"
arazzo: 1.0.1
info: {title: x, version: '1'}
sourceDescriptions: [{name: api, url: ./api.yaml, type: openapi}]
components:
  inputs:
    loop: {type: object, properties: {again: {$ref: '#/components/inputs/loop'}}}
    text: nope
    "bad name": {type: string}
  parameters:
    broken: {name: broken, in: body, value: 1}
    again: {reference: $components.parameters.broken}
  successActions:
    retry: {name: retry, type: retry}
  failureActions: [a]
workflows:
  - workflowId: w
    inputs: {type: object, properties: {a: {$ref: '#/components/inputs/loop'}, b: {$ref: '#/components/inputs/nobody'}}}
    steps:
      - stepId: one
        operationId: op
        parameters:
          - reference: $components.parameters.nobody
          - reference: $components.successActions.retry
          - reference: $components.parameters.broken
          - reference: 7
          - {reference: $components.parameters}
        onSuccess:
          - reference: $components.failureActions.again
          - {reference: $components.successActions.retry, value: 1}
          - reference: $components.successActions.gone
        onFailure:
          - reference: $components.failureActions.again
  - workflowId: v
    inputs: {$ref: './other.yaml#/inputs'}
    steps:
      - stepId: one
        operationId: op
"#,
        expect![[r#"
            workflow w (/workflows/0)
              step one: OperationId { source: None, id: "op" }
            workflow v (/workflows/1)
              step one: OperationId { source: None, id: "op" }
            error: component name "bad name" is not a name (letters, digits, `.`, `-`, `_`)
              --> test.arazzo.yaml#/components/inputs/bad name
            error: a reusable input must be a JSON Schema object
              --> test.arazzo.yaml#/components/inputs/text
            error: a component is written in full: it cannot be a `reference` itself
              --> test.arazzo.yaml#/components/parameters/again/reference
            error: parameter "broken" is `in: body`: expected path, query, header or cookie
              --> test.arazzo.yaml#/components/parameters/broken/in
            error: a `retry` action belongs in `onFailure`: a step that succeeded is not run again
              --> test.arazzo.yaml#/components/successActions/retry/type
            error: `failureActions` must be an object
              --> test.arazzo.yaml#/components/failureActions
            error: `components.inputs.loop` refers to itself: a tool's input schema cannot be endless
              --> test.arazzo.yaml#/components/inputs/loop/properties/again/$ref
            error: no input schema is named "nobody" in `components.inputs`
              --> test.arazzo.yaml#/workflows/0/inputs/properties/b/$ref
            error: no parameter is named "nobody" in `components.parameters` (it has: broken)
              --> test.arazzo.yaml#/workflows/0/steps/0/parameters/0/reference
            error: "$components.successActions.retry" is not a reference to a parameter (write `$components.parameters.NAME`)
              --> test.arazzo.yaml#/workflows/0/steps/0/parameters/1/reference
            error: `components.parameters.broken` could not be read (see its diagnostics)
              --> test.arazzo.yaml#/workflows/0/steps/0/parameters/2/reference
            error: `reference` must be a string
              --> test.arazzo.yaml#/workflows/0/steps/0/parameters/3/reference
            error: "$components.parameters" is not a reference to a parameter (write `$components.parameters.NAME`)
              --> test.arazzo.yaml#/workflows/0/steps/0/parameters/4/reference
            error: "$components.failureActions.again" is not a reference to a success action (write `$components.successActions.NAME`)
              --> test.arazzo.yaml#/workflows/0/steps/0/onSuccess/0/reference
            warning: `value` applies only to a reference to a parameter: it is ignored here
              --> test.arazzo.yaml#/workflows/0/steps/0/onSuccess/1/value
            error: `components.successActions.retry` could not be read (see its diagnostics)
              --> test.arazzo.yaml#/workflows/0/steps/0/onSuccess/1/reference
            error: no success action is named "gone" in `components.successActions` (it has: retry)
              --> test.arazzo.yaml#/workflows/0/steps/0/onSuccess/2/reference
            error: no failure action is named "again" in `components.failureActions` (it has none)
              --> test.arazzo.yaml#/workflows/0/steps/0/onFailure/0/reference
            error: a `$ref` in a workflow's inputs must name `#/components/inputs/NAME` of this document
              --> test.arazzo.yaml#/workflows/1/inputs/$ref
        "#]],
    );
}

/// The first step's payload of a one-step workflow whose `requestBody` is `body` (YAML), and
/// the diagnostics.
fn payload_of(body: &str) -> (Option<Template>, Vec<String>) {
    let yaml = format!(
        "arazzo: 1.0.1
info: {{title: x, version: '1'}}
sourceDescriptions: [{{name: api, url: ./api.yaml, type: openapi}}]
workflows:
  - workflowId: send
    inputs: {{type: object, properties: {{name: {{type: string}}, age: {{type: integer}}}}}}
    steps:
      - stepId: post
        operationId: createPet
        requestBody: {body}
"
    );
    let value = crate::openapi::parse_with(&yaml, "test.arazzo.yaml", &LoadOptions::default())
        .expect("test document is YAML");
    let (arazzo, diagnostics) = parse("test.arazzo.yaml", &value);
    let body = arazzo
        .workflows
        .first()
        .and_then(|w| w.steps.first())
        .and_then(|s| s.body.clone());
    (body, diagnostics.iter().map(ToString::to_string).collect())
}

#[test]
fn expressions_embedded_in_strings_and_replacements_fill_the_payload() {
    let inputs = serde_json::json!({"name": "Rex", "age": 3});
    let steps = std::collections::HashMap::new();
    let context = Context {
        inputs: &inputs,
        steps: &steps,
        outputs: None,
        exchange: None,
    };
    let (body, diagnostics) = payload_of(
        "{payload: {greeting: 'Hello {$inputs.name}, {$inputs.age} today', pet: {name: x, tags: [a, b]}},
          replacements: [{target: /pet/name, value: $inputs.name}, {target: /pet/tags/1, value: c},
                         {target: /pet/age, value: $inputs.age}]}",
    );
    // Only the warnings that `name` and `age` are optional and read.
    assert!(
        diagnostics
            .iter()
            .all(|d| d.starts_with("warning[workflow-optional-input-read]")),
        "{diagnostics:?}"
    );
    let body = body.expect("a payload");
    assert_eq!(
        evaluate::fill(&body, &context),
        Ok(serde_json::json!({
            "greeting": "Hello Rex, 3 today",
            "pet": {"name": "Rex", "tags": ["a", "c"], "age": 3},
        }))
    );
    // An embedded expression whose value is missing is the one reported.
    let (body, _) = payload_of("{payload: 'for {$inputs.nobody}'}");
    assert!(matches!(
        evaluate::fill(&body.expect("a payload"), &context),
        Err(Expression::Input { name, .. }) if name == "nobody"
    ));

    let (_, diagnostics) = payload_of(
        "{payload: {pet: $inputs.name, list: [1]},
          replacements: [{target: /pet/name, value: 1}, {target: //x, value: 1},
                         {target: /list/7, value: 1}, {target: pet, value: 1}, {target: /list}]}",
    );
    expect![[r#"
        error: target "/pet/name" lies inside a value an expression gives when the step runs: replacing inside it is not supported yet
          --> test.arazzo.yaml#/workflows/0/steps/0/requestBody/replacements/0/target
        error: target "//x": the payload has no ""
          --> test.arazzo.yaml#/workflows/0/steps/0/requestBody/replacements/1/target
        error: target "/list/7": the payload's array has no item "7"
          --> test.arazzo.yaml#/workflows/0/steps/0/requestBody/replacements/2/target
        error: target "pet" is not a JSON pointer (`/a/0/b`); XPath targets are not supported yet
          --> test.arazzo.yaml#/workflows/0/steps/0/requestBody/replacements/3/target
        error: a replacement needs a `value`
          --> test.arazzo.yaml#/workflows/0/steps/0/requestBody/replacements/4
        warning[workflow-optional-input-read]: the request body of step "post" reads the optional input "name", which has no default: a call that leaves it out leaves this out too
          --> test.arazzo.yaml#/workflows/0/steps/0/requestBody/payload
    "#]]
    .assert_eq(&(diagnostics.join("\n") + "\n"));
    let (_, diagnostics) = payload_of("{replacements: [{target: /a, value: 1}]}");
    assert_eq!(
        diagnostics,
        [
            "error: a replacement needs a `payload` to be made in\n  --> test.arazzo.yaml#/workflows/0/steps/0/requestBody/replacements/0"
        ]
    );
    let (_, diagnostics) = payload_of("{payload: 'open {$inputs.name'}");
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert!(
        diagnostics[0].contains("has no closing `}`"),
        "{diagnostics:?}"
    );
}

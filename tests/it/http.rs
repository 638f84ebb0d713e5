//! Streamable HTTP, raw: every row of issue 3's error table (status, JSON-RPC code, body),
//! era detection, header checks, Origin and Host, 405s, the body limit, notifications and the
//! subscription stream. Every JSON-RPC answer is validated against its revision's schema.

use std::time::Duration;

use expect_test::expect;
use ferry::transport::http::HttpOptions;
use serde_json::{Value, json};

use crate::support::*;

// Row: body is not JSON → -32700, 400 (both eras; the era cannot be read).
#[tokio::test]
async fn body_that_is_not_json_is_a_parse_error() {
    let running = start_default().await;
    let answer = post(&running.url, "{not json", &[]).await;
    assert_modern_error(&answer);
    assert_legacy_error(&answer);
    expect![[
        r#"400 {"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error: body is not JSON"}}"#
    ]]
    .assert_eq(&format!("{} {}", answer.status, answer.text));
}

// Row: not a request object, or a batch → -32600, 400.
#[tokio::test]
async fn batches_and_non_objects_are_invalid_requests() {
    let running = start_default().await;
    let batch = format!("[{}]", initialize());
    for body in [
        batch.as_str(),
        "42",
        r#"{"jsonrpc":"2.0","id":3}"#,
        r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#,
    ] {
        let answer = post(&running.url, body, &[]).await;
        assert_eq!(answer.status_and_code(), "400 -32600", "{body}");
        assert_modern_error(&answer);
        assert_legacy_error(&answer);
    }
    let answer = post(&running.url, &batch, &[]).await;
    expect![[r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"invalid request: batches are not supported"}}"#]]
        .assert_eq(&answer.text);
    let answer = post(&running.url, r#"{"jsonrpc":"2.0","id":3}"#, &[]).await;
    expect![[r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"invalid request: method is missing"}}"#]]
        .assert_eq(&answer.text);
}

// Row: `_meta` keys missing → -32602, 400 (modern only).
#[tokio::test]
async fn modern_request_without_required_meta_is_invalid_params() {
    let running = start_default().await;
    let headers = [
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tools/list"),
    ];
    let answer = post(&running.url, &legacy("tools/list", json!({})), &headers).await;
    assert_modern_error(&answer);
    expect![[r#"400 {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: missing _meta \"io.modelcontextprotocol/protocolVersion\""}}"#]]
        .assert_eq(&format!("{} {}", answer.status, answer.text));

    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}});
    let answer = post(&running.url, &body.to_string(), &headers).await;
    assert_modern_error(&answer);
    expect![[r#"400 {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"invalid params: missing _meta \"io.modelcontextprotocol/clientCapabilities\""}}"#]]
        .assert_eq(&format!("{} {}", answer.status, answer.text));
}

#[tokio::test]
async fn request_without_client_info_succeeds() {
    let running = start_default().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }}});
    let headers = [
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "server/discover"),
    ];
    let answer = post(&running.url, &body.to_string(), &headers).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert_schema(MODERN, "DiscoverResultResponse", &answer.json());
}

// Row: header missing or disagreeing → -32020, 400 (modern only).
#[tokio::test]
async fn missing_or_disagreeing_headers_are_header_mismatches() {
    let running = start_default().await;
    let (body, _) = modern(
        "tools/call",
        json!({"name": "get_pet", "arguments": {"petId": 7, "region": "eu"}}),
    );
    let cases: [(&str, Vec<(&str, &str)>); 8] = [
        (
            "no version header",
            vec![
                ("mcp-method", "tools/call"),
                ("mcp-name", "get_pet"),
                ("mcp-param-region", "eu"),
            ],
        ),
        (
            "no method header",
            vec![
                ("mcp-protocol-version", MODERN),
                ("mcp-name", "get_pet"),
                ("mcp-param-region", "eu"),
            ],
        ),
        (
            "method header in another case",
            vec![
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "TOOLS/CALL"),
                ("mcp-name", "get_pet"),
            ],
        ),
        (
            "no name header",
            vec![
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "tools/call"),
                ("mcp-param-region", "eu"),
            ],
        ),
        (
            "another name",
            vec![
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "tools/call"),
                ("mcp-name", "list_pets"),
            ],
        ),
        (
            "no param header",
            vec![
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "tools/call"),
                ("mcp-name", "get_pet"),
            ],
        ),
        (
            "another param value",
            vec![
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "tools/call"),
                ("mcp-name", "get_pet"),
                ("mcp-param-region", "us"),
            ],
        ),
        (
            "param header for an absent argument",
            vec![
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "tools/call"),
                ("mcp-name", "get_pet"),
                ("mcp-param-region", "eu"),
                ("mcp-param-tenant", "5"),
            ],
        ),
    ];
    for (case, headers) in cases {
        let answer = post(&running.url, &body, &headers).await;
        assert_eq!(
            answer.status_and_code(),
            "400 -32020",
            "{case}: {}",
            answer.text
        );
        assert_modern_error(&answer);
    }
    let headers = [
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tools/call"),
        ("mcp-name", "list_pets"),
    ];
    let answer = post(&running.url, &body, &headers).await;
    expect![[r#"400 {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"header mismatch: Mcp-Name header value 'list_pets' does not match body value 'get_pet'"}}"#]]
        .assert_eq(&format!("{} {}", answer.status, answer.text));
}

#[tokio::test]
async fn version_header_disagreeing_with_meta_is_a_header_mismatch() {
    // The conformance suite's case: header 2026-07-28, `_meta` v999.0.0.
    let running = start_default().await;
    let body = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "v999.0.0",
        "io.modelcontextprotocol/clientCapabilities": {},
    }}});
    let answer = post(
        &running.url,
        &body.to_string(),
        &[
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "tools/list"),
        ],
    )
    .await;
    assert_modern_error(&answer);
    expect![[r#"400 {"jsonrpc":"2.0","id":4,"error":{"code":-32020,"message":"header mismatch: MCP-Protocol-Version header value '2026-07-28' does not match _meta value 'v999.0.0'"}}"#]]
        .assert_eq(&format!("{} {}", answer.status, answer.text));
}

#[tokio::test]
async fn mirrored_headers_are_decoded_and_compared_numerically() {
    let running = start_default().await;
    let (body, _) = modern(
        "tools/call",
        json!({"name": "get_pet", "arguments": {"petId": 7, "region": "été", "tenant": 5.0}}),
    );
    let headers = [
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tools/call"),
        ("mcp-name", "get_pet"),
        ("mcp-param-region", "=?base64?w6l0w6k=?="),
        ("mcp-param-tenant", "5"),
    ];
    let answer = post(&running.url, &body, &headers).await;
    // The headers agree; the call goes on to the upstream, which this instance has none of.
    assert_eq!(answer.status_and_code(), "500 -32603", "{}", answer.text);
}

// Row: version not served → -32022, 400 (modern); legacy `initialize` answers its own version.
#[tokio::test]
async fn unserved_version_header_is_unsupported_protocol_version() {
    let running = start_default().await;
    let (body, _) = modern("tools/list", json!({}));
    let answer = post(
        &running.url,
        &body,
        &[
            ("mcp-protocol-version", "2099-01-01"),
            ("mcp-method", "tools/list"),
        ],
    )
    .await;
    assert_modern_error(&answer);
    expect![[r#"400 {"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":["2026-07-28","2025-11-25"],"requested":"2099-01-01"}}}"#]]
        .assert_eq(&format!("{} {}", answer.status, answer.text));
}

#[tokio::test]
async fn unserved_meta_version_is_unsupported_protocol_version() {
    // A modern envelope naming the legacy revision: the header agrees with `_meta`, and the
    // version is served, but not statelessly.
    let running = start_default().await;
    let body = json!({"jsonrpc": "2.0", "id": "x", "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": LEGACY,
        "io.modelcontextprotocol/clientCapabilities": {},
    }}});
    let answer = post(
        &running.url,
        &body.to_string(),
        &[
            ("mcp-protocol-version", LEGACY),
            ("mcp-method", "tools/list"),
        ],
    )
    .await;
    assert_modern_error(&answer);
    expect![[r#"400 {"jsonrpc":"2.0","id":"x","error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":["2026-07-28","2025-11-25"],"requested":"2025-11-25"}}}"#]]
        .assert_eq(&format!("{} {}", answer.status, answer.text));
}

#[tokio::test]
async fn legacy_initialize_with_an_unserved_version_answers_its_own() {
    let running = start_default().await;
    let body = legacy(
        "initialize",
        json!({"protocolVersion": "2024-01-01", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
    );
    let answer = post(&running.url, &body, &[]).await;
    assert_eq!(answer.status, 200);
    assert!(
        answer.headers.get("mcp-session-id").is_none(),
        "no session is minted"
    );
    let value = answer.json();
    assert_schema(LEGACY, "JSONRPCResultResponse", &value);
    assert_schema(LEGACY, "InitializeResult", &value["result"]);
    expect![[r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"pets","title":"Pets","version":"1.0.0"},"instructions":"A pet is read by its id."}}"#]]
        .assert_eq(&answer.text);
}

// Row: unknown method → -32601, 404 (modern) / 200 (legacy).
#[tokio::test]
async fn unknown_methods_are_404_for_modern_and_200_for_legacy() {
    let running = start_default().await;
    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "nope/nope",
    ] {
        let answer = post_modern(&running.url, method, json!({})).await;
        assert_eq!(
            answer.status_and_code(),
            "404 -32601",
            "{method}: {}",
            answer.text
        );
        assert_eq!(answer.json()["id"], 1, "the id is echoed");
        assert_modern_error(&answer);
    }
    let answer = post(&running.url, &legacy("nope/nope", json!({})), &[]).await;
    assert_legacy_error(&answer);
    expect![[r#"200 {"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found","data":{"method":"nope/nope"}}}"#]]
        .assert_eq(&format!("{} {}", answer.status, answer.text));
}

// Row: unknown tool, or params not of the request's shape → -32602, 200 (both eras).
#[tokio::test]
async fn unknown_tools_and_malformed_params_are_invalid_params_with_200() {
    let running = start_default().await;
    let answer = post_modern(
        &running.url,
        "tools/call",
        json!({"name": "deletePet", "arguments": {}}),
    )
    .await;
    assert_modern_error(&answer);
    expect![[r#"200 {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: unknown tool \"deletePet\"","data":{"name":"deletePet"}}}"#]]
        .assert_eq(&format!("{} {}", answer.status, answer.text));

    let answer = post_modern(
        &running.url,
        "tools/call",
        json!({"name": "get_pet", "arguments": [1]}),
    )
    .await;
    assert_modern_error(&answer);
    assert_eq!(answer.status_and_code(), "200 -32602", "{}", answer.text);

    let answer = post_modern(&running.url, "tools/call", json!({"arguments": {}})).await;
    assert_modern_error(&answer);
    assert_eq!(answer.status_and_code(), "200 -32602", "{}", answer.text);

    let answer = post(
        &running.url,
        &legacy("tools/call", json!({"name": "nope"})),
        &[],
    )
    .await;
    assert_legacy_error(&answer);
    assert_eq!(answer.status_and_code(), "200 -32602", "{}", answer.text);

    let answer = post(&running.url, &legacy("tools/call", json!("get_pet")), &[]).await;
    assert_legacy_error(&answer);
    assert_eq!(answer.status_and_code(), "200 -32602", "{}", answer.text);
}

// Row: ferry's own fault → -32603, 500, short message (here: no upstream client at all).
#[tokio::test]
async fn own_fault_is_internal_error_with_a_short_message() {
    let running = start_default().await;
    let answer = post_modern(
        &running.url,
        "tools/call",
        json!({"name": "get_pet", "arguments": {"petId": 1}}),
    )
    .await;
    assert_modern_error(&answer);
    expect![[r#"500 {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}}"#]]
        .assert_eq(&format!("{} {}", answer.status, answer.text));
    let answer = post(
        &running.url,
        &legacy(
            "tools/call",
            json!({"name": "get_pet", "arguments": {"petId": 1}}),
        ),
        &[],
    )
    .await;
    assert_legacy_error(&answer);
    assert_eq!(answer.status_and_code(), "500 -32603");
}

#[tokio::test]
async fn invalid_arguments_are_a_tool_error_for_both_eras() {
    let running = start_default().await;
    let answer = post_modern(
        &running.url,
        "tools/call",
        json!({"name": "get_pet", "arguments": {"petId": 0}}),
    )
    .await;
    assert_eq!(answer.status, 200);
    let value = answer.json();
    assert_schema(MODERN, "CallToolResultResponse", &value);
    assert_eq!(value["result"]["isError"], true);
    expect![[r#"invalid arguments; nothing was sent to the API:
- /petId: 0 is less than the minimum of 1"#]]
    .assert_eq(
        value["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default(),
    );

    let answer = post(
        &running.url,
        &legacy("tools/call", json!({"name": "get_pet", "arguments": {}})),
        &[],
    )
    .await;
    let value = answer.json();
    assert_schema(LEGACY, "JSONRPCResultResponse", &value);
    assert_schema(LEGACY, "CallToolResult", &value["result"]);
    assert!(
        value["result"].get("resultType").is_none(),
        "no resultType for legacy clients"
    );
    expect![[r#"invalid arguments; nothing was sent to the API:
- (arguments): "petId" is a required property"#]]
    .assert_eq(
        value["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default(),
    );
}

#[tokio::test]
async fn discover_and_list_answer_each_era_in_its_shape() {
    let running = start_default().await;
    let answer = post_modern(&running.url, "server/discover", json!({})).await;
    assert_eq!(answer.headers["content-type"], "application/json");
    assert_schema(MODERN, "DiscoverResultResponse", &answer.json());
    expect![[r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{"listChanged":true}},"instructions":"A pet is read by its id.","ttlMs":300000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"pets","title":"Pets","version":"1.0.0"}}}}"#]]
        .assert_eq(&answer.text);

    let answer = post_modern(&running.url, "tools/list", json!({})).await;
    let value = answer.json();
    assert_schema(MODERN, "ListToolsResultResponse", &value);
    // Each tool says which operation it calls (issue 11).
    assert_eq!(
        value["result"]["tools"][0]["_meta"]["dev.ferry/operation"],
        json!({"method": "GET", "path": "/get_pet"})
    );
    assert_eq!(value["result"]["ttlMs"], 300000);
    assert_eq!(value["result"]["cacheScope"], "public");

    let answer = post(
        &running.url,
        &legacy("tools/list", json!({})),
        &[("mcp-protocol-version", LEGACY)],
    )
    .await;
    let value = answer.json();
    assert_schema(LEGACY, "JSONRPCResultResponse", &value);
    assert_schema(LEGACY, "ListToolsResult", &value["result"]);
    let names: Vec<&str> = value["result"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["get_pet", "list_pets"]);

    let answer = post(&running.url, &legacy("ping", json!({})), &[]).await;
    assert_schema(LEGACY, "JSONRPCResultResponse", &answer.json());
    assert_eq!(answer.text, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
}

#[tokio::test]
async fn a_cursor_is_invalid_since_the_list_has_one_page() {
    let running = start_default().await;
    let answer = post_modern(&running.url, "tools/list", json!({"cursor": "abc"})).await;
    assert_modern_error(&answer);
    assert_eq!(answer.status_and_code(), "200 -32602");
}

#[tokio::test]
async fn legacy_request_with_an_unserved_version_header_is_refused() {
    let running = start_default().await;
    let answer = post(
        &running.url,
        &legacy("tools/list", json!({})),
        &[("mcp-protocol-version", "2025-06-18")],
    )
    .await;
    assert_legacy_error(&answer);
    assert_eq!(answer.status_and_code(), "400 -32022");
}

#[tokio::test]
async fn notifications_are_accepted_with_an_empty_body() {
    let running = start_default().await;
    for body in [
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    ] {
        let answer = post(&running.url, &body.to_string(), &[]).await;
        assert_eq!((answer.status, answer.text.as_str()), (202, ""));
    }
}

#[tokio::test]
async fn get_and_delete_are_405_with_allow_post() {
    let running = start_default().await;
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let response = client()
            .request(method.clone(), &running.url)
            .send()
            .await
            .expect("request");
        assert_eq!(response.status().as_u16(), 405, "{method}");
        assert_eq!(response.headers()["allow"], "POST");
    }
}

// `POST /mcp` is answered before the router, which has every other request: the endpoint is
// the path alone (a query does not change it), and no other path answers.
#[tokio::test]
async fn only_the_endpoint_path_answers_posts() {
    let running = start_default().await;
    let with_query = post_modern(
        &format!("{}?probe=1", running.url),
        "server/discover",
        json!({}),
    )
    .await;
    assert_eq!(with_query.status, 200, "{}", with_query.text);
    assert!(
        with_query.json()["result"]["supportedVersions"].is_array(),
        "{}",
        with_query.text
    );
    let root = running.url.trim_end_matches("/mcp");
    for path in ["/mcp/", "/MCP", "/other", "/"] {
        let answer = post(&format!("{root}{path}"), "{}", &[]).await;
        assert_eq!(answer.status, 404, "{path}: {}", answer.text);
    }
    let response = client().head(&running.url).send().await.expect("request");
    assert_eq!(response.status().as_u16(), 405);
    assert_eq!(response.headers()["allow"], "POST");
}

#[tokio::test]
async fn foreign_origin_is_forbidden_and_loopback_or_absent_allowed() {
    let options = HttpOptions {
        allowed_origins: vec!["https://app.example.com".into()],
        ..HttpOptions::default()
    };
    let running = start(server(), options).await;
    let answer = post(
        &running.url,
        &initialize(),
        &[("origin", "http://evil.example.com")],
    )
    .await;
    assert_eq!(answer.status, 403);
    assert_schema(LEGACY, "JSONRPCErrorResponse", &answer.json());
    for origin in [
        "http://localhost:3000",
        "http://127.0.0.1:9",
        "https://app.example.com",
    ] {
        let answer = post(&running.url, &initialize(), &[("origin", origin)]).await;
        assert_eq!(answer.status, 200, "{origin}");
    }
    assert_eq!(post(&running.url, &initialize(), &[]).await.status, 200);
}

#[tokio::test]
async fn foreign_host_is_forbidden_against_dns_rebinding() {
    let options = HttpOptions {
        allowed_hosts: vec!["mcp.example.com".into()],
        ..HttpOptions::default()
    };
    let running = start(server(), options).await;
    // The conformance suite's `dns-rebinding-protection` request.
    let answer = post(
        &running.url,
        &initialize(),
        &[
            ("host", "evil.example.com"),
            ("origin", "http://evil.example.com"),
        ],
    )
    .await;
    assert_eq!(answer.status, 403);
    // Without an Origin, so only the Host check can refuse it.
    let answer = post(&running.url, &initialize(), &[("host", "evil.example.com")]).await;
    assert_eq!(answer.status, 403, "{}", answer.text);
    assert_eq!(
        answer.json()["error"]["message"],
        "host not allowed",
        "{}",
        answer.text
    );
    for host in [
        "localhost",
        "localhost:8080",
        "127.0.0.1:1",
        "[::1]:8080",
        "mcp.example.com",
    ] {
        let answer = post(&running.url, &initialize(), &[("host", host)]).await;
        assert_eq!(answer.status, 200, "{host}");
    }
}

#[tokio::test]
async fn body_over_the_limit_is_413() {
    let options = HttpOptions {
        body_limit: 1024,
        ..HttpOptions::default()
    };
    let running = start(server(), options).await;
    let padding = "x".repeat(2048);
    let body = legacy("ping", json!({"padding": padding}));
    assert_eq!(post(&running.url, &body, &[]).await.status, 413);
    assert_eq!(
        post(&running.url, &legacy("ping", json!({})), &[])
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn a_body_that_stops_arriving_is_408_within_the_request_timeout() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let options = HttpOptions {
        request_timeout: Duration::from_millis(300),
        ..HttpOptions::default()
    };
    let running = start(server(), options).await;
    let address = running
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let mut stream = tokio::net::TcpStream::connect(&address)
        .await
        .expect("connect");
    // Promises 100 bytes, sends 10, then waits.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{{\"jsonrpc\""
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer))
        .await
        .expect("answered in time")
        .expect("read");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}

#[tokio::test]
async fn listen_is_acknowledged_first_and_ended_on_shutdown() {
    let options = HttpOptions {
        keep_alive: Duration::from_millis(50),
        ..HttpOptions::default()
    };
    let running = start(server(), options).await;
    let (body, headers) = modern(
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let mut request = client()
        .post(&running.url)
        .header("content-type", "application/json")
        .body(body);
    for (name, value) in &headers {
        request = request.header(*name, value);
    }
    let mut response = request.send().await.expect("request");
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut text = String::new();
    while !text.contains(": keep-alive") {
        let chunk = response.chunk().await.expect("chunk").expect("stream open");
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    running.shutdown().await;
    while let Some(chunk) = response.chunk().await.expect("chunk") {
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    let messages: Vec<Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).expect("json"))
        .collect();
    assert_eq!(messages.len(), 2, "{text}");
    assert_schema(
        MODERN,
        "SubscriptionsAcknowledgedNotification",
        &messages[0],
    );
    assert_eq!(
        messages[0]["params"]["notifications"],
        json!({"toolsListChanged": true}),
        "the tool list's changes are honoured"
    );
    assert_eq!(
        messages[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
    assert_schema(MODERN, "SubscriptionsListenResultResponse", &messages[1]);
}

#[tokio::test]
async fn no_session_id_is_minted_or_needed() {
    let running = start_default().await;
    let answer = post(&running.url, &initialize(), &[]).await;
    assert!(answer.headers.get("mcp-session-id").is_none());
    let answer = post(
        &running.url,
        &legacy("tools/list", json!({})),
        &[("mcp-session-id", "made-up")],
    )
    .await;
    assert_eq!(answer.status, 200);
}

/// Sends `request` as written on a connection of its own and reads until ferry closes it.
async fn raw(url: &str, request: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(address_of(url))
        .await
        .expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .expect("answered in time")
        .expect("read");
    String::from_utf8_lossy(&answer).into_owned()
}

fn address_of(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string()
}

/// A POST of `body` with `target` and the header lines `headers` (each ending in CRLF).
fn raw_post(target: &str, headers: &str, body: &str) -> String {
    format!(
        "POST {target} HTTP/1.1\r\n{headers}content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn status_of(answer: &str) -> &str {
    answer.split(' ').nth(1).unwrap_or(answer)
}

// Issue 9, defect 5: after `]` (or the host name) only nothing or `:port` may follow.
#[tokio::test]
async fn hosts_and_origins_with_anything_after_the_name_are_forbidden() {
    let running = start_default().await;
    for host in [
        "[::1].evil.example",
        "[::1]@evil.example",
        "[::1]x",
        "[::1]:",
        "[::1]:80x",
        "[::1]:80:80",
        "localhost.evil.example",
        "localhost@evil.example",
        "user@localhost",
        "127.0.0.1.evil",
        "localhost.",
        "localhost:",
        "localhost:http",
        "localhost:80:80",
    ] {
        let answer = post(&running.url, &initialize(), &[("host", host)]).await;
        assert_eq!(answer.status, 403, "{host}: {}", answer.text);
        assert_eq!(answer.json()["error"]["message"], "host not allowed");
    }
    for origin in [
        "http://[::1].evil.example",
        "http://[::1]x.evil.example",
        "http://[::1]@evil.example",
        "http://[::1]:",
        "http://localhost.evil.example",
        "http://localhost@evil.example",
        "http://user@localhost",
        "http://127.0.0.1.evil",
        "http://localhost.",
        "http://localhost:",
        "http://localhost:x",
    ] {
        let answer = post(&running.url, &initialize(), &[("origin", origin)]).await;
        assert_eq!(answer.status, 403, "{origin}: {}", answer.text);
        assert_eq!(answer.json()["error"]["message"], "origin not allowed");
    }
    for host in ["[::1]", "[::1]:8080", "localhost", "127.0.0.1:80"] {
        let answer = post(&running.url, &initialize(), &[("host", host)]).await;
        assert_eq!(answer.status, 200, "{host}: {}", answer.text);
    }
    for origin in [
        "http://[::1]",
        "https://[::1]:8443",
        "http://localhost:3000",
    ] {
        let answer = post(&running.url, &initialize(), &[("origin", origin)]).await;
        assert_eq!(answer.status, 200, "{origin}: {}", answer.text);
    }
}

// Issue 9, defect 6: RFC 9112 §3.2 requires 400 for more than one Host line.
#[tokio::test]
async fn two_host_lines_are_400() {
    let running = start_default().await;
    for hosts in [
        "host: localhost\r\nhost: evil.example\r\n",
        "host: evil.example\r\nhost: localhost\r\n",
        "host: localhost\r\nhost: localhost\r\n",
    ] {
        let answer = raw(&running.url, &raw_post("/mcp", hosts, &initialize())).await;
        assert_eq!(status_of(&answer), "400", "{hosts:?}: {answer}");
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
        let value: Value = serde_json::from_str(body).expect("JSON body");
        assert_schema(LEGACY, "JSONRPCErrorResponse", &value);
        assert_eq!(value["error"]["message"], "more than one host header");
    }
    let answer = raw(
        &running.url,
        &raw_post("/mcp", "host: localhost\r\n", &initialize()),
    )
    .await;
    assert_eq!(status_of(&answer), "200", "{answer}");
}

// Issue 9, defect 7: with an absolute-form target the target's authority names the server
// (RFC 9112 §3.2.2), and on HTTP/2 the `:authority`.
#[tokio::test]
async fn the_authority_of_an_absolute_target_is_checked() {
    let running = start_default().await;
    let address = address_of(&running.url);
    let host = format!("host: {address}\r\n");
    let answer = raw(
        &running.url,
        &raw_post("http://evil.example/mcp", &host, &initialize()),
    )
    .await;
    assert_eq!(status_of(&answer), "403", "{answer}");
    assert!(answer.contains("host not allowed"), "{answer}");
    let answer = raw(
        &running.url,
        &raw_post(&format!("http://{address}/mcp"), &host, &initialize()),
    )
    .await;
    assert_eq!(status_of(&answer), "200", "{answer}");

    // HTTP/2 without TLS, to a name that resolves here, with a loopback Host beside it.
    let socket: std::net::SocketAddr = address.parse().expect("address");
    let client = reqwest::Client::builder()
        .no_proxy()
        .http2_prior_knowledge()
        .resolve("evil.example", socket)
        .build()
        .expect("client");
    let url = format!("http://evil.example:{}/mcp", socket.port());
    for extra in [None, Some("localhost")] {
        let mut request = client
            .post(&url)
            .header("content-type", "application/json")
            .body(initialize());
        if let Some(host) = extra {
            request = request.header("host", host);
        }
        let response = request.send().await.expect("request");
        assert_eq!(response.version(), reqwest::Version::HTTP_2);
        assert_eq!(response.status().as_u16(), 403, "{extra:?}");
    }
}

// Issue 9, defect 8: a mirrored header given twice could be read either way by an
// intermediary, so it is a header mismatch even when both values agree with the body.
#[tokio::test]
async fn repeated_mirrored_headers_are_header_mismatches() {
    let running = start_default().await;
    let (body, _) = modern(
        "tools/call",
        json!({"name": "get_pet", "arguments": {"petId": 7, "region": "eu"}}),
    );
    let base = [
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tools/call"),
        ("mcp-name", "get_pet"),
        ("mcp-param-region", "eu"),
    ];
    for (repeated, second, expected) in [
        (
            "mcp-name",
            "list_pets",
            "Mcp-Name header occurs more than once",
        ),
        (
            "mcp-name",
            "get_pet",
            "Mcp-Name header occurs more than once",
        ),
        (
            "mcp-method",
            "tools/call",
            "Mcp-Method header occurs more than once",
        ),
        (
            "mcp-protocol-version",
            MODERN,
            "MCP-Protocol-Version header occurs more than once",
        ),
        (
            "mcp-param-region",
            "us",
            "Mcp-Param-Region header occurs more than once",
        ),
        (
            "mcp-param-other",
            "x",
            "Mcp-Param-other header occurs more than once",
        ),
    ] {
        let mut headers = base.to_vec();
        if repeated == "mcp-param-other" {
            headers.push((repeated, "y"));
        }
        headers.push((repeated, second));
        let answer = post(&running.url, &body, &headers).await;
        assert_eq!(
            answer.status_and_code(),
            "400 -32020",
            "{repeated}: {}",
            answer.text
        );
        assert_modern_error(&answer);
        assert_eq!(
            answer.json()["error"]["message"],
            format!("header mismatch: {expected}"),
            "{repeated}"
        );
    }
    // Once each, the call goes on (to the upstream this instance has none of).
    let answer = post(&running.url, &body, &base).await;
    assert_eq!(answer.status_and_code(), "500 -32603", "{}", answer.text);
}

// A body that comes in pieces is read whole, and refused once the pieces pass the limit.
#[tokio::test]
async fn a_chunked_body_is_joined_and_held_to_the_limit() {
    let options = HttpOptions {
        body_limit: 1024,
        ..HttpOptions::default()
    };
    let running = start(server(), options).await;
    let chunked = |body: &str| {
        let mut chunks = String::new();
        for piece in body.as_bytes().chunks(7) {
            let piece = std::str::from_utf8(piece).expect("ASCII");
            chunks.push_str(&format!("{:x}\r\n{piece}\r\n", piece.len()));
        }
        format!(
            "POST /mcp HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n{chunks}0\r\n\r\n",
            address_of(&running.url)
        )
    };
    let answer = raw(&running.url, &chunked(&initialize())).await;
    assert_eq!(status_of(&answer), "200", "{answer}");
    assert!(
        answer.contains(r#""protocolVersion":"2025-11-25""#),
        "{answer}"
    );
    let padding = "x".repeat(2048);
    let answer = raw(
        &running.url,
        &chunked(&legacy("ping", json!({"padding": padding}))),
    )
    .await;
    assert_eq!(status_of(&answer), "413", "{answer}");
}

// Issue 9: a declared length over the limit is refused before any of the body is waited for.
#[tokio::test]
async fn a_declared_length_over_the_limit_is_413_at_once() {
    let options = HttpOptions {
        body_limit: 1024,
        request_timeout: Duration::from_secs(3),
        ..HttpOptions::default()
    };
    let running = start(server(), options).await;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: 100000\r\nconnection: close\r\n\r\n{{\"jsonrpc\"",
        address_of(&running.url)
    );
    let answer = raw(&running.url, &head).await;
    assert_eq!(status_of(&answer), "413", "{answer}");
}

//! Calling a real HTTP upstream on loopback: the recorded request proves what was sent, the
//! tool result what came back.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::response::Response;
use expect_test::expect;
use ferry::catalog::{
    BodyEncoding, BodyPlacement, BodyPlan, CallSettings, Catalog, ParameterLocation, ParameterPlan,
    ParameterStyle, RequestPlan, ServerInfo, Tool,
};
use ferry::curation::CallOptions;
use ferry::curation::call::{
    NextPage, Pagination, UpstreamAuth, parse_call_options, parse_upstream_auth,
};
use ferry::mcp::ToolResult;
use ferry::upstream::{Outcome, Upstream, UpstreamError};
use http::Method;
use serde_json::{Map, Value, json};

/// One request as the test upstream received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    /// Path and query, exactly as they arrived.
    pub uri: String,
    pub headers: http::HeaderMap,
    pub body: Vec<u8>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }
}

/// What the test upstream answers, now or after a pause.
pub enum Reply {
    Now(Response),
    After(Duration, Response),
}

/// An axum app on 127.0.0.1:0 that records every request and answers by `reply` (given
/// the request and how many came before it).
pub struct TestUpstream {
    pub base: String,
    pub received: Arc<Mutex<Vec<Received>>>,
}

impl TestUpstream {
    pub async fn start(
        reply: impl Fn(&Received, usize) -> Reply + Send + Sync + 'static,
    ) -> TestUpstream {
        let received: Arc<Mutex<Vec<Received>>> = Arc::default();
        let reply = Arc::new(reply);
        let log = received.clone();
        let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
            let (log, reply) = (log.clone(), reply.clone());
            async move {
                let (parts, body) = request.into_parts();
                let body = axum::body::to_bytes(body, 16 << 20)
                    .await
                    .unwrap_or_default();
                let received = Received {
                    method: parts.method.to_string(),
                    uri: parts
                        .uri
                        .path_and_query()
                        .map(|pq| pq.as_str().to_string())
                        .unwrap_or_default(),
                    headers: parts.headers,
                    body: body.to_vec(),
                };
                let count = {
                    let mut log = log.lock().expect("log lock");
                    log.push(received.clone());
                    log.len() - 1
                };
                match reply(&received, count) {
                    Reply::Now(response) => response,
                    Reply::After(pause, response) => {
                        tokio::time::sleep(pause).await;
                        response
                    }
                }
            }
        });
        let address = crate::support::serve_app(app).await;
        TestUpstream {
            base: format!("http://{address}"),
            received,
        }
    }

    pub fn requests(&self) -> Vec<Received> {
        self.received.lock().expect("log lock").clone()
    }
}

pub fn respond(status: u16, headers: &[(&str, &str)], body: impl Into<Body>) -> Response {
    let mut response = Response::builder().status(status);
    for (name, value) in headers {
        response = response.header(*name, *value);
    }
    response.body(body.into()).expect("response")
}

pub fn json_reply(status: u16, body: Value) -> Reply {
    Reply::Now(respond(
        status,
        &[("content-type", "application/json")],
        body.to_string(),
    ))
}

/// A tool built by hand, as the compiler would build it.
pub fn tool(name: &str, method: Method, path: &str, parameters: Vec<ParameterPlan>) -> Tool {
    let schema = json!({"type": "object", "additionalProperties": false});
    let mut tool = Tool::new(name, schema, RequestPlan::new(method, path, parameters));
    tool.operation_mut().expect("an operation's tool").call = fast();
    tool
}

/// [`fast`] as the curation would write it.
pub fn fast_options() -> CallOptions {
    CallOptions {
        timeout_ms: Some(2_000),
        retry_backoff_ms: Some(5),
        ..CallOptions::default()
    }
}

/// Call settings that keep tests quick: short timeouts and backoff.
pub fn fast() -> CallSettings {
    CallSettings {
        timeout: Duration::from_millis(2_000),
        backoff: Duration::from_millis(5),
        ..CallSettings::default()
    }
}

pub fn catalog(base: &str, tools: &[Tool]) -> Catalog {
    let server = ServerInfo {
        name: "test".into(),
        title: None,
        version: "0".into(),
        instructions: None,
    };
    Catalog::new(server, Some(base.to_string()), tools.to_vec())
}

/// `catalog` with ferry's own upstream credential `auth`.
pub fn with_auth(catalog: &Catalog, auth: Option<UpstreamAuth>) -> Catalog {
    let mut catalog = catalog.clone();
    catalog.apis[0].upstream_auth = auth;
    catalog
}

pub fn client(base: &str, tool: &Tool) -> Upstream {
    Upstream::new(&catalog(base, std::slice::from_ref(tool))).expect("client")
}

pub async fn call(base: &str, tool: &Tool, arguments: Value) -> ToolResult {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    served(tool, client(base, tool).call(tool, &arguments).await)
}

/// A call of `tool` without arguments on `upstream`, whose kept connections earlier calls may
/// have left.
pub async fn call_on(upstream: &Upstream, tool: &Tool) -> ToolResult {
    served(tool, upstream.call(tool, &Map::new()).await)
}

/// The tool result `mcp` writes of a call's outcome.
pub fn served(tool: &Tool, outcome: Outcome) -> ToolResult {
    ToolResult::of_tool(tool, outcome)
}

pub fn text_of(result: &ToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn http_meta(result: &ToolResult) -> &Value {
    &result.meta["dev.ferry/http"]
}

/// `GET /pets/{petId}`, one simple path parameter.
fn get_pet() -> Tool {
    tool(
        "getPet",
        Method::GET,
        "/pets/{petId}",
        vec![ParameterPlan::new(
            "petId",
            ParameterLocation::Path,
            ParameterStyle::Simple,
            false,
        )],
    )
}

fn ok_reply() -> Reply {
    json_reply(200, json!({"ok": true}))
}

#[tokio::test]
async fn every_parameter_location_and_style_reaches_the_upstream() {
    let upstream = TestUpstream::start(|_, _| ok_reply()).await;
    let mut filter = ParameterPlan::new(
        "filter",
        ParameterLocation::Query,
        ParameterStyle::DeepObject,
        true,
    );
    filter.required = false;
    let tool = tool(
        "search",
        Method::GET,
        "/owners/{owner}/pets/{petId}",
        vec![
            ParameterPlan::new(
                "owner",
                ParameterLocation::Path,
                ParameterStyle::Label,
                false,
            ),
            ParameterPlan::new(
                "petId",
                ParameterLocation::Path,
                ParameterStyle::Matrix,
                true,
            ),
            ParameterPlan::new("tags", ParameterLocation::Query, ParameterStyle::Form, true),
            ParameterPlan::new("ids", ParameterLocation::Query, ParameterStyle::Form, false),
            ParameterPlan::new(
                "sizes",
                ParameterLocation::Query,
                ParameterStyle::SpaceDelimited,
                false,
            ),
            ParameterPlan::new(
                "colors",
                ParameterLocation::Query,
                ParameterStyle::PipeDelimited,
                false,
            ),
            filter,
            ParameterPlan::new(
                "X-Request-Id",
                ParameterLocation::Header,
                ParameterStyle::Simple,
                false,
            ),
            ParameterPlan::new(
                "session",
                ParameterLocation::Cookie,
                ParameterStyle::Form,
                true,
            ),
        ],
    );
    let result = call(
        &format!("{}/api/v3", upstream.base),
        &tool,
        json!({
            "owner": "ann",
            "petId": [1, 2],
            "tags": ["a b", "c"],
            "ids": [3, 4],
            "sizes": ["s", "m"],
            "colors": ["red", "blue"],
            "filter": {"age": {"gt": 2}, "kind": "cat"},
            "X-Request-Id": "r-1",
            "session": "s 1;x"
        }),
    )
    .await;
    assert!(!result.is_error, "{result:?}");
    let requests = upstream.requests();
    let [request] = requests.as_slice() else {
        panic!("one request expected: {requests:?}")
    };
    assert_eq!(request.method, "GET");
    expect![[r#"/api/v3/owners/.ann/pets/;petId=1;petId=2?tags=a%20b&tags=c&ids=3,4&sizes=s%20m&colors=red|blue&filter[age][gt]=2&filter[kind]=cat"#]]
        .assert_eq(&request.uri);
    assert_eq!(request.header("x-request-id"), Some("r-1"));
    assert_eq!(request.header("cookie"), Some("session=s%201%3Bx"));
}

#[tokio::test]
async fn hostile_path_values_never_move_the_request() {
    let upstream = TestUpstream::start(|_, _| ok_reply()).await;
    let tool = get_pet();
    let base = format!("{}/api", upstream.base);
    let client = client(&base, &tool);
    let call = |arguments: Value| {
        let arguments = arguments.as_object().cloned().unwrap_or_default();
        let (client, tool) = (client.clone(), tool.clone());
        async move { served(&tool, client.call(&tool, &arguments).await) }
    };
    for hostile in [
        "../admin",
        "..%2fadmin",
        "%2e%2e",
        "x?admin=true",
        "x#frag",
        "a/../../b",
        "//127.0.0.2/x",
        "@127.0.0.2",
        "\\..\\admin",
    ] {
        let result = call(json!({ "petId": hostile })).await;
        assert!(!result.is_error, "{hostile}: {result:?}");
    }
    for refused in ["..", ".", ""] {
        let result = call(json!({ "petId": refused })).await;
        assert!(result.is_error);
        assert!(text_of(&result).contains("invalid argument \"petId\""));
    }
    let uris: Vec<String> = upstream.requests().into_iter().map(|r| r.uri).collect();
    expect![[r#"
        [
            "/api/pets/..%2Fadmin",
            "/api/pets/..%252fadmin",
            "/api/pets/%252e%252e",
            "/api/pets/x%3Fadmin%3Dtrue",
            "/api/pets/x%23frag",
            "/api/pets/a%2F..%2F..%2Fb",
            "/api/pets/%2F%2F127.0.0.2%2Fx",
            "/api/pets/%40127.0.0.2",
            "/api/pets/%5C..%5Cadmin",
        ]
    "#]]
    .assert_debug_eq(&uris);
}

#[tokio::test]
async fn header_values_with_line_breaks_are_refused_before_sending() {
    let upstream = TestUpstream::start(|_, _| ok_reply()).await;
    let tool = tool(
        "traced",
        Method::GET,
        "/t",
        vec![
            ParameterPlan::new(
                "X-Trace",
                ParameterLocation::Header,
                ParameterStyle::Simple,
                false,
            ),
            ParameterPlan::new(
                "pref",
                ParameterLocation::Cookie,
                ParameterStyle::Form,
                true,
            ),
        ],
    );
    let client = client(&upstream.base, &tool);
    for arguments in [
        json!({"X-Trace": "a\r\nX-Admin: 1"}),
        json!({"X-Trace": "a\nb"}),
        json!({"X-Trace": "a\u{0}b"}),
        json!({"pref": "a\r\nSet: 1"}),
    ] {
        let result = served(
            &tool,
            client
                .call(&tool, arguments.as_object().expect("object"))
                .await,
        );
        assert!(result.is_error, "{arguments}");
        assert!(result.meta.is_empty(), "no HTTP facts without a request");
        let text = text_of(&result);
        assert!(text.starts_with("invalid argument"), "{text}");
        assert!(text.contains("CR, LF or NUL"), "{text}");
    }
    assert!(upstream.requests().is_empty());
}

fn body_tool(encoding: BodyEncoding, media_type: &str, placement: BodyPlacement) -> Tool {
    let mut tool = tool("upload", Method::POST, "/upload", Vec::new());
    tool.operation_mut().expect("an operation's tool").plan.body = Some(BodyPlan {
        media_type: media_type.into(),
        encoding,
        placement,
        required: true,
        fields: Vec::new(),
    });
    tool
}

#[tokio::test]
async fn bodies_arrive_with_their_media_type() {
    let upstream = TestUpstream::start(|_, _| Reply::Now(respond(201, &[], ""))).await;
    let merged = BodyPlacement::Merged(vec!["name".into(), "photo".into(), "tags".into()]);
    let cases = [
        (
            body_tool(BodyEncoding::Json, "application/json", merged.clone()),
            json!({"name": "Rex", "tags": ["a"]}),
        ),
        (
            body_tool(
                BodyEncoding::Form,
                "application/x-www-form-urlencoded",
                merged.clone(),
            ),
            json!({"name": "R x", "tags": ["a", "b"]}),
        ),
        (
            body_tool(
                BodyEncoding::Multipart {
                    files: vec!["photo".into()],
                },
                "multipart/form-data",
                merged,
            ),
            json!({"name": "Rex", "photo": "AAEC/w=="}),
        ),
        (
            body_tool(
                BodyEncoding::Text,
                "text/plain; charset=utf-8",
                BodyPlacement::Argument("body".into()),
            ),
            json!({"body": "hello"}),
        ),
        (
            body_tool(
                BodyEncoding::Binary,
                "application/octet-stream",
                BodyPlacement::Argument("body".into()),
            ),
            json!({"body": "AAEC/w=="}),
        ),
    ];
    for (tool, arguments) in &cases {
        let result = call(&upstream.base, tool, arguments.clone()).await;
        assert!(!result.is_error, "{result:?}");
        expect![[r#"the upstream answered 201 Created with an empty body: the call succeeded"#]]
            .assert_eq(&text_of(&result));
    }
    let requests = upstream.requests();
    let content_types: Vec<&str> = requests
        .iter()
        .map(|r| r.header("content-type").unwrap_or_default())
        .collect();
    assert_eq!(content_types[0], "application/json");
    assert_eq!(content_types[1], "application/x-www-form-urlencoded");
    assert!(content_types[2].starts_with("multipart/form-data; boundary="));
    assert_eq!(content_types[3], "text/plain; charset=utf-8");
    assert_eq!(content_types[4], "application/octet-stream");
    assert_eq!(requests[0].body, br#"{"name":"Rex","tags":["a"]}"#);
    assert_eq!(requests[1].body, b"name=R%20x&tags=a&tags=b");
    let multipart = &requests[2].body;
    let file_part =
        b"filename=\"photo\"\r\nContent-Type: application/octet-stream\r\n\r\n\x00\x01\x02\xff\r\n";
    assert!(
        multipart.windows(file_part.len()).any(|w| w == file_part),
        "{}",
        String::from_utf8_lossy(multipart)
    );
    assert_eq!(requests[3].body, b"hello");
    assert_eq!(requests[4].body, [0u8, 1, 2, 255]);
}

#[tokio::test]
async fn results_carry_json_text_images_and_blobs() {
    let upstream = TestUpstream::start(|request, _| {
        Reply::Now(match request.uri.as_str() {
            "/json" => respond(
                200,
                &[("content-type", "application/json"), ("etag", "\"7\"")],
                "[1, 2.50, \"x\"]",
            ),
            "/text" => respond(200, &[("content-type", "text/csv")], "a,b\n1,2\n"),
            "/image" => respond(
                200,
                &[("content-type", "image/png")],
                vec![137u8, 80, 78, 71],
            ),
            "/blob" => respond(
                200,
                &[("content-type", "application/pdf")],
                vec![37u8, 80, 68, 70],
            ),
            "/created" => respond(201, &[("location", "/pets/9")], ""),
            _ => respond(204, &[], ""),
        })
    })
    .await;
    let mut out = String::new();
    for path in ["/json", "/text", "/image", "/blob", "/created", "/nothing"] {
        let tool = tool("getThing", Method::GET, path, Vec::new());
        let result = call(&upstream.base, &tool, json!({})).await;
        out.push_str(&format!(
            "{path}: {}\n",
            serde_json::to_string(&result).expect("json")
        ));
    }
    expect![[r#"
        /json: {"content":[{"type":"text","text":"[1, 2.50, \"x\"]"}],"structuredContent":[1,2.5,"x"],"_meta":{"dev.ferry/http":{"status":200,"headers":{"content-type":"application/json","etag":"\"7\""}}}}
        /text: {"content":[{"type":"text","text":"a,b\n1,2\n"}],"_meta":{"dev.ferry/http":{"status":200,"headers":{"content-type":"text/csv"}}}}
        /image: {"content":[{"type":"image","data":"iVBORw==","mimeType":"image/png"}],"_meta":{"dev.ferry/http":{"status":200,"headers":{"content-type":"image/png"}}}}
        /blob: {"content":[{"type":"resource","resource":{"uri":"ferry://tools/getThing/response","mimeType":"application/pdf","blob":"JVBERg=="}}],"_meta":{"dev.ferry/http":{"status":200,"headers":{"content-type":"application/pdf"}}}}
        /created: {"content":[{"type":"text","text":"the upstream answered 201 Created with an empty body: the call succeeded"}],"_meta":{"dev.ferry/http":{"status":201,"headers":{"location":"/pets/9"}}}}
        /nothing: {"content":[{"type":"text","text":"the upstream answered 204 No Content with an empty body: the call succeeded"}],"_meta":{"dev.ferry/http":{"status":204,"headers":{}}}}
    "#]]
    .assert_eq(&out);
}

#[tokio::test]
async fn a_hanging_upstream_is_cut_by_the_total_timeout() {
    let upstream = TestUpstream::start(|_, _| {
        Reply::After(Duration::from_secs(10), respond(200, &[], "late"))
    })
    .await;
    let mut tool = tool("slow", Method::GET, "/slow", Vec::new());
    tool.operation_mut()
        .expect("an operation's tool")
        .call
        .timeout = Duration::from_millis(150);
    let started = Instant::now();
    let result = call(&upstream.base, &tool, json!({})).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(result.is_error);
    assert!(result.meta.is_empty(), "no response, so no HTTP facts");
    expect![[r#"the upstream did not answer within 150 ms"#]].assert_eq(&text_of(&result));
}

#[tokio::test]
async fn a_refused_connection_is_a_short_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    drop(listener);
    let tool = tool("getPet", Method::GET, "/pets", Vec::new());
    let result = call(&base, &tool, json!({})).await;
    assert!(result.is_error);
    assert!(result.meta.is_empty());
    expect![[r#"could not connect to the upstream"#]].assert_eq(&text_of(&result));
}

#[tokio::test]
async fn a_connection_that_never_opens_ends_at_the_connect_timeout() {
    // A listener that never accepts, its queue filled: further connections get no answer.
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind("127.0.0.1:0".parse().expect("address"))
        .expect("bind");
    let listener = socket.listen(1).expect("listen");
    let address = listener.local_addr().expect("address");
    let mut fillers = Vec::new();
    for _ in 0..4 {
        let connecting = tokio::net::TcpStream::connect(address);
        if let Ok(Ok(stream)) = tokio::time::timeout(Duration::from_millis(200), connecting).await {
            fillers.push(stream);
        }
    }
    let mut tool = tool("getPet", Method::GET, "/pets", Vec::new());
    tool.operation_mut()
        .expect("an operation's tool")
        .call
        .connect_timeout_ms = 200;
    tool.operation_mut()
        .expect("an operation's tool")
        .call
        .retries = 0;
    let started = Instant::now();
    let result = call(&format!("http://{address}"), &tool, json!({})).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(result.is_error);
    assert!(result.meta.is_empty());
    expect![[r#"could not connect to the upstream within 200 ms"#]].assert_eq(&text_of(&result));
    drop(listener);
}

#[tokio::test]
async fn a_body_cut_short_keeps_the_status_and_says_so() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buffer = [0u8; 4096];
            let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut buffer).await;
            let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"id\":";
            let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, head.as_bytes()).await;
            drop(stream);
        }
    });
    let tool = tool("getPet", Method::GET, "/pets", Vec::new());
    let result = call(&base, &tool, json!({})).await;
    assert!(result.is_error);
    assert_eq!(http_meta(&result)["status"], 200);
    expect![[r#"the upstream answered 200, then its response body could not be read completely"#]]
        .assert_eq(&text_of(&result));
}

#[tokio::test]
async fn a_flood_of_bytes_is_cut_at_the_size_cap() {
    let upstream = TestUpstream::start(|request, _| {
        // At most 16 MiB, streamed; the client must stop long before.
        let chunks = futures_util::stream::iter(
            (0..256).map(|_| Ok::<_, std::io::Error>(bytes::Bytes::from(vec![b'a'; 65_536]))),
        );
        let content_type = if request.uri == "/json" {
            "application/json"
        } else {
            "text/plain"
        };
        Reply::Now(respond(
            200,
            &[("content-type", content_type)],
            Body::from_stream(chunks),
        ))
    })
    .await;
    for (path, expected_error) in [("/text", false), ("/json", true)] {
        let mut tool = tool("flood", Method::GET, path, Vec::new());
        tool.operation_mut()
            .expect("an operation's tool")
            .call
            .max_response_bytes = 10_000;
        let result = call(&upstream.base, &tool, json!({})).await;
        assert_eq!(result.is_error, expected_error, "{path}");
        assert_eq!(
            result.meta["dev.ferry/result"],
            json!({"truncated": true, "limitBytes": 10_000})
        );
        assert_eq!(http_meta(&result)["status"], 200);
        if !expected_error {
            assert_eq!(
                result.content[0]["text"].as_str().map(str::len),
                Some(10_000)
            );
        } else {
            expect![[r#"the upstream answered 200 OK, but its response is larger than the 10000-byte limit (max_response_bytes) and was cut"#]]
                .assert_eq(&text_of(&result));
        }
    }
}

/// A raw upstream on loopback that counts the connections it accepts and gives each to
/// `serve`, in a task of its own; its base URL and the count.
async fn counting_upstream<F, Serving>(serve: F) -> (String, Arc<AtomicUsize>)
where
    F: Fn(tokio::net::TcpStream) -> Serving + Send + 'static,
    Serving: Future<Output = ()> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(serve(stream));
        }
    });
    (base, accepted)
}

/// A server that accepts connections and resets them at once, counting them.
async fn resetting_server() -> (String, Arc<AtomicUsize>) {
    counting_upstream(|stream| async move {
        let _ = stream.set_zero_linger();
        drop(stream);
    })
    .await
}

#[tokio::test]
async fn a_connection_reset_is_retried_for_safe_methods_only() {
    let (base, accepted) = resetting_server().await;
    let mut get = tool("getPet", Method::GET, "/pets", Vec::new());
    get.operation_mut()
        .expect("an operation's tool")
        .call
        .retries = 2;
    let result = call(&base, &get, json!({})).await;
    assert!(result.is_error);
    assert!(result.meta.is_empty());
    expect![[r#"the upstream closed the connection without an answer"#]]
        .assert_eq(&text_of(&result));
    assert_eq!(accepted.load(Ordering::SeqCst), 3);

    let (base, accepted) = resetting_server().await;
    let mut post = tool("createPet", Method::POST, "/pets", Vec::new());
    post.operation_mut()
        .expect("an operation's tool")
        .call
        .retries = 2;
    let result = call(&base, &post, json!({})).await;
    assert!(result.is_error);
    assert_eq!(accepted.load(Ordering::SeqCst), 1);

    // Any method the IANA HTTP Method Registry says is idempotent is sent again (QUERY,
    // PROPFIND); one it does not know is not.
    for (method, attempts) in [("QUERY", 3), ("PROPFIND", 3), ("PURGE", 1)] {
        let (base, accepted) = resetting_server().await;
        let method = Method::from_bytes(method.as_bytes()).expect("a method");
        let mut tool = tool("pets", method.clone(), "/pets", Vec::new());
        tool.operation_mut()
            .expect("an operation's tool")
            .call
            .retries = 2;
        let result = call(&base, &tool, json!({})).await;
        assert!(result.is_error);
        assert_eq!(accepted.load(Ordering::SeqCst), attempts, "{method}");
    }
}

#[tokio::test]
async fn gateway_errors_are_retried_then_the_answer_is_returned() {
    let upstream = TestUpstream::start(|_, count| match count {
        0 => Reply::Now(respond(502, &[], "")),
        1 => Reply::Now(respond(504, &[], "")),
        _ => ok_reply(),
    })
    .await;
    let tool = tool("getPet", Method::GET, "/pets", Vec::new());
    let result = call(&upstream.base, &tool, json!({})).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(upstream.requests().len(), 3);
}

#[tokio::test]
async fn retries_are_bounded_in_count() {
    let upstream = TestUpstream::start(|_, _| Reply::Now(respond(503, &[], "down"))).await;
    let mut tool = tool("getPet", Method::GET, "/pets", Vec::new());
    tool.operation_mut()
        .expect("an operation's tool")
        .call
        .retries = 3;
    let result = call(&upstream.base, &tool, json!({})).await;
    assert!(result.is_error);
    assert_eq!(http_meta(&result)["status"], 503);
    assert_eq!(upstream.requests().len(), 4);
}

#[tokio::test]
async fn post_is_never_retried_without_an_idempotency_key() {
    let upstream = TestUpstream::start(|_, _| Reply::Now(respond(503, &[], ""))).await;
    for method in [Method::POST, Method::PATCH] {
        let tool = tool("createPet", method, "/pets", Vec::new());
        let result = call(&upstream.base, &tool, json!({})).await;
        assert!(result.is_error);
    }
    assert_eq!(upstream.requests().len(), 2);
}

#[tokio::test]
async fn post_with_an_idempotency_key_reuses_one_key_per_call() {
    let upstream = TestUpstream::start(|_, count| match count % 3 {
        0 | 1 => Reply::Now(respond(503, &[], "")),
        _ => json_reply(201, json!({"id": 1})),
    })
    .await;
    let mut tool = tool("createPet", Method::POST, "/pets", Vec::new());
    tool.operation_mut()
        .expect("an operation's tool")
        .call
        .idempotency_header = Some(http::HeaderName::from_static("idempotency-key"));
    let upstream_client = client(&upstream.base, &tool);
    for _ in 0..2 {
        let result = served(&tool, upstream_client.call(&tool, &Map::new()).await);
        assert!(!result.is_error, "{result:?}");
        assert_eq!(http_meta(&result)["status"], 201);
    }
    let keys: Vec<String> = upstream
        .requests()
        .iter()
        .map(|r| r.header("idempotency-key").unwrap_or_default().to_string())
        .collect();
    assert_eq!(keys.len(), 6);
    assert!(keys.iter().all(|key| key.len() == 36), "{keys:?}");
    assert!(keys[0] == keys[1] && keys[1] == keys[2], "{keys:?}");
    assert!(keys[3] == keys[4] && keys[4] == keys[5], "{keys:?}");
    assert_ne!(keys[0], keys[3], "a fresh key per tool call");
}

#[tokio::test]
async fn an_idempotency_key_the_caller_gives_is_kept() {
    let upstream = TestUpstream::start(|_, _| json_reply(201, json!({}))).await;
    let mut tool = tool(
        "createPet",
        Method::POST,
        "/pets",
        vec![ParameterPlan::new(
            "Idempotency-Key",
            ParameterLocation::Header,
            ParameterStyle::Simple,
            false,
        )],
    );
    tool.operation_mut()
        .expect("an operation's tool")
        .call
        .idempotency_header = Some(http::HeaderName::from_static("idempotency-key"));
    let result = call(&upstream.base, &tool, json!({"Idempotency-Key": "mine-1"})).await;
    assert!(!result.is_error);
    let requests = upstream.requests();
    let keys: Vec<&str> = requests[0]
        .headers
        .get_all("idempotency-key")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    assert_eq!(keys, ["mine-1"]);
}

#[tokio::test]
async fn retry_after_is_honoured_within_the_time_budget() {
    let upstream = TestUpstream::start(|_, count| match count {
        0 => Reply::Now(respond(503, &[("retry-after", "1")], "")),
        _ => ok_reply(),
    })
    .await;
    let tool = tool("getPet", Method::GET, "/pets", Vec::new());
    let started = Instant::now();
    let result = call(&upstream.base, &tool, json!({})).await;
    assert!(!result.is_error, "{result:?}");
    assert!(started.elapsed() >= Duration::from_millis(950));
    assert_eq!(upstream.requests().len(), 2);

    // A wait beyond the call's time budget is not waited for: the answer comes back.
    let upstream =
        TestUpstream::start(|_, _| Reply::Now(respond(503, &[("retry-after", "120")], ""))).await;
    let started = Instant::now();
    let result = call(&upstream.base, &tool, json!({})).await;
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(result.is_error);
    assert_eq!(http_meta(&result)["headers"]["retry-after"], "120");
    assert_eq!(upstream.requests().len(), 1);
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let upstream = TestUpstream::start(|_, _| {
        Reply::Now(respond(
            302,
            &[("location", "http://127.0.0.2:1/steal")],
            "",
        ))
    })
    .await;
    let tool = tool("getPet", Method::GET, "/pets", Vec::new());
    let result = call(&upstream.base, &tool, json!({})).await;
    assert!(result.is_error);
    assert_eq!(
        http_meta(&result),
        &json!({"status": 302, "headers": {"location": "http://127.0.0.2:1/steal"}})
    );
    expect![[r#"the upstream answered 302 Found, a redirect to http://127.0.0.2:1/steal; ferry does not follow redirects"#]]
        .assert_eq(&text_of(&result));
    assert_eq!(upstream.requests().len(), 1);
}

fn env_with<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| {
        pairs
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.to_string())
    }
}

#[tokio::test]
async fn configured_credentials_reach_the_upstream_and_nothing_else_does() {
    let upstream = TestUpstream::start(|request, _| match request.uri.as_str() {
        uri if uri.starts_with("/denied") => Reply::Now(respond(
            401,
            &[
                ("content-type", "text/plain"),
                ("www-authenticate", "Bearer"),
                ("set-cookie", "a=b"),
            ],
            "token tok-1234 rejected",
        )),
        _ => ok_reply(),
    })
    .await;
    let tool = tool("getPet", Method::GET, "/pets", Vec::new());
    let env = env_with(&[("PETS_TOKEN", "tok-1234"), ("PETS_KEY", "k&y 1")]);
    let catalog = catalog(&upstream.base, std::slice::from_ref(&tool));
    let configs = [
        UpstreamAuth::Bearer {
            env: "PETS_TOKEN".into(),
        },
        UpstreamAuth::ApiKey {
            location: ParameterLocation::Header,
            name: "X-Api-Key".into(),
            env: "PETS_KEY".into(),
        },
        UpstreamAuth::ApiKey {
            location: ParameterLocation::Query,
            name: "api_key".into(),
            env: "PETS_KEY".into(),
        },
        UpstreamAuth::ApiKey {
            location: ParameterLocation::Cookie,
            name: "key".into(),
            env: "PETS_KEY".into(),
        },
    ];
    for auth in configs {
        let config = Some(auth);
        let client =
            Upstream::with_env(&with_auth(&catalog, config.clone()), &env).expect("client");
        let result = served(&tool, client.call(&tool, &Map::new()).await);
        assert!(!result.is_error);
        assert!(!format!("{client:?}").contains("tok-1234"));
        assert!(!format!("{client:?}").contains("k&y"));
    }
    let requests = upstream.requests();
    assert_eq!(requests[0].header("authorization"), Some("Bearer tok-1234"));
    assert_eq!(requests[1].header("x-api-key"), Some("k&y 1"));
    assert_eq!(requests[2].uri, "/pets?api_key=k%26y%201");
    assert_eq!(requests[3].header("cookie"), Some("key=k%26y%201"));

    // A 401 to ferry's own credentials is a configuration problem; the echoed token and the
    // authentication headers never reach the result.
    let denied = tool_at("/denied");
    let config = Some(UpstreamAuth::Bearer {
        env: "PETS_TOKEN".into(),
    });
    let client = Upstream::with_env(
        &with_auth(
            &self::catalog(&upstream.base, std::slice::from_ref(&denied)),
            config.clone(),
        ),
        &env,
    )
    .expect("client");
    let result = served(&denied, client.call(&denied, &Map::new()).await);
    assert!(result.is_error);
    let text = serde_json::to_string(&result).expect("json");
    assert!(!text.contains("tok-1234"), "{text}");
    assert!(
        !text.contains("www-authenticate") && !text.contains("set-cookie"),
        "{text}"
    );
    expect![[r#"the upstream answered 401 Unauthorized to ferry's own configured credentials: this is a configuration problem of this server that no change to the call can fix"#]]
        .assert_eq(result.content[0]["text"].as_str().unwrap_or_default());
}

fn tool_at(path: &str) -> Tool {
    tool("denied", Method::GET, path, Vec::new())
}

#[test]
fn missing_secrets_and_base_urls_fail_at_start_without_values() {
    let tool = tool("getPet", Method::GET, "/pets", Vec::new());
    let config = Some(UpstreamAuth::Bearer {
        env: "FERRY_TEST_UNSET_TOKEN".into(),
    });
    let catalog_with = |base: Option<&str>| {
        let mut catalog = catalog("http://127.0.0.1:1", std::slice::from_ref(&tool));
        catalog.apis[0].upstream = base.map(str::to_string);
        catalog
    };
    let error = |base: Option<&str>, config: &Option<UpstreamAuth>| match Upstream::with_env(
        &with_auth(&catalog_with(base), config.clone()),
        |_| None,
    ) {
        Ok(_) => "built".to_string(),
        Err(error) => error.to_string(),
    };
    expect![[r#"environment variable FERRY_TEST_UNSET_TOKEN is not set or empty (named by upstream_auth)"#]]
        .assert_eq(&error(Some("http://127.0.0.1:1"), &config));
    let plain: Option<UpstreamAuth> = None;
    expect![[r#"no upstream base URL: name one with `upstream:` or --upstream"#]]
        .assert_eq(&error(None, &plain));
    expect![[r#"invalid upstream base URL: it carries credentials; use upstream_auth"#]]
        .assert_eq(&error(Some("https://user:secret@api.example.com"), &plain));
    expect![[r#"invalid upstream base URL: the scheme must be http or https"#]]
        .assert_eq(&error(Some("file:///etc"), &plain));
    assert!(matches!(
        Upstream::with_env(&catalog_with(Some("ftp://x")), |_| None),
        Err(UpstreamError::InvalidBaseUrl(_))
    ));
}

#[tokio::test]
async fn link_pagination_gives_a_cursor_that_comes_back_as_the_query() {
    let upstream = TestUpstream::start(|request, _| {
        let page2 = request.uri.starts_with("/items?page=2");
        let link = if page2 {
            r#"<http://example.test/items?page=1>; rel="prev""#.to_string()
        } else {
            r#"<http://example.test/items?page=2&per_page=20&key=k1-api-key>; rel="next""#
                .to_string()
        };
        Reply::Now(respond(
            200,
            &[("content-type", "application/json"), ("link", &link)],
            "[]",
        ))
    })
    .await;
    let mut tool = tool(
        "listItems",
        Method::GET,
        "/items",
        vec![
            ParameterPlan::new(
                "per_page",
                ParameterLocation::Query,
                ParameterStyle::Form,
                true,
            ),
            ParameterPlan::new("q", ParameterLocation::Query, ParameterStyle::Form, true),
        ],
    );
    tool.operation_mut().expect("an operation's tool").call = CallSettings::resolve(&CallOptions {
        pagination: Some(Pagination {
            size_argument: Some("per_page".into()),
            size: None,
            next: Some(NextPage::Link),
            cursor_argument: None,
        }),
        ..fast_options()
    });
    let config = Some(UpstreamAuth::ApiKey {
        location: ParameterLocation::Query,
        name: "key".into(),
        env: "KEY".into(),
    });
    let client = Upstream::with_env(
        &with_auth(
            &catalog(&upstream.base, std::slice::from_ref(&tool)),
            config.clone(),
        ),
        env_with(&[("KEY", "k1-api-key")]),
    )
    .expect("client");
    let first = served(
        &tool,
        client
            .call(&tool, json!({"q": "cats"}).as_object().expect("object"))
            .await,
    );
    // The reported `link` header carried the key: it was redacted, and the result says so.
    assert_eq!(
        first.meta["dev.ferry/result"],
        json!({
            "nextCursor": "page=2&per_page=20",
            "more": true,
            "nextArguments": {"cursor": "page=2&per_page=20"},
            "redacted": true
        })
    );
    assert!(
        !serde_json::to_string(&first).expect("json").contains("k1"),
        "the credential is never in a result"
    );
    let second = served(
        &tool,
        client
            .call(
                &tool,
                json!({"cursor": "page=2&per_page=20"})
                    .as_object()
                    .expect("object"),
            )
            .await,
    );
    assert_eq!(second.meta["dev.ferry/result"], json!({"more": false}));
    let uris: Vec<String> = upstream.requests().into_iter().map(|r| r.uri).collect();
    assert_eq!(
        uris,
        [
            "/items?per_page=20&q=cats&key=k1-api-key",
            "/items?page=2&per_page=20&key=k1-api-key"
        ]
    );
}

#[tokio::test]
async fn cursor_fields_and_projection_shape_json_results() {
    let upstream = TestUpstream::start(|request, _| {
        let body = if request.uri.contains("after=c2") {
            json!({"data": [{"id": 3, "name": "c", "secret_notes": "x"}], "next": null})
        } else {
            json!({"data": [{"id": 1, "name": "a", "secret_notes": "x"}], "next": "c2"})
        };
        json_reply(200, body)
    })
    .await;
    let mut tool = tool(
        "listPets",
        Method::GET,
        "/pets",
        vec![
            ParameterPlan::new(
                "limit",
                ParameterLocation::Query,
                ParameterStyle::Form,
                true,
            ),
            ParameterPlan::new(
                "after",
                ParameterLocation::Query,
                ParameterStyle::Form,
                true,
            ),
        ],
    );
    tool.operation_mut().expect("an operation's tool").call = CallSettings::resolve(&CallOptions {
        pagination: Some(Pagination {
            size_argument: Some("limit".into()),
            size: Some(5),
            next: Some(NextPage::Field("/next".into())),
            cursor_argument: Some("after".into()),
        }),
        fields: Some(vec!["/data/id".into(), "/data/name".into()]),
        ..fast_options()
    });
    let client = client(&upstream.base, &tool);
    let first = served(&tool, client.call(&tool, &Map::new()).await);
    assert_eq!(
        first.structured_content,
        Some(json!({"data": [{"id": 1, "name": "a"}]}))
    );
    assert_eq!(
        first.meta["dev.ferry/result"],
        json!({
            "nextCursor": "c2",
            "more": true,
            "nextArguments": {"after": "c2"},
            "projected": true
        })
    );
    let second = served(
        &tool,
        client
            .call(&tool, json!({"after": "c2"}).as_object().expect("object"))
            .await,
    );
    assert_eq!(
        second.meta["dev.ferry/result"],
        json!({"more": false, "projected": true})
    );
    let uris: Vec<String> = upstream.requests().into_iter().map(|r| r.uri).collect();
    assert_eq!(uris, ["/pets?limit=5", "/pets?limit=5&after=c2"]);
}

#[test]
fn call_options_are_read_with_their_paths() {
    let yaml = json!({
        "timeout_ms": 0,
        "retries": 99,
        "idempotency_key_header": "Bad Header",
        "response_headers": ["x-rate-limit", "set-cookie"],
        "fields": ["id", "/a~2b"],
        "pagination": {"next": "body.cursor", "extra": 1},
        "connect_timeout_ms": 100,
        "upstream_auth": {"bearer": {"env": "X"}},
        "name": "not ours"
    });
    let mut diagnostics = Vec::new();
    let options = parse_call_options(
        yaml.as_object().expect("object"),
        "tools.getPet",
        &mut diagnostics,
    );
    let lines: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
    expect![[r#"
        [
            "error: must be a whole number greater than 0\n  --> curation:tools.getPet.timeout_ms",
            "error: must be a whole number from 0 to 10\n  --> curation:tools.getPet.retries",
            "error: \"Bad Header\" is not a valid header name\n  --> curation:tools.getPet.idempotency_key_header",
            "error: set-cookie is never reported: it carries cookies or credentials\n  --> curation:tools.getPet.response_headers.1",
            "error: \"/a~2b\" is not a valid JSON pointer (`~` must be followed by 0 or 1)\n  --> curation:tools.getPet.fields.1",
            "error: unknown key `extra` (expected one of: size_argument, size, next, cursor_argument)\n  --> curation:tools.getPet.pagination.extra",
            "error: must be `link` or a JSON pointer into the response body, like /next_cursor\n  --> curation:tools.getPet.pagination.next",
            "error: is only allowed at the top level of the file\n  --> curation:tools.getPet.upstream_auth",
        ]
    "#]]
    .assert_debug_eq(&lines);
    assert_eq!(options.response_headers, Some(vec!["x-rate-limit".into()]));
    assert_eq!(options.fields, Some(vec!["id".into()]));

    let good = json!({
        "timeout_ms": 5000,
        "connect_timeout_ms": 1000,
        "max_response_bytes": 65536,
        "retries": 0,
        "retry_backoff_ms": 50,
        "idempotency_key_header": "Idempotency-Key",
        "fields": ["/items/id"],
        "pagination": {"size_argument": "limit", "size": 10, "next": "link"}
    });
    let mut diagnostics = Vec::new();
    let defaults = parse_call_options(good.as_object().expect("object"), "", &mut diagnostics);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let tool_options = CallOptions {
        timeout_ms: Some(100),
        pagination: Some(Pagination {
            size: Some(50),
            ..Pagination::default()
        }),
        ..CallOptions::default()
    };
    let merged = defaults.overlay(&tool_options);
    assert_eq!(merged.timeout_ms, Some(100));
    assert_eq!(merged.max_response_bytes, Some(65536));
    assert_eq!(
        merged.pagination,
        Some(Pagination {
            size_argument: Some("limit".into()),
            size: Some(50),
            next: Some(NextPage::Link),
            cursor_argument: None,
        })
    );
    assert_eq!(CallSettings::resolve(&merged).link_cursor(), Some("cursor"));
}

#[test]
fn upstream_auth_is_read_with_its_paths() {
    let parse = |value: Value| {
        let mut diagnostics = Vec::new();
        let auth = parse_upstream_auth(&value, "upstream_auth", &mut diagnostics);
        let lines: Vec<String> = diagnostics.iter().map(|d| d.message.clone()).collect();
        format!("{auth:?} {lines:?}")
    };
    expect![[r#"Some(Bearer { env: "PETS_TOKEN" }) []"#]]
        .assert_eq(&parse(json!({"bearer": {"env": "PETS_TOKEN"}})));
    expect![[r#"Some(ApiKey { location: Query, name: "api_key", env: "K" }) []"#]].assert_eq(
        &parse(json!({"api_key": {"in": "query", "name": "api_key", "env": "K"}})),
    );
    expect![[r#"Some(ApiKey { location: Header, name: "X-Api-Key", env: "K" }) []"#]].assert_eq(
        &parse(json!({"api_key": {"name": "X-Api-Key", "env": "K"}})),
    );
    expect![[r#"None ["unknown credential kind; expected one of: api_key, bearer, basic, client_credentials, token_exchange"]"#]]
        .assert_eq(&parse(json!({"oauth": {}})));
    expect![[r#"None ["must have exactly one key: api_key, bearer, basic, client_credentials, token_exchange"]"#]].assert_eq(&parse(
        json!({"bearer": {"env": "A"}, "api_key": {"name": "x", "env": "B"}}),
    ));
    expect![[r#"None ["unknown key `token` (expected one of: env)", "needs `env`, the environment variable holding the secret"]"#]]
        .assert_eq(&parse(json!({"bearer": {"token": "literal"}})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_share_one_client_across_threads() {
    let upstream =
        TestUpstream::start(|request, _| json_reply(200, json!({"uri": request.uri}))).await;
    let tool = get_pet();
    let client = client(&upstream.base, &tool);
    let calls: Vec<_> = (0..16)
        .map(|id| {
            let (client, tool) = (client.clone(), tool.clone());
            tokio::spawn(async move {
                let arguments = json!({ "petId": id });
                let result = served(
                    &tool,
                    client
                        .call(&tool, arguments.as_object().expect("object"))
                        .await,
                );
                (id, result)
            })
        })
        .collect();
    for call in calls {
        let (id, result) = call.await.expect("task");
        assert_eq!(
            result.structured_content,
            Some(json!({"uri": format!("/pets/{id}")}))
        );
    }
    assert_eq!(upstream.requests().len(), 16);
}

/// Every form in which `secret` appears in `text`, looked for the ways a client could read
/// it: as written, percent-decoded, inside the base64 of a larger text, and inside any
/// string that is itself JSON (a text block holding a body).
fn secret_forms(text: &str, secret: &str, found: &mut Vec<String>) {
    if text.contains(secret) {
        found.push(format!("raw in {text:?}"));
    }
    let decoded = percent_encoding::percent_decode_str(text).decode_utf8_lossy();
    if decoded.contains(secret) {
        found.push(format!("percent-encoded in {text:?}"));
    }
    if percent_encoding::percent_decode_str(&decoded)
        .decode_utf8_lossy()
        .contains(secret)
    {
        found.push(format!("percent-encoded twice in {text:?}"));
    }
    let unwrapped = text.replace(['\r', '\n'], "");
    if let Some(run) = base64_hiding(&unwrapped, secret) {
        found.push(format!("base64 ({run}) in {text:?}"));
    }
    if let Ok(value) = serde_json::from_str::<Value>(text)
        && !value.is_string()
    {
        secret_forms_in_value(&value, secret, found);
    }
}

fn secret_forms_in_value(value: &Value, secret: &str, found: &mut Vec<String>) {
    use base64::Engine as _;
    match value {
        Value::String(text) => {
            secret_forms(text, secret, found);
            if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(text) {
                secret_forms(&String::from_utf8_lossy(&bytes), secret, found);
            }
        }
        Value::Array(items) => {
            for item in items {
                secret_forms_in_value(item, secret, found);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                secret_forms(key, secret, found);
                secret_forms_in_value(item, secret, found);
            }
        }
        _ => {}
    }
}

/// A run of base64 characters in `text` whose decoding holds `secret`, if any. Decoded from
/// each of the run's first four characters (where a larger encoded text starts is unknown),
/// in both alphabets: a check that decodes, not a copy of how ferry searches.
fn base64_hiding(text: &str, secret: &str) -> Option<String> {
    use base64::Engine as _;
    let runs = text.split(|c: char| !(c.is_ascii_alphanumeric() || "+/-_".contains(c)));
    for run in runs.filter(|run| run.len() >= 4) {
        for skip in 0..4 {
            let Some(rest) = run.get(skip..) else {
                continue;
            };
            let whole = &rest[..rest.len() / 4 * 4];
            for engine in [
                base64::engine::general_purpose::STANDARD_NO_PAD,
                base64::engine::general_purpose::URL_SAFE_NO_PAD,
            ] {
                if let Ok(bytes) = engine.decode(whole)
                    && bytes
                        .windows(secret.len())
                        .any(|window| window == secret.as_bytes())
                {
                    return Some(run.to_string());
                }
            }
        }
    }
    None
}

/// `text` as PHP's `json_encode` writes it inside a string: every `/` escaped.
fn php_escaped(text: &str) -> String {
    text.replace('/', "\\/")
}

/// `text` with every character a `\u` escape.
fn unicode_escaped(text: &str) -> String {
    text.encode_utf16()
        .map(|unit| format!("\\u{unit:04x}"))
        .collect()
}

/// An upstream that answers `/echo/{form}` with the secret it was sent in the form named.
/// The secret is what `secret_of` takes from the request's `Authorization` header.
async fn echoing_upstream(secret_of: fn(&str) -> String) -> TestUpstream {
    use base64::Engine as _;
    TestUpstream::start(move |request, _| {
        let secret = secret_of(request.header("authorization").unwrap_or_default());
        let percent = |upper: bool| -> String {
            secret
                .bytes()
                .map(|byte| {
                    if upper {
                        format!("%{byte:02X}")
                    } else if byte.is_ascii_alphanumeric() {
                        (byte as char).to_string()
                    } else {
                        format!("%{byte:02x}")
                    }
                })
                .collect()
        };
        let json = |status: u16, body: String| {
            Reply::Now(respond(status, &[("content-type", "application/json")], body))
        };
        let form = request.uri.trim_start_matches("/echo/");
        match form {
            // The same server is the token endpoint of the `client_credentials` test.
            "/token" => json(
                200,
                r#"{"access_token":"obtained\/t0ken+9","token_type":"Bearer","expires_in":300}"#
                    .into(),
            ),
            "php" => json(200, format!(r#"{{"echo":"{}"}}"#, php_escaped(&secret))),
            "unicode" => json(200, format!(r#"{{"echo":"{}"}}"#, unicode_escaped(&secret))),
            "key" => json(200, format!(r#"{{"{}":1}}"#, php_escaped(&secret))),
            "mixed" => {
                // Half the characters escaped, half percent-encoded, in one string.
                let mixed: String = secret
                    .chars()
                    .enumerate()
                    .map(|(index, char)| match index % 3 {
                        0 => format!("\\u{:04x}", char as u32),
                        1 => format!("%{:02X}", char as u32),
                        _ => php_escaped(&char.to_string()),
                    })
                    .collect();
                json(200, format!(r#"{{"echo":"{mixed}"}}"#))
            }
            "percent" => json(
                200,
                format!(r#"{{"next":"https://x.example/?t={}"}}"#, percent(false)),
            ),
            "base64" => {
                let encode = |prefix: &str| {
                    let text = format!("{prefix}{secret}");
                    [
                        base64::engine::general_purpose::STANDARD.encode(&text),
                        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&text),
                    ]
                };
                let all: Vec<String> = ["", "a", "ab"].into_iter().flat_map(encode).collect();
                json(200, php_escaped(&json!(all).to_string()))
            }
            // JSON inside a JSON string: the secret's escapes escaped again.
            "nested" => {
                let inner = format!(r#"{{"t":"{}"}}"#, php_escaped(&secret));
                json(200, json!({"echo": inner}).to_string().replace('/', "\\/"))
            }
            "percent_twice" => json(
                200,
                format!(r#"{{"next":"https://x.example/?t={}"}}"#, percent(true).replace('%', "%25")),
            ),
            // MIME base64, in lines of 76, the secret's encoding across a break.
            "wrapped" => {
                let encoded = base64::engine::general_purpose::STANDARD
                    .encode(format!("{}{secret}", "x".repeat(50)));
                let lines: Vec<&str> = encoded
                    .as_bytes()
                    .chunks(76)
                    .map(|line| std::str::from_utf8(line).unwrap_or_default())
                    .collect();
                Reply::Now(respond(200, &[("content-type", "text/plain")], lines.join("\r\n")))
            }
            "text" => Reply::Now(respond(
                200,
                &[("content-type", "text/plain")],
                format!(
                    "sent \"{}\" and {}",
                    php_escaped(&secret),
                    percent(true)
                ),
            )),
            "problem" => Reply::Now(respond(
                403,
                &[("content-type", "application/problem+json")],
                format!(
                    r#"{{"title":"{0}","detail":"token {0} refused","type":"https://x.example/{1}"}}"#,
                    php_escaped(&secret),
                    percent(true)
                ),
            )),
            "headers" => Reply::Now(respond(
                200,
                &[
                    ("content-type", "application/json"),
                    ("link", &format!("<https://x.example/?t={}>; rel=\"next\"", percent(true))),
                    ("location", &format!("https://x.example/{}", percent(false))),
                ],
                "{}",
            )),
            "redirect" => Reply::Now(respond(
                302,
                &[("location", &format!("https://x.example/?t={}", percent(true)))],
                "",
            )),
            "binary" => {
                let mut body = vec![0xff, 0x00];
                body.extend_from_slice(secret.as_bytes());
                body.extend_from_slice(php_escaped(&secret).as_bytes());
                Reply::Now(respond(
                    200,
                    &[("content-type", "application/octet-stream")],
                    body,
                ))
            }
            "image" => {
                let mut body = b"\x89PNG".to_vec();
                body.extend_from_slice(unicode_escaped(&secret).as_bytes());
                Reply::Now(respond(200, &[("content-type", "image/png")], body))
            }
            _ => json(404, "{}".into()),
        }
    })
    .await
}

const ECHO_FORMS: &[&str] = &[
    "php",
    "unicode",
    "key",
    "mixed",
    "percent",
    "base64",
    "text",
    "problem",
    "headers",
    "redirect",
    "binary",
    "image",
    "nested",
    "percent_twice",
    "wrapped",
];

/// ferry over HTTP calling `echo` on `upstream` with `auth`, the secrets read from `env`.
async fn echo_server(
    upstream: &TestUpstream,
    auth: UpstreamAuth,
    env: &[(&str, &str)],
) -> crate::support::Running {
    let echo = Tool::new(
        "echo",
        json!({
            "type": "object",
            "properties": {"form": {"type": "string"}},
            "required": ["form"],
            "additionalProperties": false
        }),
        RequestPlan::new(
            Method::GET,
            "/echo/{form}",
            vec![ParameterPlan::new(
                "form",
                ParameterLocation::Path,
                ParameterStyle::Simple,
                false,
            )],
        ),
    );
    let catalog = catalog(&upstream.base, &[echo]);
    let config = Some(auth);
    let client =
        Upstream::with_env(&with_auth(&catalog, config.clone()), env_with(env)).expect("client");
    let server =
        ferry::mcp::Server::new(&catalog, Some(client), ferry::mcp::ServerOptions::default());
    crate::support::start(server, Default::default()).await
}

/// Calls `echo` in every form and checks that none of `secrets` is in the whole answer, in
/// any form, and that each answer says it was redacted.
async fn assert_echoes_are_redacted(running: &crate::support::Running, secrets: &[&str]) {
    for form in ECHO_FORMS {
        let answer = crate::support::post_modern(
            &running.url,
            "tools/call",
            json!({"name": "echo", "arguments": {"form": form}}),
        )
        .await;
        assert_eq!(answer.status, 200, "{form}: {}", answer.text);
        let value = answer.json();
        let mut found = Vec::new();
        for secret in secrets {
            secret_forms(&answer.text, secret, &mut found);
            secret_forms_in_value(&value, secret, &mut found);
        }
        assert!(found.is_empty(), "{form}: {found:#?}\n{}", answer.text);
        assert_eq!(
            value["result"]["_meta"]["dev.ferry/result"]["redacted"], true,
            "{form}: {}",
            answer.text
        );
        if !matches!(*form, "binary" | "image") {
            assert!(
                answer.text.contains("[redacted]"),
                "{form}: {}",
                answer.text
            );
        }
    }
}

// Regression test for issue 9: a token echoed JSON-escaped (`\/`, `\u…`) passed the byte
// search, and parsing the body restored it in `structuredContent`.
#[tokio::test]
async fn an_echoed_bearer_token_is_redacted_in_every_form_it_is_served() {
    let token = "Ab3/x+Yz9=Q7k_mN.w~";
    let upstream = echoing_upstream(|authorization| {
        authorization
            .strip_prefix("Bearer ")
            .unwrap_or_default()
            .to_string()
    })
    .await;
    let running = echo_server(
        &upstream,
        UpstreamAuth::Bearer {
            env: "ECHO_TOKEN".into(),
        },
        &[("ECHO_TOKEN", token)],
    )
    .await;
    assert_echoes_are_redacted(&running, &[token]).await;
    assert_eq!(upstream.requests().len(), ECHO_FORMS.len());

    // The parsed value is redacted where the secret was, and the rest kept.
    let answer = crate::support::post_modern(
        &running.url,
        "tools/call",
        json!({"name": "echo", "arguments": {"form": "php"}}),
    )
    .await;
    let value = answer.json();
    assert_eq!(
        value["result"]["structuredContent"],
        json!({"echo": "[redacted]"})
    );
    assert_eq!(
        value["result"]["content"][0]["text"],
        r#"{"echo":"[redacted]"}"#
    );
}

// Regression test for issue 9: a basic credential is base64 of `user:password`; the
// password and the pair are secrets as well as the header's token.
#[tokio::test]
async fn an_echoed_basic_credential_is_redacted_as_password_pair_and_token() {
    use base64::Engine as _;
    let upstream = echoing_upstream(|authorization| {
        let token = authorization.strip_prefix("Basic ").unwrap_or_default();
        let pair = base64::engine::general_purpose::STANDARD
            .decode(token)
            .unwrap_or_default();
        let pair = String::from_utf8(pair).unwrap_or_default();
        pair.split_once(':').unwrap_or_default().1.to_string()
    })
    .await;
    let auth = parse_auth(
        json!({"basic": {"username": "ferry-user", "password": {"env": "ECHO_PASSWORD"}}}),
    );
    let password = "p4ss/w0rd+long=";
    let running = echo_server(&upstream, auth, &[("ECHO_PASSWORD", password)]).await;
    let pair = format!("ferry-user:{password}");
    let token = base64::engine::general_purpose::STANDARD.encode(&pair);
    assert_echoes_are_redacted(&running, &[password, &pair, &token]).await;
}

// Regression test for issue 9: a token ferry obtained is redacted in every form too.
#[tokio::test]
async fn an_echoed_obtained_token_is_redacted_in_every_form_it_is_served() {
    let upstream = echoing_upstream(|authorization| {
        authorization
            .strip_prefix("Bearer ")
            .unwrap_or_default()
            .to_string()
    })
    .await;
    let auth = parse_auth(json!({"client_credentials": {
        "token_url": format!("{}/token", upstream.base),
        "client_id": "ferry",
        "client_secret": {"env": "ECHO_SECRET"}
    }}));
    let running = echo_server(&upstream, auth, &[("ECHO_SECRET", "client-secret")]).await;
    assert_echoes_are_redacted(&running, &["obtained/t0ken+9"]).await;
}

fn parse_auth(value: Value) -> UpstreamAuth {
    let mut diagnostics = Vec::new();
    let auth = parse_upstream_auth(&value, "upstream_auth", &mut diagnostics);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    auth.expect("upstream_auth")
}

// Regression test for issue 9: `Retry-After: 18446744073709551615` overflowed the retry's
// instant, and the call was never answered.
#[tokio::test]
async fn a_retry_after_past_any_deadline_gives_the_answer_that_came() {
    for value in [
        "18446744073709551615",
        "99999999999999999999999",
        "Fri, 31 Dec 9999 23:59:59 GMT",
        "Fri, 31 Dec 99999999999999 23:59:59 GMT",
    ] {
        let upstream = TestUpstream::start(move |_, _| {
            Reply::Now(respond(503, &[("retry-after", value)], ""))
        })
        .await;
        let mut tool = tool("getPet", Method::GET, "/pets", Vec::new());
        tool.operation_mut()
            .expect("an operation's tool")
            .call
            .retries = 3;
        let result = call(&upstream.base, &tool, json!({})).await;
        assert!(result.is_error, "{value}");
        assert_eq!(http_meta(&result)["status"], 503, "{value}");
        assert_eq!(http_meta(&result)["headers"]["retry-after"], value);
        let requests = upstream.requests().len();
        // A date whose year is not four digits is no date: the header is ignored and the
        // backoff applies. Delta-seconds past any clock are only very far.
        let expected = if value.contains("99999 ") { 4 } else { 1 };
        assert_eq!(requests, expected, "{value}");
    }
}

/// A raw upstream that answers every request with `head`, counting connections.
async fn raw_upstream(head: Vec<u8>) -> (String, Arc<AtomicUsize>) {
    let head: Arc<[u8]> = head.into();
    counting_upstream(move |mut stream| {
        let head = head.clone();
        async move {
            let mut buffer = [0u8; 4096];
            let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut buffer).await;
            let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, &head).await;
            let _ = tokio::io::AsyncWriteExt::shutdown(&mut stream).await;
        }
    })
    .await
}

// Regression test for issue 9: a response head over the client's limits was reported as
// "closed the connection without an answer" and retried. It did answer.
#[tokio::test]
async fn a_response_head_over_the_limits_is_an_upstream_fault_not_retried() {
    let mut huge = b"HTTP/1.1 200 OK\r\nx-big: ".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 1 << 20));
    huge.extend_from_slice(b"\r\ncontent-length: 0\r\n\r\n");
    let mut many = b"HTTP/1.1 200 OK\r\n".to_vec();
    for index in 0..500 {
        many.extend_from_slice(format!("x-h{index}: 1\r\n").as_bytes());
    }
    many.extend_from_slice(b"content-length: 0\r\n\r\n");
    for head in [huge, many] {
        let (base, accepted) = raw_upstream(head).await;
        let mut get = tool("getPet", Method::GET, "/pets", Vec::new());
        get.operation_mut()
            .expect("an operation's tool")
            .call
            .retries = 2;
        let result = call(&base, &get, json!({})).await;
        assert!(result.is_error);
        expect![[r#"the upstream answered with a response head larger than ferry accepts (too many or too long header lines)"#]]
            .assert_eq(&text_of(&result));
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }
    // A head that is no HTTP at all is the upstream's fault too, and not retried.
    let (base, accepted) = raw_upstream(b"SSH-2.0-OpenSSH\r\n\r\n".to_vec()).await;
    let mut get = tool("getPet", Method::GET, "/pets", Vec::new());
    get.operation_mut()
        .expect("an operation's tool")
        .call
        .retries = 2;
    let result = call(&base, &get, json!({})).await;
    expect![[r#"the upstream answered with something that is not an HTTP response"#]]
        .assert_eq(&text_of(&result));
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}

/// What a [`keeping_upstream`] does with the `n`th request on a connection.
#[derive(Clone, Copy)]
enum Turn {
    Answer,
    AnswerAndClose,
    CloseUnanswered,
}

/// A raw upstream that keeps its connections open between requests, counting them; `turn`
/// says what each request on a connection (numbered from 0) gets.
async fn keeping_upstream(turn: fn(usize) -> Turn) -> (String, Arc<AtomicUsize>) {
    counting_upstream(move |mut stream| async move {
        let mut read = Vec::new();
        for index in 0.. {
            // One request head (the tools called here send no body).
            while !read.windows(4).any(|window| window == b"\r\n\r\n") {
                let mut buffer = [0u8; 4096];
                match tokio::io::AsyncReadExt::read(&mut stream, &mut buffer).await {
                    Ok(0) | Err(_) => return,
                    Ok(size) => read.extend_from_slice(&buffer[..size]),
                }
            }
            let end = read
                .windows(4)
                .position(|window| window == b"\r\n\r\n")
                .expect("head")
                + 4;
            read.drain(..end);
            let answer =
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
            match turn(index) {
                Turn::Answer => {
                    let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, answer).await;
                }
                Turn::AnswerAndClose => {
                    let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, answer).await;
                    return;
                }
                Turn::CloseUnanswered => return,
            }
        }
    })
    .await
}

#[tokio::test]
async fn calls_in_turn_go_out_on_one_kept_connection() {
    let (base, accepted) = keeping_upstream(|_| Turn::Answer).await;
    let tool = tool("getPet", Method::GET, "/pets", Vec::new());
    let upstream = client(&base, &tool);
    for _ in 0..3 {
        let result = call_on(&upstream, &tool).await;
        assert!(!result.is_error, "{result:?}");
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_kept_connection_the_upstream_closed_is_not_used_again() {
    let (base, accepted) = keeping_upstream(|_| Turn::AnswerAndClose).await;
    let mut tool = tool("createPet", Method::POST, "/pets", Vec::new());
    tool.operation_mut()
        .expect("an operation's tool")
        .call
        .retries = 0;
    let upstream = client(&base, &tool);
    for _ in 0..3 {
        let result = call_on(&upstream, &tool).await;
        assert!(!result.is_error, "{result:?}");
        // Time for the close to arrive before the next call looks for a kept connection.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_request_a_kept_connection_closed_on_is_sent_again_only_if_repeatable() {
    let turn = |index| {
        if index == 0 {
            Turn::Answer
        } else {
            Turn::CloseUnanswered
        }
    };
    let (base, accepted) = keeping_upstream(turn).await;
    let mut get = tool("getPet", Method::GET, "/pets", Vec::new());
    get.operation_mut()
        .expect("an operation's tool")
        .call
        .retries = 0;
    let upstream = client(&base, &get);
    for _ in 0..2 {
        let result = call_on(&upstream, &get).await;
        assert!(!result.is_error, "{result:?}");
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 2);

    let (base, accepted) = keeping_upstream(turn).await;
    let post = tool("createPet", Method::POST, "/pets", Vec::new());
    let upstream = client(&base, &post);
    let first = call_on(&upstream, &post).await;
    assert!(!first.is_error, "{first:?}");
    let second = call_on(&upstream, &post).await;
    assert!(second.is_error);
    expect![[r#"the upstream closed the connection without an answer"#]]
        .assert_eq(&text_of(&second));
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}

/// A catalog built by hand with two APIs: each tool names its API, and each call goes to its
/// API's upstream with that API's credential alone; an API without a base URL is named in
/// the error.
#[tokio::test]
async fn a_hand_built_catalog_of_two_apis_calls_each_on_its_own_upstream() {
    let pets = TestUpstream::start(|_, _| json_reply(200, json!({"id": 1}))).await;
    let billing = TestUpstream::start(|_, _| json_reply(200, json!({"total": 3}))).await;
    let mut get_pet = tool("pets_getPet", Method::GET, "/pets/1", Vec::new());
    get_pet.operation_mut().expect("an operation").api = "pets".into();
    let mut invoices = tool("billing_invoices", Method::GET, "/invoices", Vec::new());
    invoices.operation_mut().expect("an operation").api = "billing".into();
    let mut catalog = catalog(&pets.base, &[get_pet.clone(), invoices.clone()]);
    catalog.apis[0].id = "pets".into();
    let mut second = ferry::catalog::Api::new(Some(billing.base.clone()));
    second.id = "billing".into();
    let mut problems = Vec::new();
    let bearer = json!({"bearer": {"env": "BILLING_TOKEN"}});
    second.upstream_auth = parse_upstream_auth(&bearer, "upstream_auth", &mut problems);
    assert!(
        problems.is_empty() && second.upstream_auth.is_some(),
        "{problems:?}"
    );
    catalog.apis.push(second);
    let env = |name: &str| (name == "BILLING_TOKEN").then(|| "billing-token-0123456".to_string());
    let upstream = Upstream::with_env(&catalog, env).expect("client");

    let pet = call_on(&upstream, &get_pet).await;
    let total = call_on(&upstream, &invoices).await;
    assert_eq!(pet.structured_content, Some(json!({"id": 1})));
    assert_eq!(total.structured_content, Some(json!({"total": 3})));
    let seen = |upstream: &TestUpstream| -> Vec<String> {
        upstream
            .requests()
            .iter()
            .map(|request| {
                format!(
                    "{} {}",
                    request.uri,
                    request.header("authorization").unwrap_or("-")
                )
            })
            .collect()
    };
    assert_eq!(seen(&pets), ["/pets/1 -"]);
    assert_eq!(seen(&billing), ["/invoices Bearer billing-token-0123456"]);

    catalog.apis[1].upstream = None;
    let error = Upstream::with_env(&catalog, env).expect_err("no base URL for billing");
    assert_eq!(
        error.to_string(),
        "API `billing` has no upstream base URL: name one with `apis.billing.upstream`"
    );
}

//! Shared helpers: a hand-built catalog (the compiler is tested elsewhere), a served
//! instance on 127.0.0.1:0, raw HTTP requests, and validation of answers against the MCP
//! revisions' JSON schemas.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use ferry::catalog::{Catalog, RequestPlan, ServerInfo, Tool};
use ferry::mcp::{Server, ServerOptions};
use ferry::transport::http::{HttpOptions, serve};
use serde_json::{Value, json};
use tokio::sync::oneshot;

pub const MODERN: &str = "2026-07-28";
pub const LEGACY: &str = "2025-11-25";

pub fn tool(name: &str, input_schema: Value) -> Tool {
    let plan = RequestPlan::new(http::Method::GET, format!("/{name}"), Vec::new());
    let mut tool = Tool::new(name, input_schema, plan);
    tool.description = Some(format!("The {name} operation."));
    tool.annotations.read_only_hint = Some(true);
    tool
}

/// Three pets tools; `get_pet` mirrors its `region` argument into `Mcp-Param-Region`.
pub fn catalog() -> Catalog {
    Catalog::new(
        ServerInfo {
            name: "pets".into(),
            title: Some("Pets".into()),
            version: "1.0.0".into(),
            instructions: Some("A pet is read by its id.".into()),
        },
        None,
        vec![
            tool(
                "get_pet",
                json!({"type": "object", "properties": {
                "petId": {"type": "integer", "minimum": 1},
                "region": {"type": "string", "x-mcp-header": "Region"},
                "tenant": {"type": "integer", "x-mcp-header": "Tenant"},
            }, "required": ["petId"], "additionalProperties": false}),
            ),
            tool(
                "list_pets",
                json!({"type": "object", "additionalProperties": false}),
            ),
        ],
    )
}

pub fn server() -> Server {
    Server::new(&catalog(), None, ServerOptions::default())
}

/// A served instance; dropping it stops the server.
pub struct Running {
    pub url: String,
    stop: Option<oneshot::Sender<()>>,
    pub stopped: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Running {
    /// Asks for a graceful shutdown and waits for it.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(stopped) = self.stopped.take() {
            stopped.await.expect("server task").expect("server");
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

pub async fn start(server: Server, options: HttpOptions) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    let (stop, stopping) = oneshot::channel::<()>();
    let stopped = tokio::spawn(serve(Arc::new(server), listener, options, async move {
        let _ = stopping.await;
    }));
    Running {
        url: format!("http://{address}/mcp"),
        stop: Some(stop),
        stopped: Some(stopped),
    }
}

pub async fn start_default() -> Running {
    start(server(), HttpOptions::default()).await
}

/// An HTTP answer, read whole.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|error| panic!("not JSON ({error}): {}", self.text))
    }

    /// `status code` of a JSON-RPC error answer, e.g. `400 -32020`.
    pub fn status_and_code(&self) -> String {
        format!("{} {}", self.status, self.json()["error"]["code"])
    }
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client")
}

pub async fn post(url: &str, body: &str, headers: &[(&str, &str)]) -> Answer {
    let mut request = client()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_owned());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("body");
    Answer {
        status,
        headers,
        text,
    }
}

pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    })
}

/// A modern request with `_meta`, and the headers a conforming HTTP client sends with it.
pub fn modern(method: &str, params: Value) -> (String, Vec<(&'static str, String)>) {
    let mut params = params;
    params["_meta"] = meta();
    let mut headers = vec![
        ("mcp-protocol-version", MODERN.to_owned()),
        ("mcp-method", method.to_owned()),
    ];
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        headers.push(("mcp-name", name.to_owned()));
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    (body, headers)
}

pub async fn post_modern(url: &str, method: &str, params: Value) -> Answer {
    let (body, headers) = modern(method, params);
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect();
    post(url, &body, &headers).await
}

pub fn legacy(method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string()
}

pub fn initialize() -> String {
    legacy(
        "initialize",
        json!({"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
    )
}

/// Asserts `value` is valid against `#/$defs/{definition}` of the schema of `revision`.
pub fn assert_schema(revision: &str, definition: &str, value: &Value) {
    type Validators = HashMap<(String, String), Arc<jsonschema::Validator>>;
    static VALIDATORS: OnceLock<Mutex<Validators>> = OnceLock::new();
    let validators = VALIDATORS.get_or_init(Mutex::default);
    let key = (revision.to_owned(), definition.to_owned());
    let validator = {
        let mut validators = validators
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(validators.entry(key).or_insert_with(|| {
            let path = format!(
                "{}/tests/data/mcp-schema/schema-{revision}.json",
                env!("CARGO_MANIFEST_DIR")
            );
            let text =
                std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
            let mut schema: Value = serde_json::from_str(&text).expect("schema is JSON");
            assert!(
                schema["$defs"].get(definition).is_some(),
                "{revision} has no definition {definition}"
            );
            schema["$ref"] = Value::String(format!("#/$defs/{definition}"));
            Arc::new(jsonschema::validator_for(&schema).expect("schema compiles"))
        }))
    };
    let problems: Vec<String> = validator
        .iter_errors(value)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect();
    assert!(
        problems.is_empty(),
        "not a valid {revision} {definition}: {problems:#?}\n{value:#}"
    );
}

/// Validates a modern JSON-RPC error answer against the definition its code has.
pub fn assert_modern_error(answer: &Answer) {
    let value = answer.json();
    assert_schema(MODERN, "JSONRPCErrorResponse", &value);
    // The JSON-RPC codes have definitions of the error object; the MCP ones of the response.
    match value["error"]["code"].as_i64() {
        Some(-32700) => assert_schema(MODERN, "ParseError", &value["error"]),
        Some(-32600) => assert_schema(MODERN, "InvalidRequestError", &value["error"]),
        Some(-32601) => assert_schema(MODERN, "MethodNotFoundError", &value["error"]),
        Some(-32602) => assert_schema(MODERN, "InvalidParamsError", &value["error"]),
        Some(-32603) => assert_schema(MODERN, "InternalError", &value["error"]),
        Some(-32020) => assert_schema(MODERN, "HeaderMismatchError", &value),
        Some(-32022) => assert_schema(MODERN, "UnsupportedProtocolVersionError", &value),
        other => panic!("unexpected code {other:?}"),
    }
}

/// Validates a legacy JSON-RPC error answer.
pub fn assert_legacy_error(answer: &Answer) {
    assert_schema(LEGACY, "JSONRPCErrorResponse", &answer.json());
}

/// Serves `router` on a free loopback port until the test ends; its address.
pub async fn serve_app(router: axum::Router) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let address = listener.local_addr().expect("local address");
    tokio::spawn(async move { axum::serve(listener, router).await });
    address
}

/// A free TCP port on 127.0.0.1, as the OS picks it.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// `ferry serve` run as a process, over HTTP: killed when dropped.
pub struct ServeProcess {
    child: std::process::Child,
    /// The MCP endpoint it announced.
    pub url: String,
}

impl ServeProcess {
    /// The process id, to send it signals.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Runs the binary with `args` (`serve ...` listening on `127.0.0.1:0`) and `envs`, and
    /// waits (30 s at most) for the endpoint it announces on stderr; `None` when it exited
    /// or said none, with what it wrote.
    pub async fn start(args: &[&str], envs: &[(&str, &str)]) -> Result<ServeProcess, String> {
        use std::io::BufRead as _;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ferry"))
            .args(args)
            .envs(envs.iter().copied())
            .env("RUST_LOG", "ferry=info")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("ferry starts");
        let stderr = child.stderr.take().expect("stderr");
        // The reader keeps draining stderr after the endpoint line, so ferry never writes
        // into a closed pipe; what came before it is kept for the failure message.
        let (found, endpoint) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut seen = String::new();
            let mut announced = false;
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if !announced && let Some(start) = line.find("endpoint=") {
                    let url = line[start + "endpoint=".len()..].split_whitespace().next();
                    let _ = found.send(Ok(url.unwrap_or_default().to_string()));
                    announced = true;
                } else if !announced {
                    seen.push_str(&line);
                    seen.push('\n');
                }
            }
            let _ = found.send(Err(seen));
        });
        let endpoint = tokio::task::spawn_blocking(move || {
            endpoint
                .recv_timeout(std::time::Duration::from_secs(30))
                .unwrap_or_else(|_| Err("no endpoint announced in 30 s".into()))
        })
        .await
        .expect("reader");
        match endpoint {
            Ok(url) => Ok(ServeProcess { child, url }),
            Err(said) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(said)
            }
        }
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the ferry binary with `args` in `dir`: its exit code (-1 when a signal ended it),
/// stdout and stderr.
pub fn ferry(args: &[&str], dir: &std::path::Path) -> (i32, String, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run ferry");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Every line of the audit log at `log` that `observer` writes, once it has written them all.
pub fn audit_lines(observer: &ferry::observe::Observer, log: &std::path::Path) -> Vec<Value> {
    observer
        .audit()
        .expect("the audit log")
        .finish(std::time::Duration::from_secs(5));
    std::fs::read_to_string(log)
        .expect("the audit log")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

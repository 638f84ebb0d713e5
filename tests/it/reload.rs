//! Reloading a running `ferry serve` (the built binary) on SIGHUP and with `--watch`: the new
//! tools are listed and called at once, a reload that fails keeps the old ones serving and
//! logs why, and a call in flight finishes on the tool it began with. The upstream is a real
//! axum app on 127.0.0.1 that can hold an answer until the test releases it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc};

use crate::support::*;

/// How long anything a test waits for may take before the test fails.
const DEADLINE: Duration = Duration::from_secs(20);

/// The upstream: `/slow` waits for a permit of `release` (one per answer), anything else
/// answers at once with the path it was asked for; every request's path is sent on
/// `requests`.
struct Upstream {
    base: String,
    requests: mpsc::UnboundedReceiver<String>,
    release: Arc<Semaphore>,
}

async fn upstream() -> Upstream {
    let (sent, requests) = mpsc::unbounded_channel();
    let release = Arc::new(Semaphore::new(0));
    let held = Arc::clone(&release);
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
        let (sent, held) = (sent.clone(), Arc::clone(&held));
        async move {
            let path = uri.path().to_string();
            let _ = sent.send(path.clone());
            if path == "/slow" {
                let _permit = held.acquire().await;
            }
            (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                json!({"path": path}).to_string(),
            )
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    Upstream {
        base,
        requests,
        release,
    }
}

impl Upstream {
    async fn next_request(&mut self) -> String {
        tokio::time::timeout(DEADLINE, self.requests.recv())
            .await
            .expect("a request in time")
            .expect("upstream running")
    }
}

fn document() -> Value {
    let get = |id: &str, summary: &str| {
        json!({"get": {"operationId": id, "summary": summary,
            "responses": {"200": {"description": "ok"}}}})
    };
    json!({
        "openapi": "3.1.0",
        "info": {"title": "pets", "version": "1"},
        "paths": {
            "/pets": get("listPets", "List every pet"),
            "/pets/1": get("getPet", "Read pet 1"),
            "/slow": get("slow", "Answers when released"),
        },
    })
}

/// A folder of the temporary directory with the document and a curation file choosing
/// `tools`; removed when dropped.
struct Files {
    dir: PathBuf,
    base: String,
}

impl Files {
    fn new(test: &str, base: &str, tools: &[&str]) -> Files {
        let dir = std::env::temp_dir().join(format!("ferry-reload-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("openapi.json"), document().to_string()).expect("document");
        let files = Files {
            dir,
            base: base.to_string(),
        };
        files.choose(tools);
        files
    }

    fn curation(&self) -> PathBuf {
        self.dir.join("ferry.yaml")
    }

    /// Writes the curation file choosing `tools`, through a temporary file renamed over it,
    /// as editors save.
    fn choose(&self, tools: &[&str]) {
        let mut text = format!(
            "openapi: ./openapi.json\nupstream: {}\ntimeout_ms: 20000\ntools:\n",
            self.base
        );
        for tool in tools {
            text.push_str(&format!("  {tool}: {{}}\n"));
        }
        self.write(&text);
    }

    fn write(&self, text: &str) {
        let temporary = self.dir.join(".ferry.yaml.tmp");
        std::fs::write(&temporary, text).expect("write curation");
        std::fs::rename(&temporary, self.curation()).expect("rename curation");
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A running `ferry serve`, its log read on a thread of its own; killed when dropped.
struct Ferry {
    child: Child,
    url: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Ferry {
    fn serve(curation: &Path, flags: &[&str]) -> Ferry {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--workers",
                "2",
                "--config",
            ])
            .arg(curation)
            .args(flags)
            .env("RUST_LOG", "ferry=info")
            .env("FERRY_TEST_RELOAD_ALPHA", "reload-key-alpha")
            .env("FERRY_TEST_RELOAD_BRAVO", "reload-key-bravo")
            .env_remove("FERRY_TEST_RELOAD_UNSET")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("ferry starts");
        let stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let lines = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                lines.lock().expect("log").push(line);
            }
        });
        let mut ferry = Ferry {
            child,
            url: String::new(),
            log,
        };
        let started = Instant::now();
        loop {
            let line = ferry.find("endpoint=");
            if let Some(line) = line {
                let at = line.find("endpoint=").unwrap_or_default() + "endpoint=".len();
                let rest = &line[at..];
                ferry.url = rest
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string();
                return ferry;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "ferry did not listen: {:#?}",
                ferry.lines()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn lines(&self) -> Vec<String> {
        self.log.lock().expect("log").clone()
    }

    /// The first line of the log holding `text`.
    fn find(&self, text: &str) -> Option<String> {
        self.lines().into_iter().find(|line| line.contains(text))
    }

    /// How many lines of the log hold `text`.
    fn count(&self, text: &str) -> usize {
        self.lines()
            .iter()
            .filter(|line| line.contains(text))
            .count()
    }

    fn hangup(&self) {
        let sent = Command::new("kill")
            .args(["-HUP", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success());
    }

    /// Waits until the log has `count` lines holding `text`.
    async fn logged(&self, text: &str, count: usize) {
        let started = Instant::now();
        while self.count(text) < count {
            assert!(
                started.elapsed() < DEADLINE,
                "no {count} lines with {text:?} in the log: {:#?}",
                self.lines()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn tool_names(&self) -> Vec<String> {
        let answer = post_modern(&self.url, "tools/list", json!({})).await;
        assert_eq!(answer.status, 200, "{}", answer.text);
        let value = answer.json();
        assert_schema(MODERN, "ListToolsResultResponse", &value);
        value["result"]["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|tool| tool["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Waits until `tools/list` names exactly `expected`.
    async fn lists(&self, expected: &[&str]) {
        let started = Instant::now();
        loop {
            let names = self.tool_names().await;
            if names == expected {
                return;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "tools/list still names {names:?}, not {expected:?}: {:#?}",
                self.lines()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Calls `tool`; the result's structured content.
    async fn call(&self, tool: &str) -> Value {
        let answer = post_modern(
            &self.url,
            "tools/call",
            json!({"name": tool, "arguments": {}}),
        )
        .await;
        assert_eq!(answer.status, 200, "{}", answer.text);
        let value = answer.json();
        assert_schema(MODERN, "CallToolResultResponse", &value);
        value["result"]["structuredContent"].clone()
    }
}

impl Drop for Ferry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn sighup_serves_a_tool_added_to_the_curation() {
    let mut upstream = upstream().await;
    let files = Files::new("add", &upstream.base, &["listPets"]);
    let ferry = Ferry::serve(&files.curation(), &[]);
    ferry.lists(&["listPets"]).await;
    files.choose(&["listPets", "getPet"]);
    ferry.hangup();
    ferry.lists(&["getPet", "listPets"]).await;
    assert_eq!(ferry.call("getPet").await, json!({"path": "/pets/1"}));
    assert_eq!(upstream.next_request().await, "/pets/1");
    // The diff is logged, by tool and operation.
    ferry.logged("catalog reloaded", 1).await;
    let change = ferry.find("catalog changed").expect("a change logged");
    assert!(change.contains("+ getPet (GET /pets/1)"), "{change}");
}

#[tokio::test]
async fn a_reload_that_fails_keeps_the_old_tools_and_logs_why() {
    let mut upstream = upstream().await;
    let files = Files::new("broken", &upstream.base, &["listPets"]);
    let ferry = Ferry::serve(&files.curation(), &[]);

    // A tool that matches nothing is an error of the catalog.
    files.choose(&["listPets", "getPets"]);
    ferry.hangup();
    ferry.logged("reload failed", 1).await;
    let error = ferry
        .find("reload: error in the catalog")
        .expect("the error logged");
    assert!(
        error.contains("getPets") && error.contains("matches no operation"),
        "{error}"
    );
    // A file cut off halfway through a save does not parse.
    files.write("openapi: ./openapi.json\ntools:\n  listPets: {\n");
    ferry.hangup();
    ferry.logged("reload failed", 2).await;
    // A file that is gone cannot be read.
    std::fs::remove_file(files.curation()).expect("remove curation");
    ferry.hangup();
    ferry.logged("reload failed", 3).await;
    assert!(
        ferry
            .lines()
            .iter()
            .any(|line| line.contains("reload failed") && line.contains("reading curation file")),
        "{:#?}",
        ferry.lines()
    );

    ferry.lists(&["listPets"]).await;
    assert_eq!(ferry.call("listPets").await, json!({"path": "/pets"}));
    assert_eq!(upstream.next_request().await, "/pets");
    assert_eq!(ferry.count("catalog reloaded"), 0, "{:#?}", ferry.lines());
}

#[tokio::test]
async fn watch_reloads_a_changed_curation_or_document_without_a_signal() {
    let upstream = upstream().await;
    let files = Files::new("watch", &upstream.base, &["listPets"]);
    let ferry = Ferry::serve(&files.curation(), &["--watch"]);
    ferry
        .logged("watching the curation and document files", 1)
        .await;
    files.choose(&["getPet"]);
    ferry.lists(&["getPet"]).await;
    ferry.logged("catalog reloaded", 1).await;
    // The document is watched too.
    let mut changed = document();
    changed["paths"]["/pets/1"]["get"]["summary"] = json!("Read the first pet");
    std::fs::write(files.dir.join("openapi.json"), changed.to_string()).expect("document");
    ferry.logged("catalog reloaded", 2).await;
    let change = ferry
        .find("~ getPet: description")
        .unwrap_or_else(|| panic!("{:#?}", ferry.lines()));
    assert!(change.contains("catalog changed"), "{change}");
    // Each save was one reload, and none needed a signal.
    assert_eq!(
        ferry.count("reloading the catalog cause=\"files changed\""),
        2,
        "{:#?}",
        ferry.lines()
    );
}

#[tokio::test]
async fn a_call_in_flight_finishes_on_the_tool_it_began_with() {
    let mut upstream = upstream().await;
    let files = Files::new("in-flight", &upstream.base, &["slow", "listPets"]);
    let ferry = Ferry::serve(&files.curation(), &[]);
    let url = ferry.url.clone();
    let call = tokio::spawn(async move {
        post_modern(&url, "tools/call", json!({"name": "slow", "arguments": {}})).await
    });
    assert_eq!(upstream.next_request().await, "/slow");
    // The tool the call is running is removed while the upstream holds its answer.
    files.choose(&["listPets"]);
    ferry.hangup();
    ferry.lists(&["listPets"]).await;
    let refused = post_modern(
        &ferry.url,
        "tools/call",
        json!({"name": "slow", "arguments": {}}),
    )
    .await;
    assert_eq!(refused.json()["error"]["code"], -32602, "{}", refused.text);
    upstream.release.add_permits(1);
    let answer = call.await.expect("call task");
    assert_eq!(answer.status, 200, "{}", answer.text);
    let value = answer.json();
    assert_schema(MODERN, "CallToolResultResponse", &value);
    assert_eq!(
        value["result"]["structuredContent"],
        json!({"path": "/slow"})
    );
}

#[tokio::test]
async fn a_locked_server_reloads_only_what_the_lock_holds() {
    let upstream = upstream().await;
    let files = Files::new("locked", &upstream.base, &["listPets"]);
    let lock = |files: &Files| {
        let written = Command::new(env!("CARGO_BIN_EXE_ferry"))
            .args(["lock", "--config"])
            .arg(files.curation())
            .output()
            .expect("ferry lock runs");
        assert!(
            written.status.success(),
            "{}",
            String::from_utf8_lossy(&written.stderr)
        );
    };
    lock(&files);
    let ferry = Ferry::serve(&files.curation(), &["--locked"]);
    files.choose(&["listPets", "getPet"]);
    ferry.hangup();
    ferry.logged("reload failed", 1).await;
    let failed = ferry.find("reload failed").unwrap_or_default();
    assert!(failed.contains("differs from"), "{failed}");
    ferry.lists(&["listPets"]).await;
    // Reviewed and locked again: now it is served.
    lock(&files);
    ferry.hangup();
    ferry.lists(&["getPet", "listPets"]).await;
}

/// An open `subscriptions/listen` stream and what it has sent so far.
struct Listen {
    response: reqwest::Response,
    text: String,
}

impl Listen {
    async fn open(url: &str, notifications: Value) -> Listen {
        let (body, headers) = modern(
            "subscriptions/listen",
            json!({"notifications": notifications}),
        );
        let mut request = client()
            .post(url)
            .header("content-type", "application/json")
            .body(body);
        for (name, value) in &headers {
            request = request.header(*name, value);
        }
        let response = request.send().await.expect("listen");
        assert_eq!(response.status(), 200);
        Listen {
            response,
            text: String::new(),
        }
    }

    /// The next message on the stream (keep-alive comments skipped); `None` once it ended.
    async fn next(&mut self) -> Option<Value> {
        tokio::time::timeout(DEADLINE, async {
            loop {
                if let Some(end) = self.text.find("\n\n") {
                    let event: String = self.text.drain(..end + 2).collect();
                    if let Some(data) = event.lines().find_map(|line| line.strip_prefix("data: ")) {
                        return Some(serde_json::from_str(data).expect("a JSON message"));
                    }
                    continue;
                }
                match self.response.chunk().await.expect("stream") {
                    Some(chunk) => self.text.push_str(&String::from_utf8_lossy(&chunk)),
                    None => return None,
                }
            }
        })
        .await
        .expect("a message in time")
    }
}

#[tokio::test]
async fn an_open_subscription_hears_that_the_tool_list_changed() {
    let upstream = upstream().await;
    let files = Files::new("listen", &upstream.base, &["listPets"]);
    let ferry = Ferry::serve(&files.curation(), &[]);
    let discover = post_modern(&ferry.url, "server/discover", json!({})).await;
    assert_eq!(
        discover.json()["result"]["capabilities"]["tools"]["listChanged"],
        true
    );
    let mut tools = Listen::open(&ferry.url, json!({"toolsListChanged": true})).await;
    let mut prompts = Listen::open(&ferry.url, json!({"promptsListChanged": true})).await;
    let acknowledged = tools.next().await.expect("acknowledgement");
    assert_schema(
        MODERN,
        "SubscriptionsAcknowledgedNotification",
        &acknowledged,
    );
    assert_eq!(
        acknowledged["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    let acknowledged = prompts.next().await.expect("acknowledgement");
    assert_eq!(acknowledged["params"]["notifications"], json!({}));

    // A reload that changes nothing served is not a change of the list.
    files.choose(&["listPets"]);
    ferry.hangup();
    ferry.logged("catalog reloaded", 1).await;
    files.choose(&["listPets", "getPet"]);
    ferry.hangup();
    let changed = tools.next().await.expect("a notification");
    assert_schema(MODERN, "ToolListChangedNotification", &changed);
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
    // The list it announces is the one served at once.
    assert_eq!(ferry.tool_names().await, ["getPet", "listPets"]);
    assert_eq!(ferry.count("catalog reloaded"), 2, "{:#?}", ferry.lines());

    // Stopping ends both streams: the one that asked for nothing ferry honours got nothing
    // but its acknowledgement and the end; the other, nothing for the reload that changed
    // nothing.
    let stopped = Command::new("kill")
        .args(["-TERM", &ferry.child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(stopped.success());
    let end = prompts.next().await.expect("the final response");
    assert_schema(MODERN, "SubscriptionsListenResultResponse", &end);
    assert!(prompts.next().await.is_none());
    let end = tools.next().await.expect("the final response");
    assert_schema(MODERN, "SubscriptionsListenResultResponse", &end);
}

#[test]
fn stdio_reloads_on_sighup_and_notifies_its_subscription() {
    use std::io::Write as _;
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let upstream = runtime.block_on(upstream());
    let files = Files::new("stdio", &upstream.base, &["listPets"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--stdio", "--config"])
        .arg(files.curation())
        .env("RUST_LOG", "ferry=info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("ferry starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let (lines, received) = std::sync::mpsc::channel::<Value>();
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            let _ = lines.send(serde_json::from_str(&line).expect("a JSON line"));
        }
    });
    let next = || received.recv_timeout(DEADLINE).expect("a line in time");
    let listen = json!({"jsonrpc": "2.0", "id": "watch", "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": true}, "_meta": meta()}});
    writeln!(stdin, "{listen}").expect("write");
    let acknowledged = next();
    assert_schema(
        MODERN,
        "SubscriptionsAcknowledgedNotification",
        &acknowledged,
    );

    files.choose(&["listPets", "getPet"]);
    let hangup = Command::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(hangup.success());
    let changed = next();
    assert_schema(MODERN, "ToolListChangedNotification", &changed);
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "watch"
    );
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
        "params": {"_meta": meta()}});
    writeln!(stdin, "{list}").expect("write");
    let listed = next();
    assert_schema(MODERN, "ListToolsResultResponse", &listed);
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|tool| tool["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(names, ["getPet", "listPets"]);
    drop(stdin);
    assert!(child.wait().expect("ferry ends").success());
}

/// The status of a `tools/list` with `key` as bearer token.
async fn list_status(url: &str, key: &str) -> u16 {
    let (body, headers) = modern("tools/list", json!({}));
    let bearer = format!("Bearer {key}");
    let mut headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect();
    headers.push(("authorization", &bearer));
    post(url, &body, &headers).await.status
}

#[tokio::test]
async fn a_reload_swaps_the_keys_that_are_checked_before_the_body() {
    let upstream = upstream().await;
    let files = Files::new("auth", &upstream.base, &[]);
    let curation = |variable: &str| {
        format!(
            "openapi: ./openapi.json\nupstream: {}\ntools:\n  listPets: {{}}\nauth:\n  api_keys: [{{subject: ops, key: {{env: {variable}}}}}]\n",
            upstream.base
        )
    };
    files.write(&curation("FERRY_TEST_RELOAD_ALPHA"));
    let ferry = Ferry::serve(&files.curation(), &[]);
    assert_eq!(list_status(&ferry.url, "reload-key-alpha").await, 200);
    assert_eq!(list_status(&ferry.url, "reload-key-bravo").await, 401);

    // A key whose variable is not set cannot be set up: nothing changes.
    files.write(&curation("FERRY_TEST_RELOAD_UNSET"));
    ferry.hangup();
    ferry.logged("reload failed", 1).await;
    let failed = ferry.find("reload failed").unwrap_or_default();
    assert!(failed.contains("FERRY_TEST_RELOAD_UNSET"), "{failed}");
    assert_eq!(list_status(&ferry.url, "reload-key-alpha").await, 200);

    files.write(&curation("FERRY_TEST_RELOAD_BRAVO"));
    ferry.hangup();
    ferry.logged("catalog reloaded", 1).await;
    assert!(
        ferry.find("~ setting `auth`").is_some(),
        "{:#?}",
        ferry.lines()
    );
    assert_eq!(list_status(&ferry.url, "reload-key-alpha").await, 401);
    assert_eq!(list_status(&ferry.url, "reload-key-bravo").await, 200);
}

/// ferry serving `files`, with its metrics listener on a free port, and that listener's
/// address.
fn serve_with_metrics(files: &Files) -> (Ferry, String) {
    let address = format!("127.0.0.1:{}", free_port());
    let ferry = Ferry::serve(&files.curation(), &["--metrics-listen", &address]);
    (ferry, address)
}

/// What ferry's metrics listener at `address` answers on `/metrics`.
async fn metrics(address: &str) -> String {
    let url = format!("http://{address}/metrics");
    let answer = reqwest::get(&url).await.expect("metrics answer");
    answer.text().await.expect("metrics text")
}

/// A reload is counted and names the catalog it serves: `ferry_reloads_total` by result,
/// `ferry_tools_served`, and the info gauge of the catalog's digest (the one replaced at 0).
#[tokio::test]
async fn reloads_are_counted_in_the_metrics() {
    let upstream = upstream().await;
    let files = Files::new("metrics", &upstream.base, &["listPets"]);
    let (ferry, metrics_address) = serve_with_metrics(&files);
    let scrape = || metrics(&metrics_address);
    let value = |text: &str, series: &str| {
        text.lines().find_map(|line| {
            line.strip_prefix(series)?
                .strip_prefix(' ')
                .map(str::to_string)
        })
    };
    let before = scrape().await;
    assert_eq!(
        value(&before, "ferry_tools_served").as_deref(),
        Some("1"),
        "{before}"
    );
    files.choose(&["listPets", "getPet"]);
    ferry.hangup();
    ferry.logged("catalog reloaded", 1).await;
    files.choose(&["listPets", "getPets"]);
    ferry.hangup();
    ferry.logged("reload failed", 1).await;
    let after = scrape().await;
    assert_eq!(
        value(&after, r#"ferry_reloads_total{result="ok"}"#).as_deref(),
        Some("1"),
        "{after}"
    );
    assert_eq!(
        value(&after, r#"ferry_reloads_total{result="failed"}"#).as_deref(),
        Some("1"),
        "{after}"
    );
    assert_eq!(
        value(&after, "ferry_tools_served").as_deref(),
        Some("2"),
        "{after}"
    );
    let infos: Vec<&str> = after
        .lines()
        .filter(|line| line.starts_with("ferry_catalog_info{"))
        .collect();
    assert_eq!(infos.len(), 2, "{after}");
    assert_eq!(
        infos.iter().filter(|line| line.ends_with(" 1")).count(),
        1,
        "{after}"
    );
}

/// The catalog's digest in the metrics follows a change of a serving setting as it follows
/// a change of a tool: here only the identity header changes.
#[tokio::test]
async fn the_catalog_digest_follows_a_changed_serving_setting() {
    let upstream = upstream().await;
    let files = Files::new("digest", &upstream.base, &["listPets"]);
    let (ferry, address) = serve_with_metrics(&files);
    // The info series at 1, which names the digest of the catalog served.
    let served = || async {
        let text = metrics(&address).await;
        let info = |line: &&str| line.starts_with("ferry_catalog_info{") && line.ends_with(" 1");
        let line = text.lines().find(info).map(str::to_string);
        line.unwrap_or_else(|| panic!("no catalog served in {text}"))
    };
    let before = served().await;
    let curation = std::fs::read_to_string(files.curation()).expect("curation");
    files.write(&format!(
        "{curation}upstream_identity: {{header: X-Subject}}\n"
    ));
    ferry.hangup();
    ferry.logged("catalog reloaded", 1).await;
    let after = served().await;
    assert_eq!(
        ferry.count("~ setting `upstreamIdentity`"),
        1,
        "{:#?}",
        ferry.lines()
    );
    assert!(before.contains("digest=\"sha256:"), "{before}");
    assert_ne!(before, after);
}

/// A confirmation asked for before a reload is answered after it: the process keeps its
/// confirmation key (here one it generated) and its answered nonces across reloads, so the
/// state is accepted once, and refused when answered again.
#[tokio::test]
async fn a_confirmation_asked_before_a_reload_is_answered_after_it() {
    let mut upstream = upstream().await;
    let files = Files::new("confirm", &upstream.base, &["listPets"]);
    let base = upstream.base.clone();
    let curation = |tools: &str| {
        format!("openapi: ./openapi.json\nupstream: {base}\ntimeout_ms: 20000\ntools:\n{tools}")
    };
    files.write(&curation("  getPet: {confirm: true}\n"));
    let ferry = Ferry::serve(&files.curation(), &[]);
    let call = |extra: Value| {
        let mut params = json!({"name": "getPet", "arguments": {}});
        if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
            params.extend(extra);
        }
        let (body, headers) = modern("tools/call", params);
        let mut value: Value = serde_json::from_str(&body).expect("a body");
        value["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
            json!({"elicitation": {}});
        (value.to_string(), headers)
    };
    let send = |(body, headers): (String, Vec<(&'static str, String)>)| {
        let url = ferry.url.clone();
        async move {
            let headers: Vec<(&str, &str)> = headers
                .iter()
                .map(|(name, value)| (*name, value.as_str()))
                .collect();
            post(&url, &body, &headers).await.json()
        }
    };
    let asked = send(call(json!({}))).await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"]
        .as_str()
        .expect("a requestState")
        .to_string();
    files.write(&curation("  getPet: {confirm: true}\n  listPets: {}\n"));
    ferry.hangup();
    ferry.logged("catalog reloaded", 1).await;
    let answer = json!({
        "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}},
        "requestState": state,
    });
    let done = send(call(answer.clone())).await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"path": "/pets/1"}),
        "{done}"
    );
    assert_eq!(upstream.next_request().await, "/pets/1");
    files.write(&curation("  getPet: {confirm: true}\n"));
    ferry.hangup();
    ferry.logged("catalog reloaded", 2).await;
    let again = send(call(answer)).await;
    assert_eq!(again["result"]["isError"], true, "{again}");
}

/// Regression (issue 23): each reload built a new limiter, so SIGHUP, `--watch` and a
/// log-rotation reload gave every caller a full budget. Budgets outlive a reload, and a
/// reload that changes a limit applies the new one to the calls already spent.
#[tokio::test]
async fn rate_limit_budgets_outlive_a_reload() {
    let upstream = upstream().await;
    let files = Files::new("limits", &upstream.base, &[]);
    let limited = |rate: &str| {
        format!(
            "openapi: ./openapi.json\nupstream: {}\ntools:\n  listPets: {{rate_limit: {rate}}}\n",
            upstream.base
        )
    };
    files.write(&limited("2/min"));
    let ferry = Ferry::serve(&files.curation(), &[]);
    let limited_now = |result: &Value| {
        result["result"]["isError"] == true
            && result["result"]["content"][0]["text"]
                .as_str()
                .is_some_and(|text| text.contains("rate limit"))
    };
    let call = || async {
        let answer = post_modern(
            &ferry.url,
            "tools/call",
            json!({"name": "listPets", "arguments": {}}),
        )
        .await;
        assert_eq!(answer.status, 200, "{}", answer.text);
        answer.json()
    };
    for _ in 0..2 {
        let sent = call().await;
        assert!(!limited_now(&sent), "{sent}");
    }
    let third = call().await;
    assert!(limited_now(&third), "{third}");
    // A reload that changes nothing gives nobody a new budget.
    ferry.hangup();
    ferry.logged("catalog reloaded", 1).await;
    let fourth = call().await;
    assert!(limited_now(&fourth), "{fourth}");
    // Doubled, the limit counts the two calls spent against four: two more go through.
    files.write(&limited("4/min"));
    ferry.hangup();
    ferry.logged("catalog reloaded", 2).await;
    for _ in 0..2 {
        let sent = call().await;
        assert!(!limited_now(&sent), "{sent}");
    }
    let over = call().await;
    assert!(limited_now(&over), "{over}");
}

/// Regression (issue 23): a FIFO in the curation's place blocked the reload thread for good,
/// so no later reload happened and SIGTERM left ferry running. It is a failed reload now,
/// the next reload works, and shutdown does not wait.
#[tokio::test]
async fn a_fifo_in_the_curations_place_fails_the_reload_and_nothing_else() {
    let upstream = upstream().await;
    let files = Files::new("fifo", &upstream.base, &["listPets"]);
    let mut ferry = Ferry::serve(&files.curation(), &["--shutdown-timeout", "3"]);
    std::fs::remove_file(files.curation()).expect("remove curation");
    let made = Command::new("mkfifo")
        .arg(files.curation())
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    ferry.hangup();
    ferry.logged("reload failed", 1).await;
    let failed = ferry.find("reload failed").unwrap_or_default();
    assert!(failed.contains("not a regular file"), "{failed}");
    std::fs::remove_file(files.curation()).expect("remove fifo");
    files.choose(&["listPets", "getPet"]);
    ferry.hangup();
    ferry.lists(&["getPet", "listPets"]).await;
    // And SIGTERM ends it promptly.
    let sent = Command::new("kill")
        .args(["-TERM", &ferry.child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let started = Instant::now();
    loop {
        if let Some(status) = ferry.child.try_wait().expect("wait") {
            assert!(status.success(), "{status:?}");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(5), "still running");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

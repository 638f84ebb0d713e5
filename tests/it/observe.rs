//! What operators see: the audit log (`--audit-log`), the metrics and health endpoints
//! (`--metrics-listen`), scraped by a real Prometheus. ferry is the built binary, its upstream
//! a loopback server.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{free_port, post, post_modern};
use crate::upstream::{TestUpstream, json_reply};

/// The upstream credential ferry sends; it must never reach the audit log.
const SECRET: &str = "sk-live-7QmZ4tWcX9vRb2Lp";
/// Argument values the calls send; none may reach the audit log.
const FOUND: &str = "zebra-quartz-7781";
const MISSING: &str = "heron-missing-5512";
const INVALID: &str = "okapi-ultraviolet-3390";

/// A scratch folder of this test under the build's own temporary folder, emptied.
fn scratch(test: &str) -> PathBuf {
    let folder = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("observe-{test}"));
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).expect("scratch folder");
    folder
}

/// A pets API with one tool, `get_pet`, writing its document and curation into `folder`;
/// returns the curation's path.
fn pets_config(folder: &Path, upstream: &str) -> PathBuf {
    let document = json!({
        "openapi": "3.1.0",
        "info": {"title": "pets", "version": "1"},
        "paths": {"/pets/{petName}": {"get": {
            "operationId": "get_pet",
            "parameters": [
                {"name": "petName", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "note", "in": "query", "schema": {"type": "string"}},
            ],
            "responses": {"200": {"description": "the pet"}},
        }}},
    });
    std::fs::write(folder.join("openapi.json"), document.to_string()).expect("document");
    let curation = format!(
        "openapi: ./openapi.json\nupstream: {upstream}\nupstream_auth:\n  bearer: {{env: PETS_TOKEN}}\ntools:\n  get_pet: {{retries: 0}}\n"
    );
    let path = folder.join("ferry.yaml");
    std::fs::write(&path, curation).expect("curation");
    path
}

/// An upstream that knows one pet, `FOUND`, and answers 404 for any other.
async fn pets_upstream() -> TestUpstream {
    TestUpstream::start(|received, _| {
        if received.uri.starts_with(&format!("/pets/{FOUND}")) {
            json_reply(200, json!({"name": FOUND}))
        } else {
            json_reply(404, json!({"title": "no such pet"}))
        }
    })
    .await
}

/// A running `ferry`, killed when dropped (a failing test included), its stderr read on a
/// thread so it never writes into a full pipe.
pub struct Ferry {
    child: Child,
    lines: mpsc::Receiver<String>,
    pub seen: Vec<String>,
}

impl Ferry {
    pub fn start(arguments: &[&str], env: &[(&str, &str)]) -> Ferry {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ferry"));
        command
            .args(arguments)
            .env("RUST_LOG", "ferry=info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("ferry starts");
        let (send, lines) = mpsc::channel();
        let stderr = BufReader::new(child.stderr.take().expect("stderr"));
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
        Ferry {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits for a log line holding `key=`, and returns the value after it.
    pub fn logged(&mut self, key: &str) -> String {
        let needle = format!("{key}=");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(line) = self.seen.iter().find(|line| line.contains(&needle)) {
                let rest = &line[line.find(&needle).expect("found") + needle.len()..];
                return rest.split_whitespace().next().expect("value").to_owned();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => panic!(
                    "ferry logged no {key}= (exit: {:?}): {:#?}",
                    self.child.try_wait(),
                    self.seen
                ),
            }
        }
    }

    /// Sends `signal` (`HUP`, `TERM`) to ferry.
    pub fn signal(&self, signal: &str) {
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success());
    }

    /// Waits for ferry to end after SIGTERM; true when it ended cleanly.
    pub fn stop(mut self) -> bool {
        self.signal("TERM");
        let status = self.child.wait().expect("ferry ends");
        status.success()
    }
}

impl Drop for Ferry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls until `ready` holds of the lines of `path`, for at most 10 s; returns them.
fn lines_when(path: &Path, ready: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let lines: Vec<String> = std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect();
        if ready(&lines) {
            return lines;
        }
        assert!(
            Instant::now() < deadline,
            "{} never became ready: {lines:#?}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

#[test]
fn the_audit_log_has_one_line_per_event_and_no_secret_or_argument() {
    let folder = scratch("audit");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let upstream = runtime.block_on(pets_upstream());
    let config = pets_config(&folder, &upstream.base);
    let log = folder.join("audit.log");
    let mut ferry = Ferry::start(
        &[
            "serve",
            "--config",
            &config.to_string_lossy(),
            "--listen",
            "127.0.0.1:0",
            "--workers",
            "2",
            "--audit-log",
            &log.to_string_lossy(),
        ],
        &[("PETS_TOKEN", SECRET)],
    );
    let endpoint = ferry.logged("endpoint");
    runtime.block_on(async {
        let found = post_modern(
            &endpoint,
            "tools/call",
            call("get_pet", json!({"petName": FOUND, "note": FOUND})),
        )
        .await;
        assert_eq!(found.json()["result"]["structuredContent"]["name"], FOUND);
        let missing = post_modern(
            &endpoint,
            "tools/call",
            call("get_pet", json!({"petName": MISSING})),
        )
        .await;
        assert_eq!(
            missing.json()["result"]["isError"],
            true,
            "{}",
            missing.text
        );
        let invalid = post_modern(
            &endpoint,
            "tools/call",
            call("get_pet", json!({"petName": FOUND, "colour": INVALID})),
        )
        .await;
        assert_eq!(
            invalid.json()["result"]["isError"],
            true,
            "{}",
            invalid.text
        );
        let foreign = post(&endpoint, "{}", &[("host", "evil.example.com")]).await;
        assert_eq!(foreign.status, 403);
    });
    let lines = lines_when(&log, |lines| lines.len() >= 4);
    assert_eq!(lines.len(), 4, "{lines:#?}");
    let events: Vec<Value> = lines
        .iter()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}")))
        .collect();
    let find = |outcome: &str| {
        events
            .iter()
            .find(|event| event["outcome"] == outcome)
            .unwrap_or_else(|| panic!("no {outcome} event: {events:#?}"))
    };
    let ok = find("ok");
    assert_eq!(ok["tool"], "get_pet");
    assert_eq!(ok["upstream_method"], "GET");
    assert_eq!(ok["upstream_path"], "/pets/{petName}");
    assert_eq!(ok["upstream_status"], 200);
    assert_eq!(ok["attempts"], 1);
    assert_eq!(ok["subject"], "anonymous");
    assert_eq!(ok["client_name"], "test");
    assert_eq!(ok["jsonrpc_id"], 1);
    assert!(ok["bytes_in"].as_u64() > Some(0) && ok["bytes_out"].as_u64() > Some(0));
    let api_error = find("api_error");
    assert_eq!(api_error["upstream_status"], 404);
    assert_eq!(api_error["upstream_path"], "/pets/{petName}");
    let invalid = find("invalid_arguments");
    assert_eq!(invalid["attempts"], 0);
    assert!(invalid.get("upstream_status").is_none(), "{invalid}");
    let refused = find("refused");
    assert_eq!(refused["reason"], "host");
    let ids: std::collections::BTreeSet<&str> = events
        .iter()
        .map(|event| event["request_id"].as_str().expect("a request id"))
        .collect();
    assert_eq!(ids.len(), 4, "request ids repeat: {events:#?}");
    let text = std::fs::read_to_string(&log).expect("audit log");
    for secret in [SECRET, FOUND, MISSING, INVALID] {
        assert!(
            !text.contains(secret),
            "{secret} is in the audit log:\n{text}"
        );
    }
    // Only the calls that reached the upstream, with ferry's own credential.
    let sent = upstream.requests();
    assert_eq!(sent.len(), 2);
    assert!(ferry.stop());
}

#[test]
fn sighup_reopens_the_audit_log_after_a_rotation() {
    let folder = scratch("rotation");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let upstream = runtime.block_on(pets_upstream());
    let config = pets_config(&folder, &upstream.base);
    let log = folder.join("audit.log");
    let rotated = folder.join("audit.log.1");
    let mut ferry = Ferry::start(
        &[
            "serve",
            "--config",
            &config.to_string_lossy(),
            "--listen",
            "127.0.0.1:0",
            "--audit-log",
            &log.to_string_lossy(),
        ],
        &[("PETS_TOKEN", SECRET)],
    );
    let endpoint = ferry.logged("endpoint");
    let found = || {
        runtime.block_on(post_modern(
            &endpoint,
            "tools/call",
            call("get_pet", json!({"petName": FOUND})),
        ))
    };
    assert_eq!(found().status, 200);
    lines_when(&log, |lines| lines.len() == 1);
    std::fs::rename(&log, &rotated).expect("rotate");
    ferry.signal("HUP");
    // The writer creates the new file as it reopens.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !log.exists() {
        assert!(Instant::now() < deadline, "no new audit log after SIGHUP");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(found().status, 200);
    assert_eq!(found().status, 200);
    let new = lines_when(&log, |lines| lines.len() == 2);
    assert!(
        new.iter().all(|line| line.contains(r#""outcome":"ok""#)),
        "{new:#?}"
    );
    let old = std::fs::read_to_string(&rotated).expect("rotated log");
    assert_eq!(old.lines().count(), 1, "{old}");
    assert!(ferry.stop());
}

#[test]
fn an_audit_log_that_cannot_be_opened_stops_start_up() {
    let folder = scratch("unopenable");
    let config = pets_config(&folder, "http://127.0.0.1:9");
    let log = folder.join("no-such-folder").join("audit.log");
    let output = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args([
            "serve",
            "--config",
            &config.to_string_lossy(),
            "--listen",
            "127.0.0.1:0",
            "--audit-log",
            &log.to_string_lossy(),
        ])
        .env("PETS_TOKEN", SECRET)
        .stdin(Stdio::null())
        .output()
        .expect("ferry runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("opening the audit log") && stderr.contains("No such file or directory"),
        "{stderr}"
    );
}

/// A running child process of the test's own (Prometheus), killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A program from Debian's `prometheus` package, with a hint when it is missing.
fn prometheus_tool(name: &str) -> Command {
    let found = Command::new(name)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    assert!(
        found.is_ok_and(|status| status.success()),
        "{name} is not installed: run scripts/setup-tests.sh (Debian's prometheus package)"
    );
    Command::new(name)
}

async fn get(url: &str) -> (u16, String) {
    let response = crate::support::client()
        .get(url)
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .unwrap_or_else(|error| panic!("GET {url}: {error}"));
    let status = response.status().as_u16();
    (status, response.text().await.expect("body"))
}

/// Serves the pets tool with metrics on a free port: ferry, its endpoint and the metrics URL.
fn ferry_with_metrics(
    folder: &Path,
    upstream: &TestUpstream,
    extra: &[&str],
) -> (Ferry, String, String) {
    let config = pets_config(folder, &upstream.base);
    let mut arguments = vec![
        "serve".to_owned(),
        "--config".to_owned(),
        config.to_string_lossy().into_owned(),
        "--listen".to_owned(),
        "127.0.0.1:0".to_owned(),
        "--metrics-listen".to_owned(),
        "127.0.0.1:0".to_owned(),
    ];
    arguments.extend(extra.iter().map(|argument| (*argument).to_owned()));
    let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
    let mut ferry = Ferry::start(&arguments, &[("PETS_TOKEN", SECRET)]);
    let metrics = ferry.logged("metrics");
    let endpoint = ferry.logged("endpoint");
    (ferry, endpoint, metrics)
}

#[test]
fn prometheus_scrapes_the_calls_and_promtool_accepts_the_metrics() {
    let folder = scratch("prometheus");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let upstream = runtime.block_on(pets_upstream());
    let (ferry, endpoint, metrics) = ferry_with_metrics(&folder, &upstream, &[]);
    runtime.block_on(async {
        for name in [FOUND, FOUND, MISSING] {
            let answer = post_modern(
                &endpoint,
                "tools/call",
                call("get_pet", json!({"petName": name})),
            )
            .await;
            assert_eq!(answer.status, 200, "{}", answer.text);
        }
        let foreign = post(&endpoint, "{}", &[("host", "evil.example.com")]).await;
        assert_eq!(foreign.status, 403);
    });
    let (status, text) = runtime.block_on(get(&metrics));
    assert_eq!(status, 200);
    for expected in [
        r#"ferry_tool_calls_total{tool="get_pet",outcome="ok"} 2"#,
        r#"ferry_tool_calls_total{tool="get_pet",outcome="api_error"} 1"#,
        r#"ferry_upstream_responses_total{tool="get_pet",class="4xx"} 1"#,
        r#"ferry_upstream_duration_seconds_count{tool="get_pet"} 3"#,
        r#"ferry_call_duration_seconds_count{tool="get_pet"} 3"#,
        r#"ferry_refused_total{reason="host"} 1"#,
        "ferry_calls_in_flight 0",
        "ferry_tools_served 1",
        "ferry_catalog_info{digest=\"sha256:",
    ] {
        assert!(text.contains(expected), "{expected} not in:\n{text}");
    }
    assert!(!text.contains(SECRET) && !text.contains(FOUND), "{text}");

    let mut check = prometheus_tool("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool runs");
    std::io::Write::write_all(&mut check.stdin.take().expect("stdin"), text.as_bytes())
        .expect("metrics to promtool");
    let checked = check.wait_with_output().expect("promtool ends");
    assert!(
        checked.status.success() && checked.stdout.is_empty() && checked.stderr.is_empty(),
        "promtool: {}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );

    let target = metrics
        .trim_start_matches("http://")
        .trim_end_matches("/metrics")
        .to_owned();
    let config = folder.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: ferry\n    scrape_interval: 1s\n    scrape_timeout: 1s\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .expect("prometheus config");
    let web = format!("127.0.0.1:{}", free_port());
    let storage = folder.join("data");
    let prometheus = Killed(
        prometheus_tool("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", storage.display()))
            .arg(format!("--web.listen-address={web}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(folder.join("prometheus.log")).expect("log file"))
            .spawn()
            .expect("prometheus starts"),
    );
    let query = format!(
        "http://{web}/api/v1/query?query=ferry_tool_calls_total%7Btool%3D%22get_pet%22%2Coutcome%3D%22ok%22%7D"
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let answer = runtime.block_on(async {
            match crate::support::client()
                .get(&query)
                .timeout(Duration::from_secs(5))
                .send()
                .await
            {
                Ok(response) => response.text().await.unwrap_or_default(),
                Err(error) => format!("no answer: {error}"),
            }
        });
        let value: Value = serde_json::from_str(&answer).unwrap_or(Value::Null);
        if value["data"]["result"][0]["value"][1] == "2" {
            assert_eq!(value["data"]["result"][0]["metric"]["job"], "ferry");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus never answered the counter: {answer}\n{}",
            std::fs::read_to_string(folder.join("prometheus.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    drop(prometheus);
    assert!(ferry.stop());
}

#[test]
fn metrics_may_not_share_the_mcp_address() {
    let folder = scratch("same-address");
    let config = pets_config(&folder, "http://127.0.0.1:9");
    let port = free_port().to_string();
    let address = format!("127.0.0.1:{port}");
    let output = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--config", &config.to_string_lossy()])
        .args(["--listen", &address, "--metrics-listen", &address])
        .env("PETS_TOKEN", SECRET)
        .stdin(Stdio::null())
        .output()
        .expect("ferry runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is the MCP listener's address"), "{stderr}");
}

/// Polls `url` until it answers `status`, for at most 20 s; returns the body.
fn answers(runtime: &tokio::runtime::Runtime, url: &str, status: u16) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (got, text) = runtime.block_on(get(url));
        if got == status {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{url} never answered {status}: {got} {text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn readyz_follows_the_upstream_when_asked_and_healthz_the_process() {
    let folder = scratch("health");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    // The upstream runs on a runtime of its own: dropping it closes the upstream's listener.
    let upstream_runtime = tokio::runtime::Runtime::new().expect("runtime");
    let upstream = upstream_runtime.block_on(pets_upstream());
    let (checked, _, metrics) = ferry_with_metrics(
        &folder,
        &upstream,
        &["--ready-check-upstream", "--ready-check-interval", "1"],
    );
    let base = metrics.trim_end_matches("/metrics").to_owned();
    assert_eq!(answers(&runtime, &format!("{base}/healthz"), 200), "ok\n");
    assert_eq!(answers(&runtime, &format!("{base}/readyz"), 200), "ready\n");
    drop(upstream_runtime);
    let why = answers(&runtime, &format!("{base}/readyz"), 503);
    assert_eq!(
        why,
        "not ready: the upstream accepted no connection in the last interval\n"
    );
    assert_eq!(answers(&runtime, &format!("{base}/healthz"), 200), "ok\n");
    assert!(checked.stop());

    // Unasked, readiness is the catalog's alone: the upstream's absence does not matter.
    let folder = scratch("health-unchecked");
    let (unchecked, _, metrics) = ferry_with_metrics(&folder, &upstream, &[]);
    let base = metrics.trim_end_matches("/metrics").to_owned();
    assert_eq!(answers(&runtime, &format!("{base}/readyz"), 200), "ready\n");
    assert!(unchecked.stop());
}

/// With several APIs, `/readyz` asks that each API's upstream accepts a connection: one
/// that does not keeps the process not ready.
#[test]
fn readyz_asks_every_apis_upstream() {
    let folder = scratch("health-apis");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let upstream = runtime.block_on(pets_upstream());
    pets_config(&folder, &upstream.base);
    // A port nothing listens on: bound, then closed.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port");
    let curation = format!(
        "apis:\n  pets: {{openapi: ./openapi.json, upstream: '{}', tools: {{get_pet: {{}}}}}}\n  gone: {{openapi: ./openapi.json, upstream: 'http://{closed}', tools: {{get_pet: {{}}}}}}\n",
        upstream.base
    );
    let config = folder.join("apis.yaml");
    std::fs::write(&config, curation).expect("curation");
    let config = config.to_string_lossy().into_owned();
    let mut ferry = Ferry::start(
        &[
            "serve",
            "--config",
            &config,
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--ready-check-upstream",
            "--ready-check-interval",
            "1",
        ],
        &[],
    );
    let base = ferry
        .logged("metrics")
        .trim_end_matches("/metrics")
        .to_owned();
    let why = answers(&runtime, &format!("{base}/readyz"), 503);
    assert_eq!(
        why,
        "not ready: the upstream has not accepted a connection yet\n"
    );
    // The upstream that refused is the one named.
    ferry.logged("error");
    let refused = ferry
        .seen
        .iter()
        .find(|line| line.contains("readiness: the upstream refused a connection"))
        .cloned()
        .unwrap_or_default();
    assert!(
        refused.contains(&format!("port={}", closed.port())),
        "{refused}"
    );
    assert!(ferry.stop());
}

#[test]
fn an_audit_write_that_fails_is_counted_and_logged_and_calls_go_on() {
    let folder = scratch("write-errors");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let upstream = runtime.block_on(pets_upstream());
    // Every write to /dev/full fails (no space left), as a full disk would.
    let (mut ferry, endpoint, metrics) =
        ferry_with_metrics(&folder, &upstream, &["--audit-log", "/dev/full"]);
    for _ in 0..2 {
        let answer = runtime.block_on(post_modern(
            &endpoint,
            "tools/call",
            call("get_pet", json!({"petName": FOUND})),
        ));
        assert_eq!(answer.json()["result"]["structuredContent"]["name"], FOUND);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, text) = runtime.block_on(get(&metrics));
        if text.contains("ferry_audit_write_errors_total 2") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "write errors not counted:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Logged, with the failure; at most once a minute, the failures kept back counted.
    assert_eq!(ferry.logged("suppressed"), "0");
    let logged = ferry
        .seen
        .iter()
        .find(|line| line.contains("suppressed="))
        .expect("the warning");
    assert!(
        logged.contains("audit log: a record could not be written")
            && logged.contains("No space left on device"),
        "{logged}"
    );
    assert!(ferry.stop());
}

/// Issue 23: the metrics listener had no `Host` check, so a page in a browser on the same
/// machine could read it through DNS rebinding. A name is refused unless allowed; an IP
/// address (how a scraper reaches a pod) and `localhost` are answered.
#[test]
fn the_metrics_listener_refuses_a_foreign_host() {
    let folder = scratch("metrics-host");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let upstream = runtime.block_on(pets_upstream());
    let (ferry, _, metrics) =
        ferry_with_metrics(&folder, &upstream, &["--allowed-host", "metrics.internal"]);
    let port = metrics
        .trim_start_matches("http://")
        .split(['/', ':'])
        .nth(1)
        .expect("a port")
        .to_owned();
    let status = |host: String| {
        runtime.block_on(async {
            crate::support::client()
                .get(&metrics)
                .header("host", host)
                .timeout(Duration::from_secs(5))
                .send()
                .await
                .expect("an answer")
                .status()
                .as_u16()
        })
    };
    assert_eq!(status(format!("rebound.example.com:{port}")), 403);
    assert_eq!(status("localhost.example.com".to_owned()), 403);
    assert_eq!(status(format!("127.0.0.1.example.com:{port}")), 403);
    assert_eq!(status(format!("127.0.0.1:{port}")), 200);
    assert_eq!(status(format!("localhost:{port}")), 200);
    assert_eq!(status(format!("10.1.2.3:{port}")), 200);
    assert_eq!(status(format!("[::1]:{port}")), 200);
    assert_eq!(status(format!("metrics.internal:{port}")), 200);
    assert!(ferry.stop());
}

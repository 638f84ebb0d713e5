//! State shared between replicas (`--state`), against a real `redis-server` (Debian's) that
//! each test starts on 127.0.0.1 and a free port, without persistence, and stops: budgets and
//! nonces held once for several servers, the failure rules when Redis is gone or silent, and
//! an ACL user with its password.
//!
//! Where `redis-server` is not installed the tests fail, unless `FERRY_SKIP_REDIS=1` says
//! that it could not be (`scripts/test.sh` sets it then, and says so).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ferry::mcp::confirm::{ConfirmKey, Nonces};
use ferry::mcp::limit::{Limit, Limiter, Verdict};
use ferry::mcp::{Incoming, Server, ServerOptions};
use ferry::observe::{Metrics, Observer};
use ferry::openapi::Document;
use ferry::rate::Rate;
use ferry::state::{self, Failure, OnFailure, Options, Spent, StartError};
use serde_json::{Value, json};

use crate::support::{MODERN, free_port};
use crate::upstream::{TestUpstream, json_reply};

/// A `redis-server` of this test's own, stopped (and its folder removed) when dropped.
pub(crate) struct Redis {
    child: Option<Child>,
    port: u16,
    folder: PathBuf,
    arguments: Vec<String>,
}

impl Redis {
    /// Starts one with `arguments` beside the test's own (loopback, a free port, no
    /// persistence); `None` where `redis-server` is absent and `FERRY_SKIP_REDIS=1`.
    pub(crate) fn start(test: &str, arguments: &[&str]) -> Option<Redis> {
        if Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_err()
        {
            assert!(
                std::env::var("FERRY_SKIP_REDIS").as_deref() == Ok("1"),
                "redis-server is not installed: run scripts/setup-tests.sh (or set FERRY_SKIP_REDIS=1 where it cannot be)"
            );
            eprintln!("{test}: skipped, redis-server is not installed (FERRY_SKIP_REDIS=1)");
            return None;
        }
        let folder = std::env::temp_dir().join(format!(
            "ferry-state-{test}-{}-{}",
            std::process::id(),
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.as_nanos())
        ));
        std::fs::create_dir_all(&folder).expect("a folder for redis");
        let mut redis = Redis {
            child: None,
            port: free_port(),
            folder,
            arguments: arguments
                .iter()
                .map(|argument| (*argument).to_owned())
                .collect(),
        };
        redis.run();
        Some(redis)
    }

    fn run(&mut self) {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1"])
            .args(self.listen())
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(&self.folder)
            .args(self.arguments.iter().filter(|argument| *argument != "tls"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Where it listens: the port as plain TCP, or, started with `tls`, as TLS only (with the
    /// test certificate of `tests/data/tls/`, for `localhost` and `127.0.0.1`).
    fn listen(&self) -> Vec<String> {
        let port = self.port.to_string();
        if !self.arguments.iter().any(|argument| argument == "tls") {
            return vec!["--port".into(), port];
        }
        let tls = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tls");
        let file = |name: &str| tls.join(name).display().to_string();
        vec![
            "--port".into(),
            "0".into(),
            "--tls-port".into(),
            port,
            "--tls-cert-file".into(),
            file("localhost.crt"),
            "--tls-key-file".into(),
            file("localhost.key"),
            "--tls-ca-cert-file".into(),
            file("ca.crt"),
            "--tls-auth-clients".into(),
            "no".into(),
        ]
    }

    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Ends it at once, as a crash would: what it held is lost.
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port, empty.
    fn restart(&mut self) {
        self.kill();
        self.run();
    }

    /// `redis-cli` against it, as the default user.
    fn cli(&self, arguments: &[&str]) -> String {
        let mut command = Command::new("redis-cli");
        command
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(arguments);
        if self
            .arguments
            .iter()
            .any(|argument| argument == "--aclfile")
        {
            command.env("REDISCLI_AUTH", ADMIN_PASSWORD);
        }
        let output = command.output().expect("redis-cli runs");
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

pub(crate) fn options(url: &str) -> Options {
    Options {
        url: url.to_owned(),
        password: None,
        ca_certificates: None,
        prefix: format!("ferry-test-{}:", std::process::id()),
        timeout: Duration::from_millis(200),
        on_failure: OnFailure::Closed,
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

fn rate(text: &str) -> Rate {
    Rate::parse(text).expect("a rate")
}

/// Two replicas' limiters on one Redis keep one budget: the GCRA burst is the count, a
/// refused call spends nothing (of any of its limits), and measuring spends nothing either.
#[tokio::test]
async fn replicas_spend_one_budget_in_redis() {
    let Some(redis) = Redis::start("budget", &[]) else {
        return;
    };
    let one = state::connect(options(&redis.url()))
        .await
        .expect("connects");
    let two = state::connect(options(&redis.url()))
        .await
        .expect("connects");
    let (first, second) = (Limiter::shared_by(one), Limiter::shared_by(two));
    // Each replica gives the tool a key of its own; the budget follows the tool's name.
    assert_eq!(first.key_for("getPet"), Limiter::FIRST_TOOL_KEY);
    second.key_for("other");
    let (first_key, second_key) = (first.key_for("getPet"), second.key_for("getPet"));
    assert_ne!(first_key, second_key);
    let own = |key| Limit::new(key, rate("5/min"));
    let reads = Limit::new(ferry::mcp::limit::READS_KEY, rate("4/min"));
    let mut passed = 0;
    for call in 0..10 {
        let (limiter, key) = if call % 2 == 0 {
            (&first, first_key)
        } else {
            (&second, second_key)
        };
        match limiter.verdict("alice", &[own(key), reads], true).await {
            Verdict::Fits => passed += 1,
            Verdict::Over(refusal) => {
                assert_eq!(refusal.limit, 1, "the reads budget is the one spent out");
                let seconds = refusal.retry_after_seconds();
                assert!((1..=15).contains(&seconds), "{seconds}");
            }
            Verdict::Unknown(failure) => panic!("{failure}"),
        }
    }
    assert_eq!(passed, 4, "the class's 4/min, whichever replica was asked");
    // The tool's own budget spent only what passed: one more fits it alone.
    assert!(matches!(
        second.verdict("alice", &[own(second_key)], true).await,
        Verdict::Fits
    ));
    // Measuring spends nothing; bob's budget is his own.
    for _ in 0..3 {
        assert!(matches!(
            first.verdict("bob", &[own(first_key)], false).await,
            Verdict::Fits
        ));
    }
    for _ in 0..5 {
        assert!(matches!(
            first.verdict("bob", &[own(first_key)], true).await,
            Verdict::Fits
        ));
    }
    assert!(matches!(
        second.verdict("bob", &[own(second_key)], true).await,
        Verdict::Over(_)
    ));
    // The keys name no subject in clear, and expire once their budget is full again.
    let keys = redis.cli(&["--scan", "--pattern", "ferry-test-*limit:*"]);
    assert!(
        keys.contains(":tool:getPet") && keys.contains(":reads"),
        "{keys}"
    );
    assert!(!keys.contains("alice") && !keys.contains("bob"), "{keys}");
    for key in keys.lines() {
        let ttl: i64 = redis.cli(&["pttl", key]).parse().expect("a ttl");
        assert!((1..=60_000).contains(&ttl), "{key}: {ttl}");
    }
}

/// Each serving thread runs a runtime of its own (as `ferry serve`'s do) and reaches Redis
/// over a connection of its own, made on its first round trip and kept: two threads making
/// five calls each open two connections, not one (which would wake the other thread on
/// every call) nor ten.
#[test]
fn each_serving_thread_keeps_a_connection_of_its_own() {
    let Some(redis) = Redis::start("threads", &[]) else {
        return;
    };
    let shared = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(state::connect(options(&redis.url())))
        .expect("connects");
    let received = || -> u64 {
        let stats = redis.cli(&["info", "stats"]);
        stats
            .lines()
            .find_map(|line| line.strip_prefix("total_connections_received:"))
            .and_then(|count| count.trim().parse().ok())
            .expect("total_connections_received in INFO stats")
    };
    let before = received();
    let serve = |shared: state::Shared| {
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async {
                let budget = state::Budget {
                    name: "tool:getPet",
                    interval_nanos: 1_000_000,
                    period_nanos: 1_000_000_000,
                };
                for _ in 0..5 {
                    let over = shared.spend("alice", &[budget], true).await;
                    assert_eq!(over.expect("Redis answers"), None);
                }
            });
        })
    };
    serve(shared.clone()).join().expect("the first thread");
    serve(shared).join().expect("the second thread");
    // `received` is a connection itself.
    assert_eq!(received() - before - 1, 2, "one connection for each thread");
}

/// A nonce is spent once for every replica, and a state sealed before Redis lost its data
/// is refused after it: its nonce may have been spent and forgotten.
#[tokio::test]
async fn a_nonce_is_spent_once_even_across_a_redis_that_lost_its_data() {
    let Some(mut redis) = Redis::start("nonce", &[]) else {
        return;
    };
    let one = state::connect(options(&redis.url()))
        .await
        .expect("connects");
    let two = state::connect(options(&redis.url()))
        .await
        .expect("connects");
    // Redis's memory began long before this state was sealed.
    let began = redis.cli(&["--scan", "--pattern", "ferry-test-*began"]);
    assert!(
        began.ends_with(":began"),
        "the first replica marked it: {began}"
    );
    redis.cli(&["set", &began, &(now() - 3_600).to_string()]);
    let nonce = [9u8; 16];
    let sealed = now();
    let expires = sealed + 300;
    assert_eq!(
        one.spend_nonce(&nonce, sealed, expires, now())
            .await
            .expect("spent"),
        Spent::Now
    );
    assert_eq!(
        two.spend_nonce(&nonce, sealed, expires, now())
            .await
            .expect("answered"),
        Spent::Already
    );
    let key = redis.cli(&["--scan", "--pattern", "ferry-test-*nonce:*"]);
    assert!(key.ends_with(&"09".repeat(16)), "{key}");
    let ttl: u64 = redis.cli(&["pttl", &key]).parse().expect("a ttl");
    assert!(
        ttl > 300_000 && ttl <= 364_000,
        "kept past its expiry: {ttl}"
    );
    redis.restart();
    // Whichever replica asks first after the loss, the state from before is refused: once,
    // and again. (Each replica's first round trip after the restart finds its connection
    // broken, and makes a new one.)
    for replica in [&two, &one] {
        let mut after = Err(Failure::TimedOut(Duration::ZERO));
        let deadline = Instant::now() + Duration::from_secs(10);
        while after.is_err() && Instant::now() < deadline {
            after = replica.spend_nonce(&nonce, sealed, expires, now()).await;
        }
        assert_eq!(after.expect("Redis answers again"), Spent::Unknowable);
    }
    // A state sealed after the loss (a few seconds, past the margin for clocks) is spent
    // once, as before.
    let fresh = [10u8; 16];
    let later = now() + 3;
    assert_eq!(
        one.spend_nonce(&fresh, later, later + 300, now())
            .await
            .expect("spent"),
        Spent::Now
    );
    assert_eq!(
        two.spend_nonce(&fresh, later, later + 300, now())
            .await
            .expect("answered"),
        Spent::Already
    );
}

/// Redis with an ACL user for ferry, only the commands and keys it needs, and the default
/// user behind a password of its own.
fn with_acl(test: &str, commands: &str) -> Option<Redis> {
    let user =
        format!("user ferry on >right-password-0123 ~ferry:* resetchannels -@all {commands}");
    let folder = std::env::temp_dir().join(format!("ferry-acl-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("a folder");
    let acl = folder.join("users.acl");
    std::fs::write(
        &acl,
        format!("user default on >{ADMIN_PASSWORD} ~* &* +@all\n{user}\n"),
    )
    .expect("the ACL file");
    let redis = Redis::start(test, &["--aclfile", acl.to_str().expect("UTF-8 path")]);
    let _ = std::fs::remove_dir_all(folder);
    redis
}

const ADMIN_PASSWORD: &str = "admin-password-for-tests";
const FERRY_ACL: &str = "+evalsha +script|load +get +set +time";

#[tokio::test]
async fn an_acl_user_and_its_password_are_honoured() {
    let Some(redis) = with_acl("acl", FERRY_ACL) else {
        return;
    };
    let url = format!("redis://ferry@127.0.0.1:{}", redis.port);
    let mut right = options(&url);
    right.prefix = "ferry:".into();
    right.password = Some("right-password-0123".into());
    // What is tested is the answer, not how soon it comes: a deadline a loaded machine
    // cannot miss, since a start-up check that times out is not a refusal.
    right.timeout = Duration::from_secs(2);
    let shared = state::connect(right.clone())
        .await
        .expect("the user logs in");
    let limiter = Limiter::shared_by(shared.clone());
    let limit = Limit::new(limiter.key_for("getPet"), rate("1/h"));
    assert!(matches!(
        limiter.verdict("alice", &[limit], true).await,
        Verdict::Fits
    ));
    assert!(matches!(
        limiter.verdict("alice", &[limit], true).await,
        Verdict::Over(_)
    ));
    let sealed = now() + 3;
    assert_eq!(
        shared
            .spend_nonce(&[1; 16], sealed, sealed + 60, now())
            .await
            .expect("spent"),
        Spent::Now
    );

    let mut wrong = right.clone();
    wrong.password = Some("wrong-password-0123".into());
    let refused = match state::connect(wrong).await {
        Err(StartError::Refused(text)) => text,
        other => panic!("a wrong password is refused at start: {other:?}"),
    };
    assert!(
        refused.contains("refused ferry") && refused.contains("FERRY_STATE_PASSWORD"),
        "{refused}"
    );
    assert!(!refused.contains("wrong-password"), "{refused}");

    // Another prefix than the user's keys, and the scripts cannot touch them.
    let mut elsewhere = right;
    elsewhere.prefix = "other:".into();
    match state::connect(elsewhere).await {
        Err(StartError::Refused(text)) => assert!(
            text.contains("NOPERM") || text.contains("no permissions"),
            "{text}"
        ),
        other => panic!("keys outside the user's are refused at start: {other:?}"),
    }
}

#[tokio::test]
async fn a_user_without_a_command_it_needs_is_refused_at_start() {
    let Some(redis) = with_acl("acl-set", "+evalsha +script|load +get +time") else {
        return;
    };
    let mut without_set = options(&format!("redis://ferry@127.0.0.1:{}", redis.port));
    without_set.prefix = "ferry:".into();
    without_set.password = Some("right-password-0123".into());
    without_set.timeout = Duration::from_secs(2);
    match state::connect(without_set).await {
        Err(StartError::Refused(text)) => {
            assert!(text.contains("can't run this command"), "{text}");
        }
        other => panic!("a missing permission is refused at start: {other:?}"),
    }
}

/// `rediss://`: TLS to Redis, trusting the CA given (`--state-ca-file`); a certificate the
/// roots do not trust is an error at start, saying what to do.
#[tokio::test]
async fn tls_to_redis_trusts_the_ca_it_is_given() {
    let Some(redis) = Redis::start("tls", &["tls"]) else {
        return;
    };
    let url = format!("rediss://localhost:{}", redis.port);
    let mut trusted = options(&url);
    // A TLS handshake on a busy machine can take longer than the other tests' deadline.
    trusted.timeout = Duration::from_secs(2);
    trusted.ca_certificates = Some(
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tls/ca.crt"))
            .expect("the test CA"),
    );
    let shared = state::connect(trusted).await.expect("TLS with the CA");
    let limiter = Limiter::shared_by(shared);
    let limit = Limit::new(limiter.key_for("getPet"), rate("1/h"));
    assert!(matches!(
        limiter.verdict("alice", &[limit], true).await,
        Verdict::Fits
    ));
    assert!(matches!(
        limiter.verdict("alice", &[limit], true).await,
        Verdict::Over(_)
    ));
    match state::connect(options(&url)).await {
        Err(StartError::Other(text)) => {
            assert!(text.contains("--state-ca-file"), "{text}");
        }
        other => panic!("an untrusted certificate is an error at start: {other:?}"),
    }
}

/// `ferry serve` with a password Redis refuses stops before it listens, saying why, and
/// with a URL that holds a password, without repeating it.
#[test]
fn serve_stops_at_start_on_a_refused_password() {
    let Some(redis) = with_acl("serve", FERRY_ACL) else {
        return;
    };
    let folder = std::env::temp_dir().join(format!("ferry-state-serve-{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("a folder");
    let curation = write_pets(&folder, "http://127.0.0.1:9");
    let serve = |url: &str, password: &str| {
        let started = Instant::now();
        let output = Command::new(env!("CARGO_BIN_EXE_ferry"))
            .args(["serve", "--config", curation.to_str().expect("UTF-8")])
            .args(["--listen", &format!("127.0.0.1:{}", free_port())])
            .args(["--state", url])
            .env("FERRY_STATE_PASSWORD", password)
            .stdin(Stdio::null())
            .output()
            .expect("ferry runs");
        assert!(started.elapsed() < Duration::from_secs(10));
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let url = format!("redis://ferry@127.0.0.1:{}", redis.port);
    let (code, stderr) = serve(&url, "wrong-password-0123");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("setting up the shared state (--state)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Password authentication failed") || stderr.contains("WRONGPASS"),
        "{stderr}"
    );
    assert!(!stderr.contains("wrong-password"), "{stderr}");
    let (code, stderr) = serve(
        &format!("redis://ferry:right-password-0123@127.0.0.1:{}", redis.port),
        "",
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("FERRY_STATE_PASSWORD"), "{stderr}");
    assert!(!stderr.contains("right-password"), "{stderr}");
    let _ = std::fs::remove_dir_all(folder);
}

/// A Redis that takes connections and never answers: start-up goes on (saying so), and each
/// round trip ends at its deadline.
#[tokio::test]
async fn a_silent_redis_costs_a_round_trip_its_deadline_and_no_more() {
    let silent = TcpListener::bind("127.0.0.1:0").expect("a loopback listener");
    let port = silent.local_addr().expect("address").port();
    // Accepted and held, never answered.
    let held = std::thread::spawn(move || {
        let mut connections = Vec::new();
        for connection in silent.incoming().take(8) {
            connections.push(connection);
        }
        std::thread::sleep(Duration::from_secs(30));
    });
    let started = Instant::now();
    let shared = state::connect(options(&format!("redis://127.0.0.1:{port}")))
        .await
        .expect("start-up does not wait for Redis");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let limiter = Limiter::shared_by(shared.clone());
    let limit = Limit::new(limiter.key_for("getPet"), rate("5/min"));
    for _ in 0..3 {
        let started = Instant::now();
        match limiter.verdict("alice", &[limit], true).await {
            Verdict::Unknown(Failure::TimedOut(after)) => {
                assert_eq!(after, Duration::from_millis(200))
            }
            other => panic!("a silent Redis times out: {other:?}"),
        }
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(190) && took < Duration::from_millis(1_000),
            "{took:?}"
        );
    }
    let started = Instant::now();
    assert!(
        shared
            .spend_nonce(&[3; 16], now(), now() + 60, now())
            .await
            .is_err()
    );
    assert!(started.elapsed() < Duration::from_millis(1_000));
    drop(held);
}

const DOCUMENT: &str = r#"
openapi: 3.1.0
info: {title: Pets, version: "1"}
paths:
  /pets:
    get: {operationId: listPets}
  /pets/{petId}:
    parameters: [{name: petId, in: path, required: true, schema: {type: integer}}]
    get: {operationId: getPet}
    delete: {operationId: deletePet}
"#;

fn write_pets(folder: &std::path::Path, upstream: &str) -> PathBuf {
    std::fs::write(folder.join("openapi.yaml"), DOCUMENT).expect("document");
    let curation = folder.join("ferry.yaml");
    std::fs::write(
        &curation,
        format!("openapi: ./openapi.yaml\nupstream: {upstream}\ntools:\n  listPets: {{}}\n  getPet: {{rate_limit: 2/min}}\n"),
    )
    .expect("curation");
    curation
}

/// A server of the pets API calling `upstream`, its rate limits and nonces in `shared`, its
/// records counted by `metrics`.
fn pets_server(upstream: &str, shared: &state::Shared, metrics: &Metrics) -> Server {
    let text = format!(
        "upstream: {upstream}\ntools:\n  listPets: {{}}\n  getPet: {{rate_limit: 2/min}}\n  deletePet:\n    confirm: {{message: \"Delete pet {{petId}}?\"}}\n"
    );
    let (curation, _) =
        ferry::curation::parse(&text, "ferry.yaml", PathBuf::new()).expect("curation parses");
    let value: Value = serde_saphyr::from_str(DOCUMENT).expect("document is YAML");
    let document = Document::from_value(value).expect("document is OpenAPI");
    let (catalog, diagnostics) = ferry::catalog::compile_chosen(&document, &curation);
    assert!(
        diagnostics.iter().all(|diagnostic| !diagnostic.is_error()),
        "{diagnostics:?}"
    );
    let options = ServerOptions {
        confirm_key: ConfirmKey::new(b"a confirmation key of at least thirty-two bytes"),
        confirm_nonces: Arc::new(Nonces::shared_by(shared.clone())),
        limiter: Arc::new(Limiter::shared_by(shared.clone())),
        observer: Some(Observer::new(None, Some(metrics.clone()))),
        ..ServerOptions::default()
    };
    let client = ferry::upstream::Upstream::new(&catalog).expect("client");
    Server::new(&catalog, Some(client), options)
}

async fn handle(server: &Server, tool: &str, arguments: Value, extra: Value) -> Value {
    let mut params = json!({
        "name": tool,
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        },
    });
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let body = body.to_string();
    let outgoing = server
        .handle(Incoming {
            body: body.as_bytes(),
            headers: None,
            principal: None,
            notify: None,
        })
        .await;
    let value: Value = serde_json::from_slice(&outgoing.body).expect("JSON");
    value["result"].clone()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// With Redis gone: a limited call follows `--state-on-failure`, a confirmation is refused
/// and says why, a call that needs no state goes on, none waits past the deadline, each
/// failure is counted; and all is as before once Redis is back.
#[tokio::test]
async fn the_failure_rules_hold_while_redis_is_gone_and_service_recovers() {
    let Some(mut redis) = Redis::start("rules", &[]) else {
        return;
    };
    let upstream =
        TestUpstream::start(|_, _| json_reply(200, json!({"id": 1, "name": "Rex"}))).await;
    let mut servers = Vec::new();
    for on_failure in [OnFailure::Closed, OnFailure::Open] {
        let mut options = options(&redis.url());
        options.on_failure = on_failure;
        // Long enough that a call waiting on it would show.
        options.timeout = Duration::from_millis(1_500);
        let shared = state::connect(options).await.expect("connects");
        let metrics = Metrics::new();
        servers.push((pets_server(&upstream.base, &shared, &metrics), metrics));
    }
    let (closed, closed_metrics) = &servers[0];
    let (open, open_metrics) = &servers[1];
    // Before: the two servers share one budget of two.
    assert!(
        handle(closed, "getPet", json!({"petId": 1}), json!({}))
            .await
            .get("isError")
            .is_none()
    );
    assert!(
        handle(open, "getPet", json!({"petId": 1}), json!({}))
            .await
            .get("isError")
            .is_none()
    );
    let over = handle(closed, "getPet", json!({"petId": 1}), json!({})).await;
    assert!(text(&over).starts_with("rate limit reached"), "{over}");
    // A question asked now, answered while Redis is gone.
    let asked = handle(closed, "deletePet", json!({"petId": 4}), json!({})).await;
    let state = asked["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned();
    let answer = json!({
        "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}},
        "requestState": state,
    });

    redis.kill();
    for _ in 0..3 {
        let started = Instant::now();
        let refused = handle(closed, "getPet", json!({"petId": 2}), json!({})).await;
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(refused["isError"], true, "{refused}");
        assert!(
            text(&refused).starts_with("rate limit not checked"),
            "{refused}"
        );
        assert_eq!(
            refused["_meta"]["dev.ferry/rateLimit"]["unchecked"], true,
            "{refused}"
        );
        let through = handle(open, "getPet", json!({"petId": 2}), json!({})).await;
        assert!(started.elapsed() < Duration::from_secs(4));
        assert!(through.get("isError").is_none(), "{through}");
        let started = Instant::now();
        let listed = handle(closed, "listPets", json!({}), json!({})).await;
        assert!(listed.get("isError").is_none(), "{listed}");
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "a call that needs no state does not wait: {:?}",
            started.elapsed()
        );
    }
    let seen = upstream.requests().len();
    let unconfirmed = handle(closed, "deletePet", json!({"petId": 4}), answer.clone()).await;
    assert_eq!(unconfirmed["isError"], true, "{unconfirmed}");
    assert!(
        text(&unconfirmed).contains("cannot be checked now"),
        "{unconfirmed}"
    );
    assert_eq!(upstream.requests().len(), seen, "nothing was sent");
    let counted = closed_metrics.render();
    assert!(
        counted.contains(r#"ferry_state_failures_total{check="rate_limit",rule="closed"} 3"#),
        "{counted}"
    );
    assert!(
        counted.contains(r#"ferry_state_failures_total{check="confirmation",rule="closed"} 1"#),
        "{counted}"
    );
    assert!(
        open_metrics
            .render()
            .contains(r#"ferry_state_failures_total{check="rate_limit",rule="open"} 3"#)
    );

    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(10);
    let recovered = loop {
        let result = handle(closed, "getPet", json!({"petId": 3}), json!({})).await;
        if result.get("isError").is_none() || Instant::now() > deadline {
            break result;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        recovered.get("isError").is_none(),
        "service recovers: {recovered}"
    );
    // The question asked before Redis lost its data stays refused.
    let after = handle(closed, "deletePet", json!({"petId": 4}), answer).await;
    assert_eq!(after["isError"], true, "{after}");
    assert!(text(&after).contains("lost what it held"), "{after}");
    assert_eq!(
        upstream.requests().len(),
        seen + 1,
        "only the recovered getPet was sent"
    );
}

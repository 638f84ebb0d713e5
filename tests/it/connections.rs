//! Connections, raw: a head that never completes is closed at its deadline, connections over
//! the bound wait, and shutting down ends at its deadline whatever clients do (issue 9,
//! defect 3). In-process, and through the built binary for the flags and SIGTERM.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use ferry::transport::http::{ConnectionLimit, HttpOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::*;

/// Sends `prefix`, then `drip` one byte every 50 ms; `true` when ferry closed the connection
/// (or answered and closed it) before the drip ran out.
async fn closed_while_dripping(address: &str, prefix: &[u8], drip: &[u8]) -> bool {
    let mut stream = TcpStream::connect(address).await.expect("connect");
    stream.write_all(prefix).await.expect("write");
    let mut buffer = [0; 512];
    for byte in drip {
        if stream.write_all(std::slice::from_ref(byte)).await.is_err() {
            return true;
        }
        match tokio::time::timeout(Duration::from_millis(50), stream.read(&mut buffer)).await {
            Ok(Ok(_)) | Ok(Err(_)) => return true,
            Err(_) => {}
        }
    }
    false
}

/// 200 header bytes: ten seconds of dripping.
fn endless_header() -> Vec<u8> {
    let mut header = b"x-drip: ".to_vec();
    header.resize(200, b'a');
    header
}

fn address_of(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string()
}

#[tokio::test]
async fn a_head_that_never_completes_is_closed_at_the_header_deadline() {
    let options = HttpOptions {
        header_timeout: Duration::from_millis(300),
        ..HttpOptions::default()
    };
    let running = start(server(), options).await;
    let address = address_of(&running.url);
    let head = format!("POST /mcp HTTP/1.1\r\nhost: {address}\r\n");
    assert!(
        closed_while_dripping(&address, head.as_bytes(), &endless_header()).await,
        "an HTTP/1.1 head"
    );
    assert!(
        closed_while_dripping(&address, b"", &b"\r\n".repeat(100)).await,
        "empty lines"
    );
    // Then silence: after nothing, after part of the HTTP/2 preface (the version is not even
    // known yet), and after all of it (no request ever comes).
    for prefix in [
        &b""[..],
        b"PRI * HTTP/2.0\r\n",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    ] {
        let mut silent = TcpStream::connect(&address).await.expect("connect");
        silent.write_all(prefix).await.expect("write");
        let mut answer = Vec::new();
        let read =
            tokio::time::timeout(Duration::from_secs(10), silent.read_to_end(&mut answer)).await;
        assert!(
            read.is_ok(),
            "closed after {:?}",
            String::from_utf8_lossy(prefix)
        );
    }
    // Requests in good time are served as before.
    assert_eq!(post(&running.url, &initialize(), &[]).await.status, 200);
}

#[tokio::test]
async fn connections_over_the_bound_wait_until_one_closes() {
    let options = HttpOptions {
        connection_limit: ConnectionLimit::new(1),
        ..HttpOptions::default()
    };
    let running = start(server(), options).await;
    let address = address_of(&running.url);
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{}",
        initialize().len(),
        initialize()
    );
    // The first connection is served and kept open.
    let mut first = TcpStream::connect(&address).await.expect("connect");
    first.write_all(request.as_bytes()).await.expect("write");
    let mut buffer = [0; 4096];
    let read = first.read(&mut buffer).await.expect("read");
    assert!(buffer[..read].starts_with(b"HTTP/1.1 200"));
    // The second waits while the first is open...
    let mut second = TcpStream::connect(&address).await.expect("connect");
    second.write_all(request.as_bytes()).await.expect("write");
    let early = tokio::time::timeout(Duration::from_millis(500), second.read(&mut buffer)).await;
    assert!(early.is_err(), "answered over the bound: {early:?}");
    // ...and is served once it closes.
    drop(first);
    let read = tokio::time::timeout(Duration::from_secs(10), second.read(&mut buffer))
        .await
        .expect("answered once a connection closed")
        .expect("read");
    assert!(
        buffer[..read].starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&buffer[..read])
    );
}

/// Regression (issue 23): a client dripping its request head held shutdown until its head
/// deadline or the shutdown deadline. With no request in flight it has nothing to finish.
#[tokio::test]
async fn shutting_down_closes_a_connection_still_sending_its_head_at_once() {
    let options = HttpOptions {
        header_timeout: Duration::from_secs(120),
        shutdown_timeout: Duration::from_secs(60),
        ..HttpOptions::default()
    };
    let running = start(server(), options).await;
    let address = address_of(&running.url);
    let mut stream = TcpStream::connect(&address).await.expect("connect");
    let head = format!("POST /mcp HTTP/1.1\r\nhost: {address}\r\nx-drip: a");
    stream.write_all(head.as_bytes()).await.expect("write");
    // The head is being read when shutdown begins.
    tokio::time::sleep(Duration::from_millis(100)).await;
    tokio::time::timeout(Duration::from_secs(5), running.shutdown())
        .await
        .expect("shut down at once, long before either deadline");
    let mut buffer = [0; 64];
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buffer)).await;
    assert!(
        matches!(read, Ok(Ok(0)) | Ok(Err(_))),
        "the connection was closed: {read:?}"
    );
}

#[tokio::test]
async fn shutting_down_drops_connections_still_open_at_its_deadline() {
    use crate::upstream::{Reply, TestUpstream, json_reply};
    // An upstream that answers only after a minute: the call is in flight at shutdown.
    let upstream = TestUpstream::start(|_, _| match json_reply(200, serde_json::json!({})) {
        Reply::Now(response) => Reply::After(Duration::from_secs(60), response),
        other => other,
    })
    .await;
    let mut tool = crate::upstream::tool("slow", http::Method::GET, "/slow", Vec::new());
    tool.operation_mut()
        .expect("an operation's tool")
        .call
        .timeout = Duration::from_secs(120);
    let catalog = crate::upstream::catalog(&upstream.base, &[tool]);
    let client = ferry::upstream::Upstream::new(&catalog).expect("client");
    let options = HttpOptions {
        header_timeout: Duration::from_secs(120),
        shutdown_timeout: Duration::from_millis(300),
        ..HttpOptions::default()
    };
    let running = start(
        ferry::mcp::Server::new(&catalog, Some(client), ferry::mcp::ServerOptions::default()),
        options,
    )
    .await;
    let url = running.url.clone();
    let call = tokio::spawn(async move {
        post_modern(
            &url,
            "tools/call",
            serde_json::json!({"name": "slow", "arguments": {}}),
        )
        .await
    });
    while upstream.requests().is_empty() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::timeout(Duration::from_secs(10), running.shutdown())
        .await
        .expect("shut down by its deadline");
    // Dropped with its connection, the call gets no answer: the client's request fails.
    let answered = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call ends once its connection is dropped");
    assert!(
        answered.is_err(),
        "answered after all: {:?}",
        answered.map(|a| a.text)
    );
}

/// `ferry demo` on a free loopback port with `arguments`; returns it, its endpoint's address
/// and its log, read on a thread of its own.
fn demo(
    arguments: &[&str],
) -> (
    std::process::Child,
    String,
    std::sync::mpsc::Receiver<String>,
) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["demo", "--listen", "127.0.0.1:0", "--workers", "2"])
        .args(arguments)
        .env("RUST_LOG", "ferry=info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ferry starts");
    let stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let (send, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = send.send(line);
        }
    });
    loop {
        let Ok(line) = lines.recv_timeout(Duration::from_secs(10)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ferry did not listen");
        };
        if let Some(at) = line.find("endpoint=http://") {
            let rest = &line[at + "endpoint=http://".len()..];
            let address = rest.split('/').next().expect("address").to_string();
            return (child, address, lines);
        }
    }
}

fn terminate(child: &std::process::Child) {
    let stopped = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(stopped.success());
}

/// Waits for `child` to end, at most `limit`; kills it and fails if it does not.
fn ended_within(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ferry did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_header_timeout_flag_closes_a_dripping_client() {
    let (mut child, address, _log) = demo(&["--header-timeout", "1"]);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let head = format!("POST /mcp HTTP/1.1\r\nhost: {address}\r\n");
    let closed = runtime.block_on(closed_while_dripping(
        &address,
        head.as_bytes(),
        &endless_header(),
    ));
    terminate(&child);
    let status = ended_within(&mut child, Duration::from_secs(30));
    assert!(closed, "the dripping client was kept");
    assert!(status.success(), "{status}");
}

/// Regression (issue 23): SIGTERM waited for a client that drips its request head until the
/// head or shutdown deadline; with only such clients ferry now exits within a second.
#[test]
fn sigterm_ends_ferry_at_once_while_a_client_drips_its_head() {
    let (mut child, address, _log) = demo(&["--header-timeout", "120", "--shutdown-timeout", "60"]);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let mut dripping = runtime.block_on(async {
        let mut stream = TcpStream::connect(&address).await.expect("connect");
        let head = format!("POST /mcp HTTP/1.1\r\nhost: {address}\r\nx-drip: a");
        stream.write_all(head.as_bytes()).await.expect("write");
        stream
    });
    // The head is being read when the signal comes.
    std::thread::sleep(Duration::from_millis(200));
    terminate(&child);
    let status = ended_within(&mut child, Duration::from_secs(3));
    assert!(status.success(), "{status}");
    let read = runtime.block_on(async {
        let mut buffer = [0; 64];
        tokio::time::timeout(Duration::from_secs(5), dripping.read(&mut buffer)).await
    });
    assert!(
        matches!(read, Ok(Ok(0)) | Ok(Err(_))),
        "the connection was closed: {read:?}"
    );
}

/// An HTTP/2 connection (prior knowledge, no TLS) to `address`, with its driver spawned: the
/// handle ends when ferry closes the connection.
async fn http2(
    address: &str,
) -> (
    hyper::client::conn::http2::SendRequest<String>,
    tokio::task::JoinHandle<hyper::Result<()>>,
) {
    let stream = TcpStream::connect(address).await.expect("connect");
    let (sender, connection) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(stream),
    )
    .await
    .expect("handshake");
    (sender, tokio::spawn(connection))
}

fn http2_post(address: &str, body: String, headers: &[(&str, String)]) -> hyper::Request<String> {
    let mut request = hyper::Request::post(format!("http://{address}/mcp"))
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    request.body(body).expect("request")
}

// Every answer says its length, on HTTP/1 and on HTTP/2, where hyper leaves it out of an
// empty body: a notification's 202 and a refused body's 413, as well as a result.
#[tokio::test]
async fn answers_say_their_length_even_when_empty() {
    let options = HttpOptions {
        body_limit: 1024,
        ..HttpOptions::default()
    };
    let running = start(server(), options).await;
    let address = address_of(&running.url);
    let (mut sender, _connection) = http2(&address).await;
    let notification = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let too_large = legacy("ping", serde_json::json!({"padding": "x".repeat(2048)}));
    for (body, status, length) in [
        (notification.to_string(), 202, Some("0")),
        (too_large, 413, Some("0")),
        (initialize(), 200, None),
    ] {
        let response = sender
            .send_request(http2_post(&address, body, &[]))
            .await
            .expect("answered");
        assert_eq!(response.status(), status);
        let said = response.headers()["content-length"]
            .to_str()
            .expect("ASCII")
            .to_owned();
        if let Some(length) = length {
            assert_eq!(said, length, "{status}");
        }
        let body = http_body_util::BodyExt::collect(response.into_body())
            .await
            .expect("body")
            .to_bytes();
        assert_eq!(said, body.len().to_string(), "{status}");
    }
    let notification = notification.to_string();
    let answer = post(&running.url, &notification, &[]).await;
    assert_eq!(answer.status, 202);
    assert_eq!(answer.headers["content-length"], "0");
}

// Issue 9, defect 3, found in review: an HTTP/2 connection whose requests have been answered has no request
// in flight, and is closed once it has had none for the header timeout, rather than keeping
// its place under the connection bound for as long as its client likes.
#[tokio::test]
async fn an_idle_http2_connection_is_closed_at_the_header_deadline() {
    let options = HttpOptions {
        header_timeout: Duration::from_millis(300),
        connection_limit: ConnectionLimit::new(1),
        ..HttpOptions::default()
    };
    let running = start(server(), options).await;
    let address = address_of(&running.url);
    let (mut sender, connection) = http2(&address).await;
    let response = sender
        .send_request(http2_post(&address, initialize(), &[]))
        .await
        .expect("answered");
    assert_eq!(response.status(), 200);
    let ended = tokio::time::timeout(Duration::from_secs(10), connection).await;
    assert!(ended.is_ok(), "the idle connection was kept");
    // Its place is free again.
    assert_eq!(post(&running.url, &initialize(), &[]).await.status, 200);
}

// Issue 9, defect 3, found in review: an open `subscriptions/listen` stream is a request in flight, so its
// connection is not idle however long it stays open.
#[tokio::test]
async fn an_open_subscription_keeps_its_http2_connection() {
    let options = HttpOptions {
        header_timeout: Duration::from_millis(200),
        request_timeout: Duration::from_millis(200),
        keep_alive: Duration::from_millis(50),
        ..HttpOptions::default()
    };
    let running = start(server(), options).await;
    let address = address_of(&running.url);
    let (mut sender, connection) = http2(&address).await;
    let (body, headers) = modern(
        "subscriptions/listen",
        serde_json::json!({"notifications": {"toolsListChanged": true}}),
    );
    let response = sender
        .send_request(http2_post(&address, body, &headers))
        .await
        .expect("answered");
    assert_eq!(response.status(), 200);
    let mut body = response.into_body();
    // Keep-alive comments keep coming for several header timeouts.
    let mut comments = 0;
    while comments < 20 {
        let frame = http_body_util::BodyExt::frame(&mut body)
            .await
            .expect("stream open")
            .expect("frame");
        if frame
            .data_ref()
            .is_some_and(|data| data.starts_with(b": keep-alive"))
        {
            comments += 1;
        }
    }
    assert!(
        !connection.is_finished(),
        "the subscription's connection was closed"
    );
}

// Issue 9, defect 3, found in review: a client that sends requests and never reads the answers stops making
// progress on ferry's writes, and its connection is failed at the request timeout rather
// than kept for ever.
#[tokio::test]
async fn a_client_that_never_reads_is_dropped_at_the_request_timeout() {
    let options = HttpOptions {
        header_timeout: Duration::from_secs(120),
        request_timeout: Duration::from_millis(300),
        ..HttpOptions::default()
    };
    let running = start(server(), options).await;
    let address = address_of(&running.url);
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("buffer");
    let mut stream = socket
        .connect(address.parse().expect("address"))
        .await
        .expect("connect");
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{}",
        initialize().len(),
        initialize()
    );
    // Pipelined requests, their answers never read: writing ends once ferry gives up on the
    // connection (the writes then fail) and not before, since ferry stops reading once its
    // own writes stall.
    let writing = async {
        loop {
            if stream.write_all(request.as_bytes()).await.is_err() {
                return;
            }
        }
    };
    let ended = tokio::time::timeout(Duration::from_secs(20), writing).await;
    assert!(ended.is_ok(), "the connection that never reads was kept");
}

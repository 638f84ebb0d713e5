use super::*;
use expect_test::{Expect, expect};
use std::time::Duration;
use tokio::net::TcpListener;

fn outgoing(method: Method, uri: &str, headers: &[(&str, &str)], body: Option<&str>) -> Request {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        map.append(
            HeaderName::from_bytes(name.as_bytes()).expect("name"),
            HeaderValue::from_str(value).expect("value"),
        );
    }
    Request {
        method,
        uri: uri.parse().expect("uri"),
        headers: map,
        body: body.map(|body| bytes::Bytes::copy_from_slice(body.as_bytes())),
        idempotent: false,
    }
}

fn encoded(request: &Request, host: &str) -> String {
    let mut out = Vec::new();
    encode(request, host, &mut out);
    String::from_utf8(out)
        .expect("text")
        .replace(super::super::USER_AGENT, "ferry/VERSION")
}

#[test]
fn requests_go_in_origin_form_with_host_first_and_a_length_only_for_a_body() {
    let get = outgoing(
        Method::GET,
        "http://api.test:8080/pets?limit=2",
        &[("x-trace", "1"), ("x-trace", "2")],
        None,
    );
    expect![[r#"
        GET /pets?limit=2 HTTP/1.1
        host: api.test:8080
        x-trace: 1
        x-trace: 2
        user-agent: ferry/VERSION
        accept: */*

    "#]]
    .assert_eq(&encoded(&get, "api.test:8080").replace('\r', ""));
    let post = outgoing(
        Method::POST,
        "http://api.test",
        &[("accept", "application/json"), ("user-agent", "mine")],
        Some("{\"a\":1}"),
    );
    expect![[r#"
        POST / HTTP/1.1
        host: api.test
        accept: application/json
        user-agent: mine
        content-length: 7

        {"a":1}"#]]
    .assert_eq(&encoded(&post, "api.test").replace('\r', ""));
    // Framing is ferry's to write, whatever a credential's header is named.
    let framed = outgoing(
        Method::PUT,
        "http://api.test/x",
        &[
            ("host", "elsewhere"),
            ("content-length", "1"),
            ("transfer-encoding", "chunked"),
        ],
        Some("ab"),
    );
    expect![[r#"
        PUT /x HTTP/1.1
        host: api.test
        user-agent: ferry/VERSION
        accept: */*
        content-length: 2

        ab"#]]
    .assert_eq(&encoded(&framed, "api.test").replace('\r', ""));
    let empty = outgoing(Method::PUT, "http://api.test/x", &[], Some(""));
    assert!(!encoded(&empty, "api.test").contains("content-length"));
    assert!(encoded(&get, "h").starts_with("GET /pets?limit=2 HTTP/1.1\r\nhost: h\r\n"));
}

/// Header lines, name and value.
type Lines<'a> = &'a [(&'a str, &'a str)];

fn headers(lines: Lines<'_>) -> HeaderMap {
    outgoing(Method::GET, "http://h/", lines, None).headers
}

#[test]
fn the_body_length_follows_rfc_9112() {
    let cases: &[(Method, u16, Version, Lines<'_>)] = &[
        (
            Method::HEAD,
            200,
            Version::HTTP_11,
            &[("content-length", "5")],
        ),
        (
            Method::GET,
            204,
            Version::HTTP_11,
            &[("content-length", "5")],
        ),
        (Method::GET, 304, Version::HTTP_11, &[]),
        (
            Method::GET,
            200,
            Version::HTTP_11,
            &[("transfer-encoding", "chunked")],
        ),
        (
            Method::GET,
            200,
            Version::HTTP_11,
            &[("transfer-encoding", "gzip, Chunked")],
        ),
        (
            Method::GET,
            200,
            Version::HTTP_11,
            &[("transfer-encoding", "chunked, gzip")],
        ),
        (
            Method::GET,
            200,
            Version::HTTP_11,
            &[("transfer-encoding", "chunked"), ("content-length", "5")],
        ),
        (
            Method::GET,
            200,
            Version::HTTP_10,
            &[("transfer-encoding", "chunked")],
        ),
        (
            Method::GET,
            200,
            Version::HTTP_11,
            &[("content-length", "5")],
        ),
        (
            Method::GET,
            200,
            Version::HTTP_11,
            &[("content-length", "5, 5"), ("content-length", "5")],
        ),
        (
            Method::GET,
            200,
            Version::HTTP_11,
            &[("content-length", "5"), ("content-length", "6")],
        ),
        (
            Method::GET,
            200,
            Version::HTTP_11,
            &[("content-length", "+5")],
        ),
        (
            Method::GET,
            200,
            Version::HTTP_11,
            &[("content-length", "")],
        ),
        (
            Method::GET,
            200,
            Version::HTTP_11,
            &[("content-length", "99999999999999999999999")],
        ),
        (Method::GET, 200, Version::HTTP_11, &[]),
    ];
    let lines: Vec<String> = cases
        .iter()
        .map(|(method, status, version, lines)| {
            let status = StatusCode::from_u16(*status).expect("status");
            format!(
                "{method} {status} {version:?} {lines:?}: {:?}",
                framing(method, status, *version, &headers(lines))
            )
        })
        .collect();
    expect![[r#"
        HEAD 200 OK HTTP/1.1 [("content-length", "5")]: Ok(Empty)
        GET 204 No Content HTTP/1.1 [("content-length", "5")]: Ok(Empty)
        GET 304 Not Modified HTTP/1.1 []: Ok(Empty)
        GET 200 OK HTTP/1.1 [("transfer-encoding", "chunked")]: Ok(Chunked)
        GET 200 OK HTTP/1.1 [("transfer-encoding", "gzip, Chunked")]: Ok(Chunked)
        GET 200 OK HTTP/1.1 [("transfer-encoding", "chunked, gzip")]: Ok(Close)
        GET 200 OK HTTP/1.1 [("transfer-encoding", "chunked"), ("content-length", "5")]: Ok(Chunked)
        GET 200 OK HTTP/1.0 [("transfer-encoding", "chunked")]: Err("transfer-encoding in an HTTP/1.0 answer")
        GET 200 OK HTTP/1.1 [("content-length", "5")]: Ok(Length(5))
        GET 200 OK HTTP/1.1 [("content-length", "5, 5"), ("content-length", "5")]: Ok(Length(5))
        GET 200 OK HTTP/1.1 [("content-length", "5"), ("content-length", "6")]: Err("conflicting content-length values")
        GET 200 OK HTTP/1.1 [("content-length", "+5")]: Err("an invalid content-length")
        GET 200 OK HTTP/1.1 [("content-length", "")]: Err("an invalid content-length")
        GET 200 OK HTTP/1.1 [("content-length", "99999999999999999999999")]: Err("an invalid content-length")
        GET 200 OK HTTP/1.1 []: Ok(Close)"#]]
    .assert_eq(&lines.join("\n"));
}

#[test]
fn a_connection_is_kept_when_the_version_and_connection_header_allow() {
    let cases: &[(Version, Lines<'_>, bool)] = &[
        (Version::HTTP_11, &[], true),
        (
            Version::HTTP_11,
            &[("connection", "Keep-Alive, close")],
            false,
        ),
        (
            Version::HTTP_11,
            &[("connection", "upgrade"), ("connection", "CLOSE")],
            false,
        ),
        (Version::HTTP_10, &[], false),
        (Version::HTTP_10, &[("connection", "keep-alive")], true),
        (
            Version::HTTP_11,
            &[("transfer-encoding", "chunked"), ("content-length", "3")],
            false,
        ),
    ];
    for (version, lines, kept) in cases {
        assert_eq!(
            keep_alive(*version, &headers(lines)),
            *kept,
            "{version:?} {lines:?}"
        );
    }
}

#[test]
fn chunk_sizes_are_hex_digits_before_any_extension() {
    for (line, size) in [
        ("1a", Some(26)),
        ("1A ; name=value", Some(26)),
        ("1a;name", Some(26)),
        ("5 ", Some(5)),
        ("0", Some(0)),
        ("ffffffffffffffff", Some(u64::MAX)),
        ("00000000000000000005", Some(5)),
        ("10000000000000000", None),
        ("+1", None),
        (" 5", None),
        ("5\r", None),
        ("", None),
        ("g", None),
        ("1 2", None),
    ] {
        assert_eq!(chunk_size(line.as_bytes()).ok(), size, "{line:?}");
    }
}

/// Sends a request over a fresh loopback connection to a server that reads one request head
/// and answers with `raw`, then closes (or, with `hold`, keeps the connection open until the
/// client closes it); renders what the exchange came to.
async fn exchange(method: Method, raw: &'static [u8], limit: usize, hold: bool) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("address").port();
    let server = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.expect("accept");
        if !read_request_head(&mut stream).await {
            return;
        }
        let _ = stream.write_all(raw).await;
        let mut buffer = [0u8; 1024];
        if hold {
            while matches!(stream.read(&mut buffer).await, Ok(read) if read > 0) {}
        }
        let _ = stream.shutdown().await;
    });
    let origin = format!("127.0.0.1:{port}");
    let mut connection = Connection::open("127.0.0.1", port, &origin, Duration::from_secs(5), None)
        .await
        .expect("connect");
    let request = outgoing(method, &format!("http://{origin}/"), &[], None);
    let rendered = render(connection.exchange(&request, &origin, limit).await);
    drop(connection);
    server.await.expect("server");
    rendered
}

/// Reads one request head (up to its empty line) from a loopback upstream's `stream`;
/// false when the client went away first.
pub(crate) async fn read_request_head(stream: &mut (impl AsyncRead + Unpin)) -> bool {
    let mut head = Vec::new();
    let mut buffer = [0u8; 1024];
    while !head.windows(4).any(|window| window == b"\r\n\r\n") {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return false,
            Ok(read) => head.extend_from_slice(&buffer[..read]),
        }
    }
    true
}

fn render(outcome: Result<Answer, Error>) -> String {
    match outcome {
        Ok(answer) => format!(
            "{} {:?}{}{}",
            answer.status.as_u16(),
            String::from_utf8_lossy(&answer.body),
            if answer.truncated { " truncated" } else { "" },
            if answer.reusable { " reusable" } else { "" },
        ),
        Err(Error::Closed { nothing, error }) => {
            format!("closed (nothing came: {nothing}): {error}")
        }
        Err(Error::Head(malformed, detail)) => format!("head {malformed:?}: {detail}"),
        Err(Error::Body { status, detail, .. }) => {
            format!("body of {} failed: {detail}", status.as_u16())
        }
    }
}

async fn check(method: Method, raw: &'static [u8], limit: usize, expect: Expect) {
    expect.assert_eq(&exchange(method, raw, limit, false).await);
}

#[tokio::test]
async fn answers_are_read_by_their_framing() {
    check(
        Method::GET,
        b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello",
        100,
        expect![[r#"200 "hello" reusable"#]],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nx-checksum: 1\r\n\r\n",
        100,
        expect![[r#"200 "hello world" reusable"#]],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok",
        100,
        expect![[r#"201 "ok" reusable"#]],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.0 200 OK\r\n\r\nuntil the end",
        100,
        expect![[r#"200 "until the end""#]],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok",
        100,
        expect![[r#"200 "ok""#]],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokEXTRA",
        100,
        expect![[r#"200 "ok""#]],
    )
    .await;
    check(
        Method::HEAD,
        b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n",
        100,
        expect![[r#"200 "" reusable"#]],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.1 204 No Content\r\n\r\n",
        100,
        expect![[r#"204 "" reusable"#]],
    )
    .await;
    // Both lengths: read as chunked, the connection not trusted again.
    check(
        Method::GET,
        b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
        100,
        expect![[r#"200 "ok""#]],
    )
    .await;
}

#[tokio::test]
async fn a_body_past_the_cap_is_cut_and_its_connection_not_kept() {
    check(
        Method::GET,
        b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n0123456789",
        4,
        expect![[r#"200 "0123" truncated"#]],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n0123456789",
        10,
        expect![[r#"200 "0123456789" reusable"#]],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n",
        5,
        expect![[r#"200 "abcde" truncated"#]],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.1 200 OK\r\n\r\nabcdef",
        3,
        expect![[r#"200 "abc" truncated"#]],
    )
    .await;
    // A length past the cap is cut once the cap is reached, not when more comes.
    let held = exchange(
        Method::GET,
        b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n0123",
        4,
        true,
    );
    expect![[r#"200 "0123" truncated"#]].assert_eq(&held.await);
}

#[tokio::test]
async fn broken_answers_are_told_apart() {
    check(
        Method::GET,
        b"",
        100,
        expect!["closed (nothing came: true): connection closed before a whole response head"],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.1 200 OK\r\ncontent-le",
        100,
        expect!["closed (nothing came: false): connection closed before a whole response head"],
    )
    .await;
    check(
        Method::GET,
        b"SSH-2.0-OpenSSH\r\n\r\n",
        100,
        expect!["head Invalid: not an HTTP response head"],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.1 101 Switching Protocols\r\nupgrade: h2c\r\n\r\n",
        100,
        expect!["head Invalid: a protocol switch ferry did not ask for"],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.1 200 OK\r\nx: \x01\r\n\r\n",
        100,
        expect!["head Invalid: not an HTTP response head"],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n",
        100,
        expect!["head Invalid: conflicting content-length values"],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\nshort",
        100,
        expect!["body of 200 failed: connection closed before the body ended"],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabcdef\r\n0\r\n\r\n",
        100,
        expect!["body of 200 failed: a chunk is longer than its size says"],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
        100,
        expect!["body of 200 failed: an invalid chunk size"],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n",
        100,
        expect!["body of 200 failed: a chunk line does not end in CRLF"],
    )
    .await;
    check(
        Method::GET,
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n",
        100,
        expect!["body of 200 failed: connection closed before the body ended"],
    )
    .await;
    const INTERIM: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n";
    check(
        Method::GET,
        INTERIM,
        100,
        expect!["head Invalid: too many 1xx answers"],
    )
    .await;
}

/// A stream whose writes fail as a closed connection's do, and whose reads give `answer`.
fn refusing_writes(answer: &'static [u8]) -> impl AsyncRead + AsyncWrite + Unpin {
    use std::pin::Pin;
    use std::task::{Context, Poll};
    struct Refusing;
    impl AsyncWrite for Refusing {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &[u8],
        ) -> Poll<io::Result<usize>> {
            Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }
    tokio::io::join(answer, Refusing)
}

#[tokio::test]
async fn an_answer_that_came_before_the_request_was_written_whole_is_the_result() {
    let request = outgoing(
        Method::PUT,
        "http://api.test/upload",
        &[],
        Some("a large body"),
    );
    let answer = b"HTTP/1.1 413 Content Too Large\r\ncontent-length: 8\r\n\r\ntoo big!";
    let mut answered = Connection::over(refusing_writes(answer), "api.test");
    expect![[r#"413 "too big!""#]]
        .assert_eq(&render(answered.exchange(&request, "api.test", 100).await));
    let mut silent = Connection::over(refusing_writes(b""), "api.test");
    expect!["closed (nothing came: true): broken pipe"]
        .assert_eq(&render(silent.exchange(&request, "api.test", 100).await));
    // Part of an answer came: the upstream began answering, so the request is not repeatable
    // as unanswered; and a malformed answer stays malformed.
    let mut half = Connection::over(refusing_writes(b"HTTP/1.1 200 OK\r\ncont"), "api.test");
    expect!["closed (nothing came: false): broken pipe"]
        .assert_eq(&render(half.exchange(&request, "api.test", 100).await));
    let mut garbled = Connection::over(refusing_writes(b"SMTP ready\r\n\r\n"), "api.test");
    expect!["head Invalid: not an HTTP response head"]
        .assert_eq(&render(garbled.exchange(&request, "api.test", 100).await));
}

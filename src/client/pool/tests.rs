use super::*;
use crate::client::wire::tests::read_request_head;
use http::{HeaderMap, Method};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// An upstream on loopback that answers each connection's first request `{}` and then
/// closes it, or with `keep` keeps it open; its base URL.
async fn upstream(keep: bool) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                if !read_request_head(&mut stream).await {
                    return;
                }
                let mut buffer = [0u8; 1024];
                let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}";
                let _ = stream.write_all(answer).await;
                if keep {
                    while matches!(stream.read(&mut buffer).await, Ok(read) if read > 0) {}
                }
            });
        }
    });
    base
}

fn get(base: &str) -> Request {
    Request {
        method: Method::GET,
        uri: format!("{base}/pets").parse().expect("uri"),
        headers: HeaderMap::new(),
        body: None,
        idempotent: true,
    }
}

#[tokio::test]
async fn kept_connections_the_upstream_closed_are_swept_and_open_ones_stay() {
    for (keep, kept_after) in [(false, 0), (true, 1)] {
        let base = upstream(keep).await;
        let pool = Pool::with_sweep(Duration::from_secs(5), None, Duration::from_millis(20));
        let answered = pool.send(&get(&base), 1000).await;
        assert!(answered.is_ok(), "keep: {keep}");
        assert_eq!(pool.kept(), 1, "kept once answered, keep: {keep}");
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(pool.kept(), kept_after, "after sweeps, keep: {keep}");
    }
}

#[test]
fn a_kept_connection_is_taken_again_only_on_the_thread_that_kept_it() {
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let (base, accepted) = server.block_on(async {
        let (port, accepted) = https_or_plain_upstream(None, |_| Turn::Keep(OK)).await;
        (format!("http://127.0.0.1:{port}"), accepted)
    });
    let pool = Pool::new(Duration::from_secs(5), None);
    // Each thread runs a runtime of its own, as ferry's serving threads do.
    let on_a_thread = |calls: usize| {
        let (pool, base) = (pool.clone(), base.clone());
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async {
                for _ in 0..calls {
                    assert!(pool.send(&get(&base), 1000).await.is_ok());
                }
            });
            // The runtime ends with the thread: what it kept must not be taken elsewhere.
        })
        .join()
        .expect("thread")
    };
    on_a_thread(3);
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        1,
        "one thread, one connection"
    );
    on_a_thread(2);
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        2,
        "another thread opens its own"
    );
}

const OK: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}";

/// What a test server does with one request.
#[derive(Clone, Copy)]
enum Turn {
    /// Answers and keeps the connection for the next request.
    Keep(&'static [u8]),
    /// Answers, then closes (with TLS's `close_notify` over TLS).
    Close(&'static [u8]),
    /// Writes these bytes and a megabyte of body, then keeps reading.
    Flood(&'static [u8]),
}

/// A server on loopback, over TLS with the test CA's `localhost` certificate when `tls` (the
/// server's configuration) is given: each request (counted across connections) gets what
/// `turn` says for its number. Its port, and how many connections it accepted.
async fn https_or_plain_upstream(
    tls: Option<Arc<rustls::ServerConfig>>,
    turn: fn(usize) -> Turn,
) -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::AtomicUsize;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = accepted.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            let (tls, requests) = (tls.clone(), requests.clone());
            tokio::spawn(async move {
                match tls {
                    Some(config) => {
                        let acceptor = tokio_rustls::TlsAcceptor::from(config);
                        if let Ok(session) = acceptor.accept(stream).await {
                            serve_turns(session, &requests, turn).await;
                        }
                    }
                    None => serve_turns(stream, &requests, turn).await,
                }
            });
        }
    });
    (port, accepted)
}

async fn serve_turns(
    mut stream: impl tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    requests: &std::sync::atomic::AtomicUsize,
    turn: fn(usize) -> Turn,
) {
    let mut buffer = [0u8; 1024];
    while read_request_head(&mut stream).await {
        match turn(requests.fetch_add(1, Ordering::SeqCst)) {
            Turn::Keep(answer) => {
                let _ = stream.write_all(answer).await;
                let _ = stream.flush().await;
            }
            Turn::Close(answer) => {
                let _ = stream.write_all(answer).await;
                let _ = stream.shutdown().await;
                return;
            }
            Turn::Flood(head) => {
                let _ = stream.write_all(head).await;
                let _ = stream.write_all(&vec![b'a'; 1 << 20]).await;
                let _ = stream.flush().await;
                while matches!(stream.read(&mut buffer).await, Ok(read) if read > 0) {}
                return;
            }
        }
    }
}

const TLS_DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tls");

fn server_tls() -> Arc<rustls::ServerConfig> {
    let path = |name: &str| std::path::PathBuf::from(format!("{TLS_DATA}/{name}"));
    crate::transport::tls::server_config(&path("localhost.crt"), &path("localhost.key"))
        .expect("test certificate")
}

/// Trusting only the test CA, as a deployment trusts its platform's store.
fn test_ca() -> Tls {
    let ca = std::fs::read(format!("{TLS_DATA}/ca.crt")).expect("test CA");
    Tls::with_roots(&ca).expect("CA parses")
}

/// An HTTPS server on loopback and a pool that trusts its CA; the server's base URL (named
/// `host`) and how many connections it accepted.
async fn https(
    host: &str,
    turn: fn(usize) -> Turn,
) -> (Pool, String, Arc<std::sync::atomic::AtomicUsize>) {
    let (port, accepted) = https_or_plain_upstream(Some(server_tls()), turn).await;
    let pool = Pool::new(Duration::from_secs(5), Some(test_ca()));
    (pool, format!("https://{host}:{port}"), accepted)
}

#[tokio::test]
async fn https_answers_come_over_one_kept_session() {
    for host in ["localhost", "127.0.0.1"] {
        let (pool, base, accepted) = https(host, |_| Turn::Keep(OK)).await;
        for _ in 0..3 {
            let response = pool.send(&get(&base), 1000).await.expect("answered");
            assert_eq!(response.status, 200);
            assert_eq!(response.body, b"{}");
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "{host}");
        assert_eq!(pool.kept(), 1, "{host}");
    }
}

#[tokio::test]
async fn a_session_the_server_closed_is_not_used_again() {
    let (pool, base, accepted) = https("localhost", |_| Turn::Close(OK)).await;
    for _ in 0..2 {
        let response = pool.send(&get(&base), 1000).await.expect("answered");
        assert_eq!(response.status, 200);
        // Let the close arrive before the next request goes out.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_certificate_not_trusted_fails_to_connect_and_may_be_retried() {
    let (_, base, _) = https("localhost", |_| Turn::Keep(OK)).await;
    // The server's own certificate as the only root: no CA vouches for it.
    let leaf = std::fs::read(format!("{TLS_DATA}/localhost.crt")).expect("certificate");
    let pool = Pool::new(
        Duration::from_secs(5),
        Some(Tls::with_roots(&leaf).expect("parses")),
    );
    let failure = pool.send(&get(&base), 1000).await.expect_err("refused");
    assert!(
        matches!(failure, Failure::Connect { timeout: false, .. }),
        "{failure:?}"
    );
    assert!(failure.retryable());
    assert!(failure.detail().contains("certificate"), "{failure}");
    // Without TLS set up, https fails the same way.
    let plain = Pool::new(Duration::from_secs(5), None);
    let failure = plain.send(&get(&base), 1000).await.expect_err("refused");
    assert!(
        matches!(failure, Failure::Connect { timeout: false, .. }),
        "{failure:?}"
    );
}

#[tokio::test]
async fn a_handshake_that_never_ends_is_a_connect_timeout() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let pool = Pool::new(Duration::from_millis(200), Some(test_ca()));
    let started = Instant::now();
    let failure = pool
        .send(&get(&format!("https://localhost:{port}")), 1000)
        .await
        .expect_err("no session");
    assert!(
        matches!(failure, Failure::Connect { timeout: true, .. }),
        "{failure:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_server_that_closes_mid_answer_fails_the_body() {
    let (pool, base, _) = https("localhost", |_| {
        Turn::Close(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{\"partial\":")
    })
    .await;
    let failure = pool.send(&get(&base), 1000).await.expect_err("cut");
    let Failure::Body { status, .. } = &failure else {
        panic!("{failure:?}");
    };
    assert_eq!(*status, 200);
    assert_eq!(pool.kept(), 0);
}

#[tokio::test]
async fn an_https_body_is_cut_at_the_size_cap_and_its_session_not_kept() {
    let (pool, base, _) = https("localhost", |_| {
        Turn::Flood(b"HTTP/1.1 200 OK\r\ncontent-length: 1048576\r\n\r\n")
    })
    .await;
    let response = pool.send(&get(&base), 1000).await.expect("answered");
    assert!(response.truncated);
    assert_eq!(response.body.len(), 1000);
    assert_eq!(pool.kept(), 0);
}

#[tokio::test]
async fn send_within_ends_a_fetch_that_takes_too_long() {
    let (pool, base, _) = https("localhost", |_| Turn::Keep(b"HTTP/1.1 200 OK\r\n")).await;
    let failure = pool
        .send_within(&get(&base), 1000, Duration::from_millis(200))
        .await
        .expect_err("no whole answer");
    assert!(
        matches!(failure, Failure::Closed { timeout: true, .. }),
        "{failure:?}"
    );
}

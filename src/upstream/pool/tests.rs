use super::*;
use crate::upstream::wire::tests::read_request_head;
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

fn get(base: &str) -> Outgoing {
    Outgoing {
        method: Method::GET,
        uri: format!("{base}/pets").parse().expect("uri"),
        headers: HeaderMap::new(),
        body: None,
    }
}

#[tokio::test]
async fn kept_connections_the_upstream_closed_are_swept_and_open_ones_stay() {
    for (keep, kept_after) in [(false, 0), (true, 1)] {
        let base = upstream(keep).await;
        let plain = Arc::new(Plain::new(
            Duration::from_secs(5),
            Duration::from_millis(20),
        ));
        let answered = plain.send(&get(&base), 1000).await;
        assert!(matches!(answered, Attempt::Answer(_)), "keep: {keep}");
        assert_eq!(plain.kept(), 1, "kept once answered, keep: {keep}");
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(plain.kept(), kept_after, "after sweeps, keep: {keep}");
    }
}

//! The client's side: a JSON-RPC message through [`mcp::Server::handle`] (as HTTP and as stdio
//! serve it), lines through the stdio transport, and a mirrored header's value.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use base64::Engine as _;
use http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::Value;

use super::{block_on, check_response, fixed_server, header_map, split_head};
use crate::mcp::{self, Incoming, Kind};

/// A JSON-RPC message, optionally preceded by HTTP headers (`Name: value` lines, then an
/// empty line); without headers it is served as stdio serves it. Every answer is one
/// well-formed JSON-RPC response, or nothing for a notification.
pub fn handle(data: &[u8]) {
    let (headers, body) = match split_head(data) {
        Some((head, body)) => (Some(header_map(head)), body),
        None => (None, data),
    };
    let incoming = Incoming {
        body,
        headers: headers.as_ref(),
        principal: None,
        notify: None,
    };
    let outgoing = block_on(fixed_server().handle(incoming));
    match &outgoing.kind {
        Kind::Accepted { .. } => {
            assert_eq!(outgoing.status, StatusCode::ACCEPTED);
            assert!(outgoing.body.is_empty(), "a notification is not answered");
        }
        Kind::Json | Kind::Refused(_) => check_response(&outgoing.body),
        Kind::Subscription {
            end,
            tools_list_changed,
        } => {
            let first: Value =
                serde_json::from_slice(&outgoing.body).expect("a stream's first message is JSON");
            assert_eq!(first.get("jsonrpc"), Some(&Value::from("2.0")));
            assert!(first.get("method").is_some_and(Value::is_string));
            check_response(end);
            if let Some(notification) = tools_list_changed {
                let notification: Value =
                    serde_json::from_slice(notification).expect("a notification is JSON");
                assert!(notification.get("id").is_none(), "a notification has no id");
            }
        }
    }
}

/// Lines as the stdio transport reads them: every line written back is one JSON-RPC
/// response, and nothing else is written.
pub fn stdio(data: &[u8]) {
    let written = Arc::new(Mutex::new(Vec::new()));
    let output = Collect(Arc::clone(&written));
    let server = Arc::clone(fixed_server());
    block_on(crate::transport::stdio::serve(server, data, output, 4096))
        .expect("reading from memory cannot fail");
    let written = written.lock().unwrap_or_else(PoisonError::into_inner);
    assert!(
        written.is_empty() || written.ends_with(b"\n"),
        "every answer ends its line"
    );
    for line in written
        .split(|byte| *byte == b'\n')
        .filter(|line| !line.is_empty())
    {
        check_response(line);
    }
}

/// A mirrored header's value (`Mcp-Name`, `Mcp-Param-*`): plain text comes back unchanged,
/// the `=?base64?…?=` form decodes to text that encodes back to it, and comparing either
/// with a body's value never panics.
pub fn header_value(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let encoded = text
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="));
    match (mcp::headers::decode_value(text), encoded) {
        (Ok(decoded), None) => assert_eq!(decoded, text, "a plain value is read as written"),
        (Ok(decoded), Some(encoded)) => {
            let again = base64::engine::general_purpose::STANDARD.encode(decoded.as_bytes());
            assert_eq!(
                again.trim_end_matches('='),
                encoded.trim_end_matches('='),
                "a decoded value encodes back to what was sent"
            );
        }
        (Err(_), None) => panic!("a plain value is never refused"),
        (Err(_), Some(_)) => {}
    }
    if let Ok(decoded) = mcp::headers::decode_value(text) {
        for body in [
            Value::from(decoded.clone()),
            Value::from(42),
            Value::from(-0.5),
            Value::Bool(true),
        ] {
            let _ = mcp::headers::agrees(&decoded, &body);
        }
    }
    if let Ok(value) = HeaderValue::from_str(text) {
        let mut headers = HeaderMap::new();
        headers.insert("mcp-name", value);
        let _ = mcp::headers::decoded(&headers, mcp::headers::MCP_NAME);
    }
}

/// Where the stdio transport's output goes: into memory.
struct Collect(Arc<Mutex<Vec<u8>>>);

impl tokio::io::AsyncWrite for Collect {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let mut written = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        written.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

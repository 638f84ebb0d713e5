//! The upstream's side, and what ferry sends it: a request built from any arguments, an
//! answer shaped into a tool result, the plain-HTTP reader, `Link` and `Retry-After`.

use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};

use base64::Engine as _;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use serde_json::{Map, Value};

use super::{block_on, fixed_catalog, header_map, split_head};
use crate::catalog::{NextPage, Tool};
use crate::upstream::{Upstream, request, response};

/// The configured credential the response shaper must never serve, in any form: it holds
/// characters that JSON may escape (`/`) and that percent-encoding changes (`/`, `+`, `=`).
pub const SECRET: &str = "Sk/9+tok=n";

/// Arguments for one of [`DOCUMENT`]'s tools (the first byte picks it; the rest is JSON: an
/// object is the arguments, any other value is given to every argument). Whatever they are,
/// each path value stays in its own segment, the request stays on the upstream's origin
/// under its base path, and no header carries CR, LF or NUL.
pub fn request(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let tools = &fixed_catalog().tools;
    let tool = &tools[usize::from(pick) % tools.len()];
    let Ok(value) = serde_json::from_slice::<Value>(rest) else {
        return;
    };
    let arguments = match value {
        Value::Object(map) => map,
        other => argument_names(tool)
            .into_iter()
            .map(|name| (name, other.clone()))
            .collect(),
    };
    let Some(operation) = tool.operation() else {
        return;
    };
    let plan = &operation.plan;
    let route = request::Route::new(plan);
    let extras = request::Extras {
        page_size: (pick & 0x80 != 0).then_some(("q", 25)),
        link_cursor: (pick & 0x40 != 0).then_some("cursor"),
        query_credential: Some(("api_key", "Sk%2F9")),
    };
    let Ok(prepared) = request::build(plan, &route, &arguments, extras) else {
        return;
    };

    let (path, query) = match prepared.path_and_query.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (prepared.path_and_query.as_str(), None),
    };
    check_segments(&plan.path, path);
    let query = query.expect("the query credential is always sent");
    assert!(
        query.ends_with("api_key=Sk%2F9"),
        "ferry's query credential is the query's last item: {query:?}"
    );
    assert!(
        !query.contains('#'),
        "a query value moved into the fragment: {query:?}"
    );

    let uri = fixed_upstream()
        .target(0, &prepared.path_and_query)
        .expect("a built request has a target");
    assert_eq!(uri.scheme_str(), Some("http"));
    assert_eq!(uri.host(), Some("127.0.0.1"), "the origin changed: {uri}");
    assert_eq!(uri.port_u16(), Some(9), "the origin changed: {uri}");
    assert_eq!(
        uri.path(),
        format!("/api/v1{path}"),
        "the path moved on its way into the URL"
    );
    assert_eq!(
        uri.query(),
        Some(query),
        "the query changed on its way into the URL"
    );

    for (name, value) in &prepared.headers {
        for bytes in [name.as_str().as_bytes(), value.as_bytes()] {
            assert!(
                !bytes.iter().any(|byte| matches!(byte, b'\r' | b'\n' | 0)),
                "a header carries CR, LF or NUL: {name}: {value:?}"
            );
        }
        assert!(
            !matches!(
                name.as_str(),
                "host" | "content-length" | "transfer-encoding" | "connection"
            ),
            "an argument set the framing header {name}"
        );
    }
    if let Some(body) = &prepared.body {
        let content_type = body.content_type.as_bytes();
        assert!(
            !content_type
                .iter()
                .any(|byte| matches!(byte, b'\r' | b'\n' | 0))
        );
    }
}

/// An upstream answer: a status byte, a flags byte (cut at the cap, projected, paged by
/// `Link` or by a field), then `Name: value` header lines, an empty line and the body. The
/// configured [`SECRET`] never appears in the tool result `mcp` writes of the answer, in any
/// form a client can read it in.
pub fn response(data: &[u8]) {
    const STATUSES: [u16; 14] = [
        200, 201, 202, 204, 206, 301, 302, 400, 401, 403, 404, 429, 500, 503,
    ];
    let [status, flags, rest @ ..] = data else {
        return;
    };
    let status = StatusCode::from_u16(STATUSES[usize::from(*status) % STATUSES.len()])
        .expect("a listed status is valid");
    let (head, body) = split_head(rest).unwrap_or((b"", rest));
    let headers = header_map(head);
    let observed = crate::client::Response {
        status,
        headers,
        body: body.to_vec(),
        truncated: flags & 1 != 0,
    };
    let report_headers: Vec<HeaderName> = response::REPORTED_HEADERS
        .iter()
        .map(|name| HeaderName::from_static(name))
        .chain([HeaderName::from_static("x-request-id")])
        .collect();
    let shape = crate::catalog::shape::ResultShape::new(Some(&[
        "id".into(),
        "/data/name".into(),
        "token".into(),
    ]));
    let next = match flags >> 2 & 3 {
        1 => Some(NextPage::Link {
            cursor_argument: "cursor".into(),
        }),
        2 => Some(NextPage::Field {
            pointer: "/next".into(),
            cursor_argument: "cursor".into(),
        }),
        _ => None,
    };
    // What ferry registers for an API key: the key and its percent-encoded form.
    let secrets =
        crate::upstream::redact::Secrets::new([SECRET.to_string(), "Sk%2F9%2Btok%3Dn".to_string()]);
    let shaping = response::Shaping {
        tool: "getItem",
        limit_bytes: 1 << 20,
        report_headers: &report_headers,
        next: next.as_ref(),
        authenticated: true,
        secrets: &secrets,
        query_credential: Some("api_key"),
    };
    let mut answer = Ok(response::shape(observed, &shaping));
    if flags & 2 != 0 {
        answer = crate::mcp::result::shaped(&shape, answer);
    }
    let written = crate::mcp::result::era_free(shaping.tool, answer);
    let served: Value = serde_json::from_slice(&written).expect("a written result is JSON");
    check_secret_absent(&served, 0);
    let text = String::from_utf8_lossy(&written);
    assert!(
        !text.contains(SECRET),
        "the secret is in the served JSON: {text}"
    );
}

/// A `Link` header's value: the `rel="next"` target found is one written between `<` and
/// `>` in it.
pub fn link(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(target) = response::next_link(text) {
        assert!(!target.contains('>'), "a target ends at its `>`");
        assert!(
            text.contains(&format!("<{target}>")),
            "the target is written between `<` and `>`"
        );
    }
}

/// A `Retry-After` value: read without a panic, and a wait taken from it only when it ends
/// before the call's deadline.
pub fn retry_after(data: &[u8]) {
    let Ok(value) = HeaderValue::from_bytes(data) else {
        return;
    };
    let mut headers = HeaderMap::new();
    headers.insert(http::header::RETRY_AFTER, value);
    let Some(delay) = crate::upstream::retry_after(&headers) else {
        return;
    };
    // The caller waits only when the wait ends before the call's deadline; a delay too
    // large for the clock must be refused there, never added and panicking.
    let now = tokio::time::Instant::now();
    let deadline = now + std::time::Duration::from_secs(120);
    let backoff = std::time::Duration::from_millis(100);
    if let Some(wait) = crate::upstream::retry_wait(Some(delay), backoff, now, deadline) {
        assert!(
            now.checked_add(wait)
                .is_some_and(|resume| resume < deadline),
            "a Retry-After delay of {delay:?} was waited past the deadline"
        );
    }
}

/// What a plain-HTTP upstream sends back, read as the answer to one request: the first byte
/// picks how many bytes each read gets (so heads and chunk lines arrive split anywhere),
/// whether the request was `HEAD` and the size cap; the rest is the upstream's bytes. Any
/// answer read is final, within its cap, and kept for another request only when whole.
pub fn wire(data: &[u8]) {
    use crate::client::Request;
    use crate::client::wire::Connection;
    let [pick, rest @ ..] = data else {
        return;
    };
    let piece = if pick & 0x20 != 0 {
        4096
    } else {
        usize::from(pick & 0x1f) + 1
    };
    let method = if pick & 0x40 != 0 {
        http::Method::HEAD
    } else {
        http::Method::GET
    };
    let limit = if pick & 0x80 != 0 { 16 } else { 1 << 16 };
    let stream = tokio::io::join(Pieces { data: rest, piece }, tokio::io::sink());
    let mut connection = Connection::over(stream, "upstream.test");
    let request = Request {
        method: method.clone(),
        uri: http::Uri::from_static("http://upstream.test/items"),
        headers: HeaderMap::new(),
        body: None,
        idempotent: true,
    };
    let outcome = block_on(connection.exchange(&request, "upstream.test", limit));
    if let Ok(answer) = outcome {
        assert!(!answer.status.is_informational(), "{answer:?}");
        assert!(answer.body.len() <= limit, "{answer:?}");
        assert!(
            !answer.truncated || answer.body.len() == limit,
            "{answer:?}"
        );
        assert!(!(answer.truncated && answer.reusable), "{answer:?}");
        assert!(
            method != http::Method::HEAD || answer.body.is_empty(),
            "{answer:?}"
        );
    }
}

/// Bytes read at most `piece` at a time, then the end.
struct Pieces<'a> {
    data: &'a [u8],
    piece: usize,
}

impl tokio::io::AsyncRead for Pieces<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let size = self.piece.min(self.data.len()).min(buf.remaining());
        let (now, later) = self.data.split_at(size);
        buf.put_slice(now);
        self.data = later;
        Poll::Ready(Ok(()))
    }
}

/// Each `{name}` of `template` (a segment of its own in every template of [`DOCUMENT`]) was
/// expanded into exactly one segment that no URL parser reads as a dot-segment, and the
/// literal segments are unchanged.
fn check_segments(template: &str, path: &str) {
    let expected: Vec<&str> = template.split('/').collect();
    let built: Vec<&str> = path.split('/').collect();
    assert_eq!(
        expected.len(),
        built.len(),
        "a path value left its segment: {path:?} for {template:?}"
    );
    for (expected, built) in expected.iter().zip(&built) {
        if expected.starts_with('{') {
            let dots = built.to_ascii_lowercase().replace("%2e", ".");
            assert!(
                !built.is_empty() && dots != "." && dots != "..",
                "a path value is a dot-segment or empty: {path:?}"
            );
            assert!(
                !built.contains(['?', '#', '\\']),
                "a path value carries a delimiter: {path:?}"
            );
        } else {
            assert_eq!(expected, built, "a literal segment changed: {path:?}");
        }
    }
}

/// Every string in `value` (keys too), and what decoding it gives (JSON text, base64
/// blobs, percent-encoding), is free of [`SECRET`].
fn check_secret_absent(value: &Value, depth: usize) {
    match value {
        Value::String(text) => check_text_secret_absent(text, depth),
        Value::Array(items) => items
            .iter()
            .for_each(|item| check_secret_absent(item, depth)),
        Value::Object(map) => {
            for (key, item) in map {
                check_text_secret_absent(key, depth);
                if matches!(key.as_str(), "blob" | "data")
                    && let Some(encoded) = item.as_str()
                    && let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(encoded)
                {
                    check_text_secret_absent(&String::from_utf8_lossy(&bytes), depth);
                }
                check_secret_absent(item, depth);
            }
        }
        _ => {}
    }
}

fn check_text_secret_absent(text: &str, depth: usize) {
    let escaped = SECRET.replace('/', "\\/");
    assert!(!text.contains(SECRET), "the secret is served: {text:?}");
    assert!(
        !text.contains(&escaped),
        "the secret is served JSON-escaped: {text:?}"
    );
    let decoded = percent_encoding::percent_decode_str(text).decode_utf8_lossy();
    assert!(
        !decoded.contains(SECRET),
        "the secret is served percent-encoded: {text:?}"
    );
    // A value percent-encoded twice (`%252F`) is read back by a client that decodes twice.
    let twice = percent_encoding::percent_decode_str(&decoded).decode_utf8_lossy();
    assert!(
        !twice.contains(SECRET),
        "the secret is served percent-encoded twice: {text:?}"
    );
    // A text block holding the body as received is JSON a client parses; so is a
    // resource's text. Bounded: a string inside a string inside a string is enough.
    if depth < 3
        && text.trim_start().starts_with(['{', '[', '"'])
        && let Ok(inner) = serde_json::from_str::<Value>(text)
    {
        check_secret_absent(&inner, depth + 1);
    }
}

fn fixed_upstream() -> &'static Upstream {
    static UPSTREAM: OnceLock<Upstream> = OnceLock::new();
    UPSTREAM.get_or_init(|| {
        Upstream::with_env(fixed_catalog(), |_| None).expect("the fuzzing upstream is valid")
    })
}

fn argument_names(tool: &Tool) -> Vec<String> {
    tool.input_schema
        .to_value()
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(Map::keys)
        .cloned()
        .collect()
}

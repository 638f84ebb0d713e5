//! ferry as an HTTP client: every exchange with a server ferry calls (the upstream API, the
//! token endpoint it obtains its own credential from, the authorization server's keys and
//! introspection) is one [`Request`], answered by one [`Response`] or failed with one
//! [`Failure`], plain HTTP or HTTPS alike.
//!
//! [`wire`] speaks HTTP/1.1 on one connection, [`tls`] makes the TLS sessions HTTPS runs in
//! (the platform's trust store, ALPN `http/1.1`), and [`pool`] keeps connections between
//! exchanges: a call writes its request and reads the answer in its own task, on a
//! connection only the thread that last used it takes again. A leaf: it knows nothing of
//! tools, credentials or retries, which are its callers'.

use bytes::Bytes;
use http::header::HeaderMap;
use http::{Method, StatusCode, Uri};

pub mod pool;
pub mod tls;
pub(crate) mod wire;

pub use pool::Pool;
pub use tls::{Tls, TlsError};

/// The `User-Agent` of every request that names none.
pub const USER_AGENT: &str = concat!("ferry/", env!("CARGO_PKG_VERSION"));

/// One request, ready to send; cheap to clone (the body is shared).
#[derive(Debug, Clone)]
pub struct Request {
    pub method: Method,
    /// Absolute: `http` or `https`, the host, the path and query.
    pub uri: Uri,
    pub headers: HeaderMap,
    pub body: Option<Bytes>,
    /// Sending it twice does no more than sending it once (RFC 9110 §9.2.2): when a kept
    /// connection closes on it before any answer came, it goes once more on a fresh one. The
    /// caller decides, as only it knows which registry of methods it holds to.
    pub idempotent: bool,
}

impl Request {
    /// A request to `url` (its fragment left out, as clients do), without headers or body;
    /// idempotent when `method` is GET or HEAD.
    pub fn to(method: Method, url: &url::Url) -> Result<Request, Failure> {
        let target = &url[..url::Position::AfterQuery];
        let uri = Uri::try_from(target).map_err(|_| Failure::Connect {
            timeout: false,
            detail: format!("{target} is not a request target"),
        })?;
        Ok(Request {
            idempotent: matches!(method, Method::GET | Method::HEAD),
            method,
            uri,
            headers: HeaderMap::new(),
            body: None,
        })
    }
}

/// What came back: a status, headers and the body, read whole or cut at the size cap (empty
/// when it went to a [`Sink`]).
#[derive(Debug, Clone)]
pub struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    /// The body went on past the size cap; the rest was not read.
    pub truncated: bool,
}

/// Where a body goes as it comes, for an answer read item by item (a stream of events or
/// of JSON lines) rather than whole.
pub trait Sink {
    /// An answer's head came: `true` to have its body handed to [`Sink::body`] as it comes
    /// (and not kept in the [`Response`]), `false` to read it whole as any other.
    fn head(&mut self, status: StatusCode, headers: &HeaderMap) -> bool;
    /// The next bytes of the body, in order, never past the size cap.
    fn body(&mut self, bytes: &[u8]);
}

/// Why an exchange got no whole answer.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// No connection could be made: not resolved, refused, or the TLS handshake failed
    /// (a certificate not trusted included). `timeout` when the connect timeout ran out.
    #[error("{}: {detail}", if *.timeout { "connecting timed out" } else { "cannot connect" })]
    Connect { timeout: bool, detail: String },
    /// The request could not be sent, or the connection failed before a whole response head
    /// came. `timeout` when a time limit ran out.
    #[error("{}: {detail}", if *.timeout { "no answer in time" } else { "the connection closed without an answer" })]
    Closed { timeout: bool, detail: String },
    /// The server answered, with something that is not a response head ferry reads.
    #[error("{}: {}", match .0 { Malformed::TooLarge => "response head too large", Malformed::Invalid => "not an HTTP response" }, .1)]
    Head(Malformed, &'static str),
    /// A head came, then the body failed. (The headers are boxed: a failure is carried in
    /// errors, and they are rarely this one.)
    #[error("the response body could not be read: {detail}")]
    Body {
        status: StatusCode,
        headers: Box<HeaderMap>,
        detail: String,
    },
}

/// How a server's answer failed to be an HTTP response head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// Over the client's limits: too many header lines, or too long ones.
    TooLarge,
    /// Not HTTP: a bad status line, version or header.
    Invalid,
}

impl Failure {
    /// Whether the request may be sent again: refused, reset or closed before any answer,
    /// without running out of time (a method safe to repeat is the caller's to judge).
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            Failure::Connect { timeout: false, .. } | Failure::Closed { timeout: false, .. }
        )
    }

    /// What went wrong, for the log.
    pub fn detail(&self) -> &str {
        match self {
            Failure::Connect { detail, .. }
            | Failure::Closed { detail, .. }
            | Failure::Body { detail, .. } => detail,
            Failure::Head(_, detail) => detail,
        }
    }
}

//! The connections one tool call goes out on. Plain HTTP goes through hyper's pooled client
//! directly: it is the call path's largest cost after the kernel's, and a general-purpose
//! client adds layers (redirects, retries, proxies, URL parsing twice) that ferry does not
//! use. HTTPS goes through reqwest, which brings the platform's trust store.

use std::time::Duration;

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use super::UpstreamError;

/// How long an unused pooled connection is kept.
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// Unused connections kept per host.
const MAX_IDLE: usize = 64;
const USER_AGENT: &str = concat!("ferry/", env!("CARGO_PKG_VERSION"));

/// One request to the upstream, ready to send; cheap to clone (the body is shared).
#[derive(Debug, Clone)]
pub(super) struct Outgoing {
    pub method: Method,
    pub uri: Uri,
    pub headers: HeaderMap,
    pub body: Option<Bytes>,
}

/// The pooled connections of one connect timeout.
#[derive(Debug, Clone)]
pub(super) enum Pool {
    /// Boxed: the client is large, and a pool is only moved when it is made.
    Plain(Box<Client<HttpConnector, Full<Bytes>>>),
    Tls(reqwest::Client),
}

/// What one attempt produced.
pub(super) enum Attempt {
    Answer(super::response::Observed),
    /// No response: the request could not be sent or no answer came.
    Send(Failure),
    /// A status and headers, then the body failed.
    Body(StatusCode, HeaderMap, Failure),
}

/// How an upstream's answer failed to be an HTTP response head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Malformed {
    /// Over the client's limits: too many header lines, or too long ones.
    TooLarge,
    /// Not HTTP: a bad status line, version or header.
    Invalid,
}

/// Why an attempt failed, as far as retrying and the message to the model need to know.
#[derive(Debug)]
pub(super) struct Failure {
    /// No connection could be made.
    pub connect: bool,
    /// A time limit ran out (connecting, with `connect`).
    pub timeout: bool,
    /// Refused, reset or closed before an answer, without running out of time: a method
    /// that is safe to repeat may be tried again.
    pub connection: bool,
    /// The upstream answered, with something that could not be read as a response head.
    pub malformed: Option<Malformed>,
    /// The error and its causes, for the log.
    pub detail: String,
}

impl Pool {
    /// A pool for `scheme` (`http` or `https`) whose connections must open within
    /// `connect_timeout_ms`.
    pub fn new(scheme: &str, connect_timeout_ms: u64) -> Result<Pool, UpstreamError> {
        let connect_timeout = Duration::from_millis(connect_timeout_ms);
        if scheme == "https" {
            return http_client(connect_timeout_ms).map(Pool::Tls);
        }
        let mut connector = HttpConnector::new();
        connector.set_connect_timeout(Some(connect_timeout));
        connector.set_nodelay(true);
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(IDLE_TIMEOUT)
            .pool_max_idle_per_host(MAX_IDLE)
            .build(connector);
        Ok(Pool::Plain(Box::new(client)))
    }

    /// Sends `request` and reads at most `max_bytes` of the answer's body.
    pub async fn send(&self, request: Outgoing, max_bytes: u64) -> Attempt {
        let limit = usize::try_from(max_bytes).unwrap_or(usize::MAX);
        match self {
            Pool::Plain(client) => send_plain(client, request, limit).await,
            Pool::Tls(client) => send_tls(client, request, limit).await,
        }
    }
}

/// The reqwest client for HTTPS upstreams and for the token endpoints ferry obtains its own
/// credentials from.
pub(super) fn http_client(connect_timeout_ms: u64) -> Result<reqwest::Client, UpstreamError> {
    reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_millis(connect_timeout_ms))
        .pool_idle_timeout(IDLE_TIMEOUT)
        .pool_max_idle_per_host(MAX_IDLE)
        .tcp_nodelay(true)
        .referer(false)
        .build()
        .map_err(UpstreamError::Client)
}

async fn send_plain(
    client: &Client<HttpConnector, Full<Bytes>>,
    request: Outgoing,
    limit: usize,
) -> Attempt {
    let mut outgoing = http::Request::new(Full::new(request.body.unwrap_or_default()));
    *outgoing.method_mut() = request.method;
    *outgoing.uri_mut() = request.uri;
    *outgoing.headers_mut() = request.headers;
    // What reqwest sends by default, so both schemes look alike to the upstream.
    let headers = outgoing.headers_mut();
    if !headers.contains_key(header::USER_AGENT) {
        headers.insert(header::USER_AGENT, HeaderValue::from_static(USER_AGENT));
    }
    if !headers.contains_key(header::ACCEPT) {
        headers.insert(header::ACCEPT, HeaderValue::from_static("*/*"));
    }
    let response = match client.request(outgoing).await {
        Ok(response) => response,
        Err(error) => {
            let timeout = timed_out(&error);
            let malformed = malformed(&error);
            return Attempt::Send(Failure {
                connect: error.is_connect(),
                timeout,
                connection: !timeout && malformed.is_none(),
                malformed,
                detail: super::chain(&error),
            });
        }
    };
    let (parts, mut body) = response.into_parts();
    let expected = http_body::Body::size_hint(&body).exact().unwrap_or(0);
    let mut collected = Vec::with_capacity(
        usize::try_from(expected)
            .unwrap_or(0)
            .min(limit)
            .min(1 << 20),
    );
    let mut truncated = false;
    while let Some(frame) = body.frame().await {
        let frame = match frame {
            Ok(frame) => frame,
            Err(error) => {
                let failure = Failure {
                    connect: false,
                    timeout: timed_out(&error),
                    connection: false,
                    malformed: None,
                    detail: super::chain(&error),
                };
                return Attempt::Body(parts.status, parts.headers, failure);
            }
        };
        let Ok(chunk) = frame.into_data() else {
            continue;
        };
        if append(&mut collected, &chunk, limit) {
            truncated = true;
            // Dropping the body closes the connection: the rest is not read.
            break;
        }
    }
    Attempt::Answer(super::response::Observed {
        status: parts.status,
        headers: parts.headers,
        body: collected,
        truncated,
    })
}

async fn send_tls(client: &reqwest::Client, request: Outgoing, limit: usize) -> Attempt {
    let failure = |error: reqwest::Error| {
        let error = error.without_url();
        let malformed = malformed(&error);
        Failure {
            connect: error.is_connect(),
            timeout: error.is_timeout(),
            connection: (error.is_connect() || error.is_request())
                && !error.is_timeout()
                && malformed.is_none(),
            malformed,
            detail: super::chain(&error),
        }
    };
    let url = match reqwest::Url::parse(&request.uri.to_string()) {
        Ok(url) => url,
        Err(error) => {
            return Attempt::Send(Failure {
                connect: false,
                timeout: false,
                connection: false,
                malformed: None,
                detail: error.to_string(),
            });
        }
    };
    let mut outgoing = reqwest::Request::new(request.method, url);
    *outgoing.headers_mut() = request.headers;
    if let Some(body) = request.body {
        *outgoing.body_mut() = Some(body.into());
    }
    let mut response = match client.execute(outgoing).await {
        Ok(response) => response,
        Err(error) => return Attempt::Send(failure(error)),
    };
    let status = response.status();
    let headers = std::mem::take(response.headers_mut());
    let expected = response
        .content_length()
        .and_then(|length| usize::try_from(length).ok())
        .unwrap_or(0);
    let mut body = Vec::with_capacity(expected.min(limit).min(1 << 20));
    let mut truncated = false;
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if append(&mut body, &chunk, limit) {
                    truncated = true;
                    break;
                }
            }
            Ok(None) => break,
            Err(error) => return Attempt::Body(status, headers, failure(error)),
        }
    }
    Attempt::Answer(super::response::Observed {
        status,
        headers,
        body,
        truncated,
    })
}

/// Appends `chunk` to `body` up to `limit` bytes in all; true when it did not fit whole.
fn append(body: &mut Vec<u8>, chunk: &[u8], limit: usize) -> bool {
    let room = limit - body.len();
    if chunk.len() > room {
        body.extend_from_slice(&chunk[..room]);
        return true;
    }
    body.extend_from_slice(chunk);
    false
}

/// Whether `error`'s causes say the upstream's answer was no readable response head: the
/// upstream did answer, so the request is not sent again.
fn malformed(error: &(dyn std::error::Error + 'static)) -> Option<Malformed> {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if let Some(hyper) = error.downcast_ref::<hyper::Error>()
            && hyper.is_parse()
        {
            return Some(if hyper.is_parse_too_large() {
                Malformed::TooLarge
            } else {
                Malformed::Invalid
            });
        }
        cause = error.source();
    }
    None
}

/// Whether a time limit ran out somewhere in `error`'s causes.
fn timed_out(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if let Some(io) = error.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::TimedOut
        {
            return true;
        }
        cause = error.source();
    }
    false
}

//! The connections one tool call goes out on. Plain HTTP goes over connections ferry keeps
//! itself ([`super::wire`] speaks HTTP/1.1 on them): a call writes its request and reads the
//! answer in its own task, which a general-purpose client's connection task and pool cost
//! several microseconds more. HTTPS goes through reqwest, which brings the platform's trust
//! store.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::HeaderMap;
use http::{Method, StatusCode, Uri};

use super::UpstreamError;
use super::wire::{self, Connection};

/// How long an unused pooled connection is kept.
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// How often kept connections are looked over, closing the expired ones and those the
/// upstream closed, so that none lingers half-closed while no call comes.
const SWEEP_EVERY: Duration = Duration::from_secs(15);
/// Unused connections kept per pool.
const MAX_IDLE: usize = 64;
pub(super) const USER_AGENT: &str = concat!("ferry/", env!("CARGO_PKG_VERSION"));

/// One request to the upstream, ready to send; cheap to clone (the body is shared).
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    pub method: Method,
    pub uri: Uri,
    pub headers: HeaderMap,
    pub body: Option<Bytes>,
}

/// The pooled connections of one connect timeout.
#[derive(Debug, Clone)]
pub(super) enum Pool {
    Plain(Arc<Plain>),
    Tls(reqwest::Client),
}

/// Plain-HTTP connections kept between calls, oldest first. Each is taken again only on the
/// thread that last used it: on ferry's serving threads, each running its own
/// single-threaded runtime, that is the thread whose runtime its socket is registered with.
#[derive(Debug)]
pub(super) struct Plain {
    connect_timeout: Duration,
    idle: Mutex<VecDeque<Idle>>,
    /// A task looks over the kept connections while there are any.
    sweeping: AtomicBool,
    sweep_every: Duration,
}

#[derive(Debug)]
struct Idle {
    connection: Connection,
    /// The thread that put it back.
    thread: ThreadId,
    since: Instant,
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
pub(crate) enum Malformed {
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
        Ok(Pool::Plain(Arc::new(Plain::new(
            connect_timeout,
            SWEEP_EVERY,
        ))))
    }

    /// Sends `request` and reads at most `max_bytes` of the answer's body.
    pub async fn send(&self, request: &Outgoing, max_bytes: u64) -> Attempt {
        let limit = usize::try_from(max_bytes).unwrap_or(usize::MAX);
        match self {
            Pool::Plain(plain) => plain.send(request, limit).await,
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

impl Plain {
    pub(super) fn new(connect_timeout: Duration, sweep_every: Duration) -> Plain {
        Plain {
            connect_timeout,
            idle: Mutex::new(VecDeque::new()),
            sweeping: AtomicBool::new(false),
            sweep_every,
        }
    }

    /// How many connections are kept.
    #[cfg(test)]
    pub(super) fn kept(&self) -> usize {
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    pub(super) async fn send(self: &Arc<Plain>, request: &Outgoing, limit: usize) -> Attempt {
        let Some(origin) = origin(&request.uri) else {
            return Attempt::Send(Failure {
                connect: true,
                timeout: false,
                connection: false,
                malformed: None,
                detail: "the request names no host".to_owned(),
            });
        };
        // The `Host` header leaves out the default port, as other clients do.
        let host = origin.strip_suffix(":80").unwrap_or(origin);
        let idle = self.checkout(origin);
        let reused = idle.is_some();
        let mut connection = match idle {
            Some(connection) => connection,
            None => match self.open(&request.uri, origin).await {
                Ok(connection) => connection,
                Err(failure) => return Attempt::Send(failure),
            },
        };
        let mut outcome = connection.exchange(request, host, limit).await;
        if reused
            && matches!(outcome, Err(wire::Error::Closed { nothing: true, .. }))
            && super::idempotent(&request.method)
        {
            // The upstream closed the idle connection as the request went out on it, or
            // before: no answer came, and the method allows sending it again, so it goes once
            // more on a fresh connection, as hyper's client did. This is not one of the
            // call's retries, which a connection that was never kept gets only if allowed.
            connection = match self.open(&request.uri, origin).await {
                Ok(connection) => connection,
                Err(failure) => return Attempt::Send(failure),
            };
            outcome = connection.exchange(request, host, limit).await;
        }
        match outcome {
            Ok(answer) => {
                if answer.reusable {
                    self.put_back(connection);
                }
                Attempt::Answer(super::response::Observed {
                    status: answer.status,
                    headers: answer.headers,
                    body: answer.body,
                    truncated: answer.truncated,
                })
            }
            Err(wire::Error::Closed { error, .. }) => {
                let timeout = error.kind() == std::io::ErrorKind::TimedOut;
                Attempt::Send(Failure {
                    connect: false,
                    timeout,
                    connection: !timeout,
                    malformed: None,
                    detail: error.to_string(),
                })
            }
            Err(wire::Error::Head(malformed, detail)) => Attempt::Send(Failure {
                connect: false,
                timeout: false,
                connection: false,
                malformed: Some(malformed),
                detail: detail.to_owned(),
            }),
            Err(wire::Error::Body {
                status,
                headers,
                detail,
            }) => Attempt::Body(
                status,
                headers,
                Failure {
                    connect: false,
                    timeout: false,
                    connection: false,
                    malformed: None,
                    detail,
                },
            ),
        }
    }

    /// A new connection to `uri`'s host (`origin`), within the connect timeout.
    async fn open(&self, uri: &Uri, origin: &str) -> Result<Connection, Failure> {
        let host = uri.host().unwrap_or_default();
        let port = uri.port_u16().unwrap_or(80);
        Connection::open(host, port, origin, self.connect_timeout)
            .await
            .map_err(|error| {
                let timeout = error.kind() == std::io::ErrorKind::TimedOut;
                Failure {
                    connect: true,
                    timeout,
                    connection: !timeout,
                    malformed: None,
                    detail: format!("connecting to {host}:{port}: {error}"),
                }
            })
    }

    /// The newest connection to `origin` this thread kept that is still open; expired and
    /// closed ones met on the way are closed.
    fn checkout(&self, origin: &str) -> Option<Connection> {
        let thread = thread::current().id();
        let now = Instant::now();
        let mut closed = Vec::new();
        let found = loop {
            let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
            while idle
                .front()
                .is_some_and(|entry| now.duration_since(entry.since) >= IDLE_TIMEOUT)
            {
                closed.extend(idle.pop_front());
            }
            let Some(position) = idle
                .iter()
                .rposition(|entry| entry.thread == thread && entry.connection.origin() == origin)
            else {
                break None;
            };
            let entry = idle.remove(position);
            drop(idle);
            match entry {
                Some(entry) if entry.connection.is_open() => break Some(entry.connection),
                entry => closed.extend(entry),
            }
        };
        // Closed outside the lock.
        drop(closed);
        found
    }

    /// Keeps `connection` for a later call, closing the oldest beyond [`MAX_IDLE`], and
    /// starts the sweep if none runs.
    fn put_back(self: &Arc<Plain>, mut connection: Connection) {
        connection.rest();
        let entry = Idle {
            connection,
            thread: thread::current().id(),
            since: Instant::now(),
        };
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        let dropped = if idle.len() >= MAX_IDLE {
            idle.pop_front()
        } else {
            None
        };
        idle.push_back(entry);
        drop(idle);
        drop(dropped);
        // After the push, so that a sweep that found the pool empty and stopped is
        // followed by a new one.
        if !self.sweeping.swap(true, Ordering::AcqRel) {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(sweep(Arc::downgrade(self), self.sweep_every));
                }
                Err(_) => self.sweeping.store(false, Ordering::Release),
            }
        }
    }
}

/// Every `every` (the pool's `sweep_every`) while the pool lives and keeps connections, closes those
/// expired or closed by the upstream.
async fn sweep(plain: Weak<Plain>, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        let Some(plain) = plain.upgrade() else {
            return;
        };
        let now = Instant::now();
        let mut idle = plain.idle.lock().unwrap_or_else(PoisonError::into_inner);
        let (kept, closed): (VecDeque<Idle>, VecDeque<Idle>) = idle.drain(..).partition(|entry| {
            now.duration_since(entry.since) < IDLE_TIMEOUT && entry.connection.is_open()
        });
        *idle = kept;
        let empty = idle.is_empty();
        if empty {
            plain.sweeping.store(false, Ordering::Release);
        }
        drop(idle);
        drop(closed);
        if empty {
            return;
        }
    }
}

/// `host:port` of an absolute `uri`, without any user information.
fn origin(uri: &Uri) -> Option<&str> {
    let authority = uri.authority()?.as_str();
    let origin = authority
        .rsplit_once('@')
        .map_or(authority, |(_, rest)| rest);
    (!origin.is_empty()).then_some(origin)
}

async fn send_tls(client: &reqwest::Client, request: &Outgoing, limit: usize) -> Attempt {
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
    let mut outgoing = reqwest::Request::new(request.method.clone(), url);
    *outgoing.headers_mut() = request.headers.clone();
    if let Some(body) = &request.body {
        *outgoing.body_mut() = Some(body.clone().into());
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
    let mut body = body_for(expected, limit);
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

/// Room for a body of `expected` bytes kept to `limit`: never more than a mebibyte ahead of
/// what came, whatever a length says.
pub(super) fn body_for(expected: usize, limit: usize) -> Vec<u8> {
    Vec::with_capacity(expected.min(limit).min(1 << 20))
}

/// Appends `chunk` to `body` up to `limit` bytes in all; true when it did not fit whole.
pub(super) fn append(body: &mut Vec<u8>, chunk: &[u8], limit: usize) -> bool {
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

#[cfg(test)]
mod tests;

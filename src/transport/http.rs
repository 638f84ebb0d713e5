//! Streamable HTTP: a `POST` to each MCP endpoint's path ([`Routes`]; `/mcp` without
//! `endpoints:`), answered with plain `application/json` (or an SSE stream for
//! `subscriptions/listen`, which sends `notifications/tools/list_changed` each time a reload
//! changes the tool list). Other methods on an endpoint's path get 405: ferry keeps no
//! sessions and has nothing else to push.
//!
//! The token is checked before the body is read, by the current server's `Authenticator`,
//! which also answers the protected resource metadata's well-known paths. `Endpoint` answers
//! a `POST` to an endpoint itself and hands every other request to an axum router (the
//! metadata, 405, 404): axum's matching, extractors and response mapping were about 4% of a
//! call's instructions. The handler boxes `Server::handle`'s future: inline, the whole call
//! (upstream client included) would be copied each time it is moved.
//!
//! Before a message reaches the dispatcher, `Host` is checked against an allowlist (DNS
//! rebinding) and `Origin`, when present, against another; both failures are 403.
//!
//! The connections themselves, their deadlines and their bound, are `transport::connection`'s
//! ([`serve`]).

use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, Version, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

use crate::mcp::{self, Incoming, Kind, Serving};

pub use super::connection::serve;
use crate::observe::{Observer, Reason};

/// The path of the MCP endpoint when the curation lists no `endpoints:`.
pub const ENDPOINT: &str = "/mcp";

/// What the HTTP transport serves: each MCP endpoint's path and what serves it. One server
/// converts into the one endpoint at [`ENDPOINT`].
#[derive(Clone)]
pub struct Routes(Arc<[(String, Serving)]>);

impl Routes {
    /// Serves each `(path, serving)`; a path given twice is served by the first.
    pub fn new(routes: Vec<(String, Serving)>) -> Routes {
        Routes(routes.into())
    }

    /// The index of the endpoint at `path`.
    fn find(&self, path: &str) -> Option<usize> {
        self.0.iter().position(|(known, _)| known == path)
    }

    fn serving(&self, index: usize) -> &Serving {
        &self.0[index].1
    }
}

impl From<Serving> for Routes {
    fn from(serving: Serving) -> Routes {
        Routes::new(vec![(ENDPOINT.to_string(), serving)])
    }
}

impl From<mcp::Server> for Routes {
    fn from(server: mcp::Server) -> Routes {
        Routes::from(Serving::from(server))
    }
}

impl From<Arc<mcp::Server>> for Routes {
    fn from(server: Arc<mcp::Server>) -> Routes {
        Routes::from(Serving::from(server))
    }
}

/// How the HTTP transport guards and bounds requests.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Host names accepted in `Host` besides `localhost`, `127.0.0.1`, `[::1]` and the
    /// listen address: the names a proxy in front of ferry forwards.
    pub allowed_hosts: Vec<String>,
    /// Origins accepted besides loopback ones, written as `scheme://host[:port]`.
    pub allowed_origins: Vec<String>,
    /// Largest request body, in bytes; larger ones get 413.
    pub body_limit: usize,
    /// Longest time one request may take, upstream call included; also longest a write to a
    /// connection may make no progress (a client that does not read its answers) before the
    /// connection is dropped.
    pub request_timeout: Duration,
    /// How often a silent SSE answer (an open `subscriptions/listen`, a call telling its
    /// progress) gets a keep-alive comment.
    pub keep_alive: Duration,
    /// Longest time a client may take to send a request's head (request line and headers),
    /// from when ferry starts waiting for it, and longest a connection (HTTP/1 or HTTP/2) may
    /// have no request in flight: an idle one is closed within twice this. Also the HTTP/2
    /// ping interval and the time its answer may take.
    pub header_timeout: Duration,
    /// Once shutting down, longest time requests in flight may take to finish; connections
    /// still open then are dropped.
    pub shutdown_timeout: Duration,
    /// How many connections are served at once.
    pub connection_limit: ConnectionLimit,
    /// Where requests refused here (host, origin, body limit, authentication) are recorded.
    pub observer: Option<Observer>,
}

/// A bound on the connections served at once, shared by every [`serve`] given the same
/// options (or clones of them), as the workers of one `ferry serve` are.
///
/// A connection over the bound waits to be accepted (in a worker's hand-over queue, at most
/// `spread::QUEUED` each, then in the kernel's backlog) rather than being accepted and
/// closed: a burst is served late instead of failing, and a served connection frees its place
/// in bounded time (it is closed once it has had no request in flight for the header timeout,
/// a request ends by the request timeout). One kind lasts as long as its client wants: an open
/// `subscriptions/listen` stream is a request in flight, so its connection keeps its place.
#[derive(Debug, Clone)]
pub struct ConnectionLimit(Arc<Semaphore>);

impl ConnectionLimit {
    /// The default bound: half of the usual 1024 open files a process may have, leaving the
    /// rest to upstream sockets.
    pub const DEFAULT: usize = 512;

    /// At most `connections` at once (at least one).
    pub fn new(connections: usize) -> ConnectionLimit {
        ConnectionLimit(Arc::new(Semaphore::new(
            connections.clamp(1, Semaphore::MAX_PERMITS),
        )))
    }

    pub(super) async fn admit(&self) -> OwnedSemaphorePermit {
        // The semaphore is never closed.
        match Arc::clone(&self.0).acquire_owned().await {
            Ok(permit) => permit,
            Err(_) => std::future::pending().await,
        }
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            body_limit: 4 * 1024 * 1024,
            request_timeout: Duration::from_secs(120),
            keep_alive: Duration::from_secs(15),
            header_timeout: Duration::from_secs(30),
            shutdown_timeout: Duration::from_secs(30),
            connection_limit: ConnectionLimit::new(ConnectionLimit::DEFAULT),
            observer: None,
        }
    }
}

/// What the HTTP transport answers: a `POST` to each endpoint's path, and the protected
/// resource metadata of the current server's authenticator.
///
/// A `POST` to an endpoint, every call, is answered by [`post_mcp`] directly; only the rest (the metadata,
/// 405, 404) goes through axum's router, whose matching, extractors and response mapping
/// would otherwise be about 4% of a call's instructions.
#[derive(Clone)]
pub(super) struct Endpoint {
    state: Arc<HttpState>,
    router: Router,
}

/// An answer being written: the endpoint's own, or the router's (boxed: axum's future is
/// twenty times as large, and only the rare requests take it).
pub(super) enum Answer {
    /// `http2`: the request came over HTTP/2, where the answer's length must be said.
    Mcp {
        answer: Pin<Box<dyn Future<Output = Response> + Send>>,
        http2: bool,
    },
    Routed(Box<axum::routing::future::RouteFuture<Infallible>>),
}

impl Future for Answer {
    type Output = Response;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Response> {
        match self.get_mut() {
            Answer::Mcp { answer, http2 } => {
                let mut response = ready!(answer.as_mut().poll(context));
                if *http2 {
                    set_content_length(&mut response);
                }
                Poll::Ready(response)
            }
            Answer::Routed(route) => {
                let Ok(response) = ready!(Pin::new(&mut **route).poll(context));
                Poll::Ready(response)
            }
        }
    }
}

impl Endpoint {
    /// `local` is the address the endpoint is reached at, allowed as a host. `shutdown`
    /// turning `true` ends subscription streams.
    pub(super) fn new(
        routes: impl Into<Routes>,
        local: SocketAddr,
        options: &HttpOptions,
        shutdown: watch::Receiver<bool>,
    ) -> Endpoint {
        let state = state(routes.into(), local, options, shutdown);
        let root = crate::auth::METADATA_ROOT_PATH;
        let mut router = Router::new();
        for (path, _) in state.routes.0.iter() {
            router = router.route(path, any(method_not_allowed));
        }
        let router = router
            .route(root, get(metadata))
            .route(&format!("{root}/{{*resource}}"), get(metadata))
            .with_state(Arc::clone(&state));
        Endpoint { state, router }
    }

    pub(super) fn answer(&self, request: hyper::Request<hyper::body::Incoming>) -> Answer {
        let route = (request.method() == Method::POST)
            .then(|| self.state.routes.find(request.uri().path()))
            .flatten();
        if let Some(route) = route {
            Answer::Mcp {
                http2: request.version() == Version::HTTP_2,
                answer: crate::boxed::future(|| post_mcp(Arc::clone(&self.state), route, request)),
            }
        } else {
            // The router is always ready; a clone is a reference count, as `axum::serve` takes.
            Answer::Routed(Box::new(tower_service::Service::call(
                &mut self.router.clone(),
                request,
            )))
        }
    }
}

/// Says a body's length when it is known and not said, as axum's router does for what it
/// answers. Only HTTP/2 needs it: hyper writes the length of every HTTP/1 answer itself, from
/// the body's size, but leaves it out of an empty HTTP/2 one (a header here would cost an
/// HTTP/1 call about 500 instructions).
fn set_content_length(response: &mut Response) {
    if response.headers().contains_key(header::CONTENT_LENGTH) {
        return;
    }
    if let Some(length) = http_body::Body::size_hint(response.body()).exact() {
        response
            .headers_mut()
            .insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    }
}

fn state(
    routes: Routes,
    local: SocketAddr,
    options: &HttpOptions,
    shutdown: watch::Receiver<bool>,
) -> Arc<HttpState> {
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()];
    hosts.push(host_name_of(local.ip()));
    hosts.extend(
        options
            .allowed_hosts
            .iter()
            .map(|host| host.to_ascii_lowercase()),
    );
    Arc::new(HttpState {
        routes,
        hosts,
        origins: options
            .allowed_origins
            .iter()
            .map(|origin| origin.trim_end_matches('/').to_ascii_lowercase())
            .collect(),
        body_limit: options.body_limit,
        request_timeout: options.request_timeout,
        keep_alive: options.keep_alive,
        shutdown,
        observer: options.observer.clone(),
    })
}

struct HttpState {
    routes: Routes,
    /// Lowercase host names, without ports.
    hosts: Vec<String>,
    /// Lowercase origins, without a trailing slash.
    origins: Vec<String>,
    body_limit: usize,
    request_timeout: Duration,
    keep_alive: Duration,
    shutdown: watch::Receiver<bool>,
    observer: Option<Observer>,
}

impl HttpState {
    fn refused(&self, reason: Reason) {
        if let Some(observer) = &self.observer {
            observer.refused(reason, None, 0, 0);
        }
    }
}

// Made out of line, to be written straight into its box (`crate::boxed`).
#[inline(never)]
async fn post_mcp(
    state: Arc<HttpState>,
    route: usize,
    request: hyper::Request<hyper::body::Incoming>,
) -> Response {
    // Taken apart rather than extracted piecemeal: the headers are borrowed, not copied, and
    // a refused request's body is never read.
    let (parts, body) = request.into_parts();
    if let Err(refusal) = check_host(&state, &parts.uri, &parts.headers) {
        state.refused(Reason::Host);
        return refusal.into_response();
    }
    if let Err(refusal) = check_origin(&state, &parts.headers) {
        state.refused(Reason::Origin);
        return refusal.into_response();
    }
    // A declared length over the limit is refused at once, not after waiting for the body.
    if let Some(length) = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|length| length.to_str().ok()?.parse::<u64>().ok())
        && length > state.body_limit as u64
    {
        tracing::warn!(length, limit = state.body_limit, "request body refused");
        state.refused(Reason::BodyLimit);
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    }
    // The whole request is answered by the server current now, even if a reload swaps it
    // meanwhile: the token is checked by the same authenticator that decides the scopes.
    let serving = state.routes.serving(route);
    let server = serving.load();
    // Before the body is read: an unauthenticated client costs no more than its headers.
    let principal = if server.authenticator().is_enabled() {
        // Boxed, as the call is below: checking a token may fetch keys or ask the
        // authorization server, a future of kilobytes this handler's would otherwise carry.
        match crate::boxed::future(|| server.authenticator().authenticate_headers(&parts.headers))
            .await
        {
            Ok(principal) => Some(principal),
            Err(challenge) => {
                tracing::info!(
                    status = challenge.status().as_u16(),
                    "request not authenticated"
                );
                state.refused(Reason::Auth);
                return super::auth::challenge_response(&challenge);
            }
        }
    } else {
        None
    };
    // One time limit for the whole request, body and upstream call together. The body is kept
    // outside so a request that runs out of time is still answered with its id.
    let mut received = None;
    let work = async {
        let body = received.insert(read_body(body, state.body_limit).await?);
        if super::sse::wants_progress(body, &parts.headers) {
            return Ok(None);
        }
        let incoming = Incoming {
            body,
            headers: Some(&parts.headers),
            principal: principal.as_ref(),
            notify: None,
        };
        // Awaited in place, not spawned: when the client goes away hyper drops this future,
        // and with it the upstream call in flight. Boxed: the call's future is kilobytes (the
        // upstream client's among them), and inline it would make this handler's future as
        // large, copied whole each time it is moved (into the timeout, into its box; a fifth
        // of a call's instructions were such copies); boxed, it is written once, where it runs.
        Ok::<_, BodyError>(Some(crate::boxed::future(|| server.handle(incoming)).await))
    };
    let deadline = tokio::time::Instant::now() + state.request_timeout;
    let handled = tokio::time::timeout_at(deadline, work).await;
    let outgoing = match handled {
        Ok(Ok(Some(outgoing))) => outgoing,
        Ok(Ok(None)) => {
            // A call that may tell its progress: answered as JSON if it ends before it has
            // any to tell, as an SSE stream of its notifications and its answer otherwise.
            let Some(body) = received else {
                return StatusCode::REQUEST_TIMEOUT.into_response();
            };
            let call = super::sse::Call {
                server: Arc::clone(&server),
                headers: parts.headers,
                principal,
                body,
                deadline,
                keep_alive: state.keep_alive,
            };
            return match crate::boxed::future(|| call.run()).await {
                super::sse::Ran::Answered(outgoing) => answer(&state, serving, &server, outgoing),
                super::sse::Ran::Streamed(response) => response,
            };
        }
        Ok(Err(error)) => {
            tracing::warn!(%error, limit = state.body_limit, "request body refused");
            state.refused(Reason::BodyLimit);
            return StatusCode::PAYLOAD_TOO_LARGE.into_response();
        }
        Err(_) => {
            let Some(body) = &received else {
                tracing::warn!("request body not received in time");
                return StatusCode::REQUEST_TIMEOUT.into_response();
            };
            tracing::warn!(
                timeout_ms = state.request_timeout.as_millis() as u64,
                "request timed out"
            );
            let outgoing = mcp::timed_out(body);
            return json_response(outgoing.status, outgoing.body);
        }
    };
    answer(&state, serving, &server, outgoing)
}

/// The HTTP response for what the server answered.
fn answer(
    state: &HttpState,
    serving: &Serving,
    server: &Arc<mcp::Server>,
    outgoing: mcp::Outgoing,
) -> Response {
    match outgoing.kind {
        Kind::Json => json_response(outgoing.status, outgoing.body),
        Kind::Accepted { .. } => StatusCode::ACCEPTED.into_response(),
        Kind::Subscription {
            end,
            tools_list_changed,
        } => subscription(
            state,
            serving,
            server,
            outgoing.body,
            end,
            tools_list_changed,
        ),
        Kind::Refused(challenge) => {
            let mut response = json_response(outgoing.status, outgoing.body);
            super::auth::add_challenge(&mut response, &challenge);
            response
        }
    }
}

/// A request's whole body, refused once it passes `limit` bytes. A body that comes in one
/// piece, as a JSON-RPC message usually does, is kept as it came, without a copy.
async fn read_body(mut body: hyper::body::Incoming, limit: usize) -> Result<Bytes, BodyError> {
    use hyper::body::Body as _;
    let mut first = Bytes::new();
    let mut joined: Vec<u8> = Vec::new();
    let mut length = 0;
    while let Some(frame) =
        std::future::poll_fn(|context| Pin::new(&mut body).poll_frame(context)).await
    {
        // Trailers are not part of the message.
        let Ok(data) = frame.map_err(BodyError::Failed)?.into_data() else {
            continue;
        };
        length += data.len();
        if length > limit {
            return Err(BodyError::TooLarge);
        }
        if length == data.len() {
            first = data;
        } else {
            if joined.is_empty() {
                joined.reserve(length);
                joined.extend_from_slice(&first);
            }
            joined.extend_from_slice(&data);
        }
    }
    Ok(if joined.is_empty() {
        first
    } else {
        Bytes::from(joined)
    })
}

/// Why a request's body was not read whole.
#[derive(Debug)]
enum BodyError {
    TooLarge,
    Failed(hyper::Error),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::TooLarge => f.write_str("length limit exceeded"),
            BodyError::Failed(error) => error.fmt(f),
        }
    }
}

/// The RFC 9728 metadata of the endpoint whose resource `uri` names, by its authenticator
/// current now; at the root well-known path, the first endpoint's with OAuth (404 without).
async fn metadata(State(state): State<Arc<HttpState>>, uri: Uri) -> Response {
    state
        .routes
        .0
        .iter()
        .find_map(|(_, serving)| {
            super::auth::metadata_response(serving.load().authenticator(), uri.path())
        })
        .unwrap_or_else(|| StatusCode::NOT_FOUND.into_response())
}

async fn method_not_allowed() -> Response {
    let mut response = StatusCode::METHOD_NOT_ALLOWED.into_response();
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    response
}

fn json_response(status: StatusCode, body: Bytes) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Every authority the request names, its `Host` and the target's (an absolute-form target, or
/// the HTTP/2 `:authority`), must name this server: a foreign name means a page on another site
/// resolved its name to this machine (DNS rebinding). The target's authority is the one HTTP
/// itself uses (RFC 9112 §3.2.2), and a Host beside it must not say otherwise.
fn check_host(state: &HttpState, uri: &Uri, headers: &HeaderMap) -> Result<(), Refusal> {
    let mut hosts = headers.get_all(header::HOST).iter();
    let host = hosts.next();
    // RFC 9112 §3.2: more than one Host line is a bad request, whichever would be read.
    if hosts.next().is_some() {
        return Err(Refusal::bad_request("more than one host header"));
    }
    if host.is_none() && uri.authority().is_none() {
        return Err(Refusal::forbidden("host header missing"));
    }
    let allowed = |authority: &str| {
        host_of(authority).is_some_and(|name| {
            state
                .hosts
                .iter()
                .any(|host| host.eq_ignore_ascii_case(name))
        })
    };
    if let Some(authority) = uri.authority()
        && !allowed(authority.as_str())
    {
        return Err(Refusal::forbidden("host not allowed"));
    }
    if let Some(host) = host
        && !host.to_str().is_ok_and(allowed)
    {
        return Err(Refusal::forbidden("host not allowed"));
    }
    Ok(())
}

/// An absent `Origin` is a non-browser client; a loopback one is a local page; anything else
/// must be configured.
fn check_origin(state: &HttpState, headers: &HeaderMap) -> Result<(), Refusal> {
    let refused = || Refusal::forbidden("origin not allowed");
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let origin = origin
        .to_str()
        .map_err(|_| refused())?
        .trim_end_matches('/')
        .to_ascii_lowercase();
    if state.origins.contains(&origin) {
        return Ok(());
    }
    let host = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .and_then(host_of);
    match host {
        Some("localhost" | "127.0.0.1" | "[::1]") => Ok(()),
        _ => Err(refused()),
    }
}

/// The host of an authority written `host` or `host:port`; `None` when anything else follows
/// the host (`[::1].evil.example`, `[::1]@evil.example`, an empty or non-numeric port), so
/// that a prefix of an allowed name is never taken for it.
pub(crate) fn host_of(authority: &str) -> Option<&str> {
    let end = if authority.starts_with('[') {
        authority.find(']')? + 1
    } else {
        authority.rfind(':').unwrap_or(authority.len())
    };
    let (host, rest) = authority.split_at(end);
    match rest.strip_prefix(':') {
        None if rest.is_empty() => Some(host),
        Some(port) if !port.is_empty() && port.bytes().all(|byte| byte.is_ascii_digit()) => {
            Some(host)
        }
        _ => None,
    }
}

/// Why a request is refused before it reaches the dispatcher.
struct Refusal {
    status: StatusCode,
    reason: &'static str,
}

impl Refusal {
    fn forbidden(reason: &'static str) -> Refusal {
        Refusal {
            status: StatusCode::FORBIDDEN,
            reason,
        }
    }

    fn bad_request(reason: &'static str) -> Refusal {
        Refusal {
            status: StatusCode::BAD_REQUEST,
            reason,
        }
    }

    fn into_response(self) -> Response {
        tracing::warn!(reason = self.reason, "request refused");
        json_response(
            self.status,
            mcp::error_without_id(mcp::code::INVALID_REQUEST, self.reason),
        )
    }
}

fn host_name_of(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    }
}

/// The `subscriptions/listen` stream: the acknowledgement, keep-alive comments,
/// `tools_list_changed` each time a reload changes the tool list (when the client asked for
/// it), and the final response when ferry shuts down. A client that closes it simply drops
/// it.
fn subscription(
    state: &HttpState,
    serving: &Serving,
    server: &Arc<mcp::Server>,
    acknowledgement: Bytes,
    end: Bytes,
    tools_list_changed: Option<Bytes>,
) -> Response {
    enum Step {
        Acknowledge,
        Wait,
        Ended,
    }
    struct Listening {
        step: Step,
        shutdown: watch::Receiver<bool>,
        /// Turns changed on each reload that changed the tool list, and the notification.
        changes: Option<(watch::Receiver<u64>, Bytes)>,
    }
    let keep_alive = state.keep_alive;
    let start = Listening {
        step: Step::Acknowledge,
        shutdown: state.shutdown.clone(),
        changes: tools_list_changed.map(|notification| {
            let mut changes = serving.tool_list_changes();
            // A reload between this request's start and now is told at once, rather than
            // missed: the request was answered by the server it replaced.
            if !Arc::ptr_eq(&serving.load(), server) {
                changes.mark_changed();
            }
            (changes, notification)
        }),
    };
    let stream = futures_util::stream::unfold(start, move |mut listening| {
        let acknowledgement = acknowledgement.clone();
        let end = end.clone();
        async move {
            let event = match listening.step {
                Step::Acknowledge => (super::sse::event(&acknowledgement), Step::Wait),
                Step::Wait => {
                    let changed = async {
                        match &mut listening.changes {
                            Some((changes, notification)) => match changes.changed().await {
                                Ok(()) => notification.clone(),
                                Err(_) => std::future::pending().await,
                            },
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        _ = listening.shutdown.wait_for(|stop| *stop) => (super::sse::event(&end), Step::Ended),
                        notification = changed => (super::sse::event(&notification), Step::Wait),
                        () = tokio::time::sleep(keep_alive) => (Bytes::from_static(b": keep-alive\n\n"), Step::Wait),
                    }
                }
                Step::Ended => return None,
            };
            listening.step = event.1;
            Some((Ok::<_, std::convert::Infallible>(event.0), listening))
        }
    });
    super::sse::response(Body::from_stream(stream))
}

//! Streamable HTTP: one endpoint, `POST /mcp`, answered with plain `application/json` (or an
//! SSE stream for `subscriptions/listen`). `GET` and `DELETE` get 405: ferry keeps no sessions
//! and has nothing to push.
//!
//! Before a message reaches the dispatcher, `Host` is checked against an allowlist (DNS
//! rebinding) and `Origin`, when present, against another; both failures are 403.
//!
//! Connections are served by hyper directly rather than by `axum::serve`, which cannot bound
//! them: every request head has a deadline (a client that sends it slowly, or nothing, is
//! closed), a connection with no request in flight for as long is closed too, the connections
//! served at once are bounded, and shutting down has a deadline after
//! which connections still open are dropped.

use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;

use crate::mcp::{self, Incoming, Kind, Serving};
use crate::observe::{Observer, Reason};

/// The path of the one MCP endpoint.
pub const ENDPOINT: &str = "/mcp";

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
    /// How often an open `subscriptions/listen` stream gets a keep-alive comment.
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

    async fn admit(&self) -> OwnedSemaphorePermit {
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

/// Serves `server` on `listener` until `shutdown` completes, then lets requests in flight
/// finish (open subscription streams are ended with their final response) for at most the
/// shutdown timeout, and drops the connections still open after it. Each request is answered
/// by the server current when it arrived (see [`Serving`]); its authenticator checks the
/// request's token before the body is read (401).
pub async fn serve<L>(
    server: impl Into<Serving>,
    mut listener: L,
    options: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    L: axum::serve::Listener<Addr = SocketAddr>,
{
    let local = listener.local_addr()?;
    let (stop, stopped) = watch::channel(false);
    let router = router(server.into(), local, &options, stopped.clone());
    let builder = Arc::new(connection_builder(options.header_timeout));
    let mut connections = JoinSet::new();
    let mut shutdown = pin!(shutdown);
    loop {
        let (permit, (io, peer)) = tokio::select! {
            accepted = async {
                let permit = options.connection_limit.admit().await;
                (permit, listener.accept().await)
            } => accepted,
            () = &mut shutdown => break,
        };
        // Finished connections are reaped here, so the set holds only open ones.
        while connections.try_join_next().is_some() {}
        tracing::trace!(%peer, "serving a connection");
        connections.spawn(connection(
            Arc::clone(&builder),
            io,
            router.clone(),
            (options.header_timeout, options.request_timeout),
            stopped.clone(),
            permit,
        ));
    }
    drop(listener);
    let _ = stop.send(true);
    let drained = tokio::time::timeout(options.shutdown_timeout, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            connections = connections.len(),
            timeout_ms = options.shutdown_timeout.as_millis() as u64,
            "shutdown deadline passed; dropping the connections still open"
        );
        connections.shutdown().await;
    }
    Ok(())
}

/// Most streams an HTTP/2 connection may have open at once. Each is a request handled at the
/// same time; hyper's default of 200 lets one connection take more than its share.
const MAX_STREAMS: u32 = 64;

/// HTTP/1.1 and HTTP/2 (chosen by the connection's first bytes), with hyper's own deadline on
/// every HTTP/1 request head, and HTTP/2 pings that close a connection whose client stopped
/// answering.
fn connection_builder(header_timeout: Duration) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(MAX_STREAMS)
        .keep_alive_interval(header_timeout)
        .keep_alive_timeout(header_timeout);
    builder
}

/// Serves one connection until it ends, it has had no request in flight for a whole
/// `header_timeout` (closed at once if it never had one, asked to close otherwise and dropped
/// if it has not within `request_timeout`), a write makes no progress for `request_timeout`,
/// or shutdown is asked for (`stopping` turns `true`) and its requests in flight have
/// finished. `_permit` is its place under the connection bound.
async fn connection<I>(
    builder: Arc<auto::Builder<TokioExecutor>>,
    io: I,
    router: Router,
    timeouts: (Duration, Duration),
    mut stopping: watch::Receiver<bool>,
    _permit: OwnedSemaphorePermit,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (header_timeout, request_timeout) = timeouts;
    // hyper bounds each HTTP/1 head itself, but not the bytes it reads first to tell HTTP/1
    // from HTTP/2, nor anything on HTTP/2, which may stay open between requests for ever:
    // the connection is watched every header timeout, and is idle when it had no request in
    // flight at two looks in a row and none started in between.
    let activity = Arc::new(Activity::default());
    let requests = Requests {
        router,
        activity: Arc::clone(&activity),
    };
    let io = TokioIo::new(WriteDeadline::new(io, request_timeout));
    let mut serving = pin!(builder.serve_connection(io, requests));
    let mut look = pin!(tokio::time::sleep(header_timeout));
    // How many requests had started at the last look, when none was in flight then.
    let mut idle_since = Some(0);
    let mut closing = false;
    let mut closing_idle = false;
    let mut stop_seen = false;
    loop {
        tokio::select! {
            served = serving.as_mut() => {
                if let Err(error) = served {
                    tracing::debug!(%error, "connection ended with an error");
                }
                return;
            }
            () = look.as_mut() => {
                if closing_idle {
                    tracing::debug!("idle connection not closed in time; dropping it");
                    return;
                }
                let (started, in_flight) = activity.now();
                if in_flight || idle_since != Some(started) {
                    idle_since = (!in_flight).then_some(started);
                    look.as_mut().reset(tokio::time::Instant::now() + header_timeout);
                    continue;
                }
                if started == 0 {
                    tracing::debug!("no request head in time; closing the connection");
                    return;
                }
                tracing::debug!("connection idle; closing it");
                if !closing {
                    serving.as_mut().graceful_shutdown();
                    closing = true;
                }
                // A response still being written (an HTTP/2 client may give it no window) is
                // given as long as a request.
                closing_idle = true;
                look.as_mut().reset(tokio::time::Instant::now() + request_timeout);
            }
            _ = stopping.wait_for(|stop| *stop), if !stop_seen => {
                stop_seen = true;
                if !closing {
                    serving.as_mut().graceful_shutdown();
                    closing = true;
                }
            }
        }
    }
}

/// One connection's requests, counted by its service and read by the loop serving it.
#[derive(Default)]
struct Activity {
    /// Requests whose head came.
    started: AtomicU64,
    /// Requests no longer in flight: answered, or for a subscription stream, ended.
    ended: AtomicU64,
}

impl Activity {
    /// How many requests have started, and whether any is in flight.
    fn now(&self) -> (u64, bool) {
        // `ended` first: read after it, `started` is never behind it.
        let ended = self.ended.load(Ordering::Acquire);
        let started = self.started.load(Ordering::Acquire);
        (started, started != ended)
    }
}

/// A request in flight, until dropped.
struct InFlight(Arc<Activity>);

impl InFlight {
    fn new(activity: &Arc<Activity>) -> InFlight {
        activity.started.fetch_add(1, Ordering::AcqRel);
        InFlight(Arc::clone(activity))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.ended.fetch_add(1, Ordering::AcqRel);
    }
}

/// The router as one connection's hyper service, counting its requests in flight.
struct Requests {
    router: Router,
    activity: Arc<Activity>,
}

impl hyper::service::Service<hyper::Request<hyper::body::Incoming>> for Requests {
    type Response = Response<Streamed>;
    type Error = Infallible;
    type Future = Answering;

    fn call(&self, request: hyper::Request<hyper::body::Incoming>) -> Self::Future {
        let in_flight = InFlight::new(&self.activity);
        // The router is always ready; a clone is a reference count, as `axum::serve` takes.
        Answering {
            route: tower_service::Service::call(&mut self.router.clone(), request),
            in_flight: Some(in_flight),
        }
    }
}

/// A request being answered: in flight until its response is ready, or, for a subscription
/// stream, until the stream ends.
struct Answering {
    route: axum::routing::future::RouteFuture<Infallible>,
    in_flight: Option<InFlight>,
}

impl Future for Answering {
    type Output = Result<Response<Streamed>, Infallible>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let Ok(response) = ready!(Pin::new(&mut self.route).poll(context));
        let streamed = response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|kind| kind.as_bytes() == b"text/event-stream");
        let in_flight = self.in_flight.take().filter(|_| streamed);
        Poll::Ready(Ok(response.map(|body| Streamed { body, in_flight })))
    }
}

/// A response body, holding its request in flight while it is sent when it is a stream.
struct Streamed {
    body: Body,
    in_flight: Option<InFlight>,
}

impl http_body::Body for Streamed {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(context);
        if let Poll::Ready(None) = polled {
            self.in_flight = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A connection's IO whose writes fail once one has made no progress for `timeout`: hyper has
/// no write deadline, and a client that never reads would keep its connection for ever.
struct WriteDeadline<I> {
    io: I,
    timeout: Duration,
    /// Armed when a write is first kept waiting, disarmed by any write that goes through.
    stalled: Pin<Box<tokio::time::Sleep>>,
    waiting: bool,
}

impl<I> WriteDeadline<I> {
    fn new(io: I, timeout: Duration) -> WriteDeadline<I> {
        WriteDeadline {
            io,
            timeout,
            stalled: Box::pin(tokio::time::sleep(timeout)),
            waiting: false,
        }
    }

    fn progress<T>(
        &mut self,
        polled: Poll<std::io::Result<T>>,
        context: &mut Context<'_>,
    ) -> Poll<std::io::Result<T>> {
        if polled.is_ready() {
            self.waiting = false;
            return polled;
        }
        if !self.waiting {
            self.waiting = true;
            let deadline = tokio::time::Instant::now() + self.timeout;
            self.stalled.as_mut().reset(deadline);
        }
        match self.stalled.as_mut().poll(context) {
            Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the client read nothing in time",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<I: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for WriteDeadline<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(context, buffer)
    }
}

impl<I: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for WriteDeadline<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write(context, buffer);
        self.progress(polled, context)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffers: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write_vectored(context, buffers);
        self.progress(polled, context)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<std::io::Result<()>> {
        let polled = Pin::new(&mut self.io).poll_flush(context);
        self.progress(polled, context)
    }

    fn poll_shutdown(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<std::io::Result<()>> {
        let polled = Pin::new(&mut self.io).poll_shutdown(context);
        self.progress(polled, context)
    }
}

/// The router for `POST /mcp`, and the protected resource metadata of the current server's
/// authenticator; `local` is the address it is reached at, allowed as a host.
/// `shutdown` turning `true` ends subscription streams.
pub fn router(
    server: impl Into<Serving>,
    local: SocketAddr,
    options: &HttpOptions,
    shutdown: watch::Receiver<bool>,
) -> Router {
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()];
    hosts.push(host_name_of(local.ip()));
    hosts.extend(
        options
            .allowed_hosts
            .iter()
            .map(|host| host.to_ascii_lowercase()),
    );
    let server = server.into();
    let state = Arc::new(HttpState {
        server,
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
    });
    let root = crate::auth::METADATA_ROOT_PATH;
    Router::new()
        .route(ENDPOINT, post(post_mcp).fallback(method_not_allowed))
        .route(root, get(metadata))
        .route(&format!("{root}/{{*resource}}"), get(metadata))
        .with_state(state)
}

struct HttpState {
    server: Serving,
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

async fn post_mcp(State(state): State<Arc<HttpState>>, request: Request) -> Response {
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
    let server = state.server.load();
    // Before the body is read: an unauthenticated client costs no more than its headers.
    let principal = if server.authenticator().is_enabled() {
        match server
            .authenticator()
            .authenticate_headers(&parts.headers)
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
        let body = received.insert(axum::body::to_bytes(body, state.body_limit).await?);
        let incoming = Incoming {
            body,
            headers: Some(&parts.headers),
            principal: principal.as_ref(),
        };
        // Awaited in place, not spawned: when the client goes away hyper drops this future,
        // and with it the upstream call in flight.
        Ok::<_, axum::Error>(server.handle(incoming).await)
    };
    let outgoing = match tokio::time::timeout(state.request_timeout, work).await {
        Ok(Ok(outgoing)) => outgoing,
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
    match outgoing.kind {
        Kind::Json => json_response(outgoing.status, outgoing.body),
        Kind::Accepted { .. } => StatusCode::ACCEPTED.into_response(),
        Kind::Subscription {
            end,
            tools_list_changed,
        } => subscription(&state, &server, outgoing.body, end, tools_list_changed),
        Kind::Refused(challenge) => {
            let mut response = json_response(outgoing.status, outgoing.body);
            super::auth::add_challenge(&mut response, &challenge);
            response
        }
    }
}

/// The RFC 9728 metadata of the authenticator current now (404 without OAuth).
async fn metadata(State(state): State<Arc<HttpState>>, uri: Uri) -> Response {
    super::auth::metadata_response(state.server.load().authenticator(), uri.path())
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
fn host_of(authority: &str) -> Option<&str> {
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
            let mut changes = state.server.tool_list_changes();
            // A reload between this request's start and now is told at once, rather than
            // missed: the request was answered by the server it replaced.
            if !Arc::ptr_eq(&state.server.load(), server) {
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
                Step::Acknowledge => (sse_event(&acknowledgement), Step::Wait),
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
                        _ = listening.shutdown.wait_for(|stop| *stop) => (sse_event(&end), Step::Ended),
                        notification = changed => (sse_event(&notification), Step::Wait),
                        () = tokio::time::sleep(keep_alive) => (Bytes::from_static(b": keep-alive\n\n"), Step::Wait),
                    }
                }
                Step::Ended => return None,
            };
            listening.step = event.1;
            Some((Ok::<_, std::convert::Infallible>(event.0), listening))
        }
    });
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

fn sse_event(message: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(message.len() + 16);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(message);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

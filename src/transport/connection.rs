//! The connections HTTP is served on, by hyper directly rather than by `axum::serve`, which
//! cannot bound them: every request head has a deadline (a client that sends it slowly, or
//! nothing, is closed), a connection with no request in flight for as long is closed too, a
//! write that makes no progress fails its connection, the connections served at once are
//! bounded, and shutting down has a deadline after which connections still open are dropped.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::Response;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::sync::{OwnedSemaphorePermit, watch};
use tokio::task::JoinSet;

use super::http::{Answer, Endpoint, HttpOptions, Routes};

/// Serves `server` (one server, or the [`Routes`] of several endpoints) on `listener` until
/// `shutdown` completes, then lets requests in flight finish (open subscription streams are
/// ended with their final response) for at most the shutdown timeout, and drops the
/// connections still open after it. Each request is answered by its endpoint's server
/// current when it arrived (see [`crate::mcp::Serving`]); its authenticator checks the
/// request's token before the body is read (401).
pub async fn serve<L>(
    server: impl Into<Routes>,
    mut listener: L,
    options: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    L: axum::serve::Listener<Addr = SocketAddr>,
{
    let local = listener.local_addr()?;
    let (stop, stopped) = watch::channel(false);
    let endpoint = Endpoint::new(server, local, &options, stopped.clone());
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
            endpoint.clone(),
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
/// finished (at once when it has none). `_permit` is its place under the connection bound.
async fn connection<I>(
    builder: Arc<auto::Builder<TokioExecutor>>,
    io: I,
    endpoint: Endpoint,
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
        endpoint,
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
                // Nothing in flight (the connection is idle, or still sending a head): there
                // is nothing to finish, so it is closed at once rather than given until its
                // head deadline or the shutdown deadline.
                if !activity.now().1 {
                    tracing::debug!("shutting down; closing a connection with no request in flight");
                    return;
                }
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

/// The endpoint as one connection's hyper service, counting its requests in flight.
struct Requests {
    endpoint: Endpoint,
    activity: Arc<Activity>,
}

impl hyper::service::Service<hyper::Request<hyper::body::Incoming>> for Requests {
    type Response = Response<Streamed>;
    type Error = Infallible;
    type Future = Answering;

    fn call(&self, request: hyper::Request<hyper::body::Incoming>) -> Self::Future {
        let in_flight = InFlight::new(&self.activity);
        Answering {
            answer: self.endpoint.answer(request),
            in_flight: Some(in_flight),
        }
    }
}

/// A request being answered: in flight until its response is ready, or, for a subscription
/// stream, until the stream ends.
struct Answering {
    answer: Answer,
    in_flight: Option<InFlight>,
}

impl Future for Answering {
    type Output = Result<Response<Streamed>, Infallible>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let response = ready!(Pin::new(&mut self.answer).poll(context));
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

//! Server-sent events on the way back of a POST: a call that tells its progress
//! (`notifications/progress`, asked for with `_meta.progressToken`) is answered as an SSE
//! stream of its notifications and then its response, which ends the stream. A call that
//! ends before it has anything to tell is answered as JSON, as any other. Closing the stream
//! cancels the call: its future, upstream exchange included, lives in the stream and is
//! dropped with it.

use std::pin::Pin;
use std::sync::{Arc, LazyLock};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use memchr::memmem;
use tokio::sync::mpsc;
use tokio::time::{Duration, Instant};

use crate::auth::Principal;
use crate::mcp::{self, Incoming, Outgoing};

/// Whether a request may be answered with its progress: it names a progress token (a
/// request without one cannot ask for any) and its client takes an SSE answer.
pub(super) fn wants_progress(body: &[u8], headers: &HeaderMap) -> bool {
    // Built once: a searcher made for each request cost more than the search.
    static TOKEN: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"\"progressToken\""));
    TOKEN.find(body).is_some()
        && headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .any(|kind| {
                let kind = kind.split(';').next().unwrap_or_default().trim();
                kind.eq_ignore_ascii_case("text/event-stream")
            })
}

/// A request to answer with its progress, owning what its answer needs.
pub(super) struct Call {
    pub(super) server: Arc<mcp::Server>,
    pub(super) headers: HeaderMap,
    pub(super) principal: Option<Principal>,
    pub(super) body: Bytes,
    /// When the request's time runs out, the answer then being that it timed out.
    pub(super) deadline: Instant,
    /// How long the stream may stay silent before a comment tells a proxy it is alive.
    pub(super) keep_alive: Duration,
}

/// How a call that may tell its progress was answered.
pub(super) enum Ran {
    /// It ended before telling any: its answer, to send as any other.
    Answered(Outgoing),
    /// It told some: the SSE response, whose stream runs the call to its end.
    Streamed(Response),
}

type Work = Pin<Box<dyn Future<Output = Outgoing> + Send>>;

impl Call {
    /// Runs the call until it ends or tells its first progress.
    // Out of line, so that a caller that boxes its future has it written in the box
    // (`crate::boxed`).
    #[inline(never)]
    pub(super) async fn run(self) -> Ran {
        let (notify, mut notes) = mpsc::unbounded_channel::<Bytes>();
        let Call {
            server,
            headers,
            principal,
            body,
            deadline,
            keep_alive,
        } = self;
        let mut work: Work = Box::pin(async move {
            let incoming = Incoming {
                body: &body,
                headers: Some(&headers),
                principal: principal.as_ref(),
                notify: Some(&notify),
            };
            match tokio::time::timeout_at(deadline, server.handle(incoming)).await {
                Ok(outgoing) => outgoing,
                Err(_) => {
                    tracing::warn!("request timed out");
                    mcp::timed_out(&body)
                }
            }
        });
        let first = tokio::select! {
            biased;
            outgoing = &mut work => return Ran::Answered(outgoing),
            first = notes.recv() => first,
        };
        let Some(first) = first else {
            return Ran::Answered(work.await);
        };
        let start = Streaming {
            first: Some(first),
            work: Some(work),
            notes,
        };
        let stream = futures_util::stream::unfold(start, move |mut streaming| async move {
            if let Some(first) = streaming.first.take() {
                return Some((Ok::<_, std::convert::Infallible>(event(&first)), streaming));
            }
            let work = streaming.work.as_mut()?;
            tokio::select! {
                biased;
                Some(note) = streaming.notes.recv() => Some((Ok(event(&note)), streaming)),
                outgoing = work => {
                    streaming.work = None;
                    // Whatever was told before the answer goes before it.
                    let mut last = Vec::new();
                    while let Ok(note) = streaming.notes.try_recv() {
                        last.extend_from_slice(&event(&note));
                    }
                    last.extend_from_slice(&event(&outgoing.body));
                    Some((Ok(Bytes::from(last)), streaming))
                }
                // A slow upstream stream may leave this one silent longer than a proxy
                // between ferry and the client waits.
                () = tokio::time::sleep(keep_alive) => {
                    Some((Ok(Bytes::from_static(b": keep-alive\n\n")), streaming))
                }
            }
        });
        Ran::Streamed(response(Body::from_stream(stream)))
    }
}

/// A call's stream: its first notification, then the rest and its answer.
struct Streaming {
    first: Option<Bytes>,
    work: Option<Work>,
    notes: mpsc::UnboundedReceiver<Bytes>,
}

/// A `200` answer whose body is SSE events: not to be cached, nor held back by a proxy.
pub(super) fn response(body: Body) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// One JSON-RPC message as an SSE event.
pub(super) fn event(message: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(message.len() + 16);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(message);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

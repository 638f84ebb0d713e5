//! stdio: newline-delimited JSON-RPC on stdin and stdout, one message per line.
//!
//! stdio is a local, trusted channel (the client started ferry), so HTTP's Host, Origin and
//! header checks do not apply; `_meta` carries everything. Requests run concurrently;
//! `notifications/cancelled` drops the matching one, upstream call included, and nothing is
//! answered for it (or ends the `subscriptions/listen` it names). Only MCP messages are
//! written to stdout.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;

use crate::mcp::{self, Incoming, Kind, Server, Serving};

/// The longest line read by default: larger messages are refused, not buffered.
pub const DEFAULT_MAX_LINE: usize = 4 * 1024 * 1024;

/// Requests served at once on one stdio connection.
pub const MAX_IN_FLIGHT: usize = 256;

/// Serves `server` until `input` ends, then waits for requests in flight and returns. Each
/// request is answered by the server current when it was read (see [`Serving`]).
pub async fn serve<R, W>(
    server: impl Into<Serving>,
    mut input: R,
    output: W,
    max_line: usize,
) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let server = server.into();
    let (send, receive) = mpsc::unbounded_channel::<Bytes>();
    let writer = tokio::spawn(write_lines(receive, output));
    let in_flight: Arc<Mutex<HashMap<String, tokio::task::AbortHandle>>> = Arc::default();
    let subscriptions = Subscriptions::default();
    let notifier = tokio::spawn(notify(
        server.tool_list_changes(),
        subscriptions.clone(),
        send.clone(),
    ));
    let mut tasks = JoinSet::new();
    let slots = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    let mut line = Vec::new();
    loop {
        match read_line(&mut input, &mut line, max_line).await? {
            Line::End => break,
            Line::TooLong => {
                tracing::warn!(max_line, "message longer than the line limit, skipped");
                let _ = send.send(mcp::error_without_id(
                    mcp::code::INVALID_REQUEST,
                    "message exceeds the line limit",
                ));
                continue;
            }
            Line::Read => {}
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        while tasks.try_join_next().is_some() {}
        let body = Bytes::from(std::mem::take(&mut line));
        let Some(id) = mcp::request_id(&body) else {
            // Notifications (and unreadable lines) are answered at once, in order.
            if let Some(id) = answer(&server.load(), &body, &send, &subscriptions, || {}).await {
                if let Some(task) = lock(&in_flight).remove(&id) {
                    tracing::debug!(request = %id, "request cancelled");
                    task.abort();
                }
                lock(&subscriptions.0).remove(&id);
            }
            continue;
        };
        // At most MAX_IN_FLIGHT requests run at once; reading waits for a free slot, so a
        // client that floods stdin is slowed down rather than served unboundedly.
        let permit = Arc::clone(&slots)
            .acquire_owned()
            .await
            .map_err(std::io::Error::other)?;
        let server = server.load();
        let send = send.clone();
        let registry = Arc::clone(&in_flight);
        let subscriptions = subscriptions.clone();
        let key = id.clone();
        // Registered under the lock the task takes to deregister, so a task that finishes at
        // once cannot leave its entry behind.
        let mut registered = lock(&in_flight);
        let handle = tasks.spawn(async move {
            let _permit = permit;
            // Deregister before answering, so a late cancel cannot race the answer.
            let deregister = || {
                lock(&registry).remove(&key);
            };
            answer(&server, &body, &send, &subscriptions, deregister).await;
        });
        registered.insert(id, handle);
        drop(registered);
    }
    while tasks.join_next().await.is_some() {}
    notifier.abort();
    drop(send);
    writer.await.map_err(std::io::Error::other)?
}

/// The open `subscriptions/listen` that asked for `toolsListChanged`: the notification each
/// is sent, by the raw JSON id that opened it (and that a cancel names).
#[derive(Clone, Default)]
struct Subscriptions(Arc<Mutex<HashMap<String, Bytes>>>);

/// Sends every subscription its notification each time a reload changes the tool list.
async fn notify(
    mut changes: tokio::sync::watch::Receiver<u64>,
    subscriptions: Subscriptions,
    send: mpsc::UnboundedSender<Bytes>,
) {
    while changes.changed().await.is_ok() {
        let notifications: Vec<Bytes> = lock(&subscriptions.0).values().cloned().collect();
        for notification in notifications {
            let _ = send.send(notification);
        }
    }
}

/// Hands one message to the dispatcher, runs `settle`, then queues the answer if there is one
/// (and keeps a subscription that asked for notifications). Returns the id of the request a
/// `notifications/cancelled` names.
async fn answer(
    server: &Server,
    body: &[u8],
    send: &mpsc::UnboundedSender<Bytes>,
    subscriptions: &Subscriptions,
    settle: impl FnOnce(),
) -> Option<String> {
    let outgoing = server
        .handle(Incoming {
            body,
            headers: None,
            principal: None,
            notify: Some(send),
        })
        .await;
    settle();
    match outgoing.kind {
        // On stdio the subscription's acknowledgement is all there is to send at once: the
        // subscription stays open, notified, until the client cancels it or closes stdin.
        Kind::Subscription {
            tools_list_changed: Some(notification),
            ..
        } => {
            // Acknowledged first: nothing may be sent on a subscription before that.
            let _ = send.send(outgoing.body);
            if let Some(id) = mcp::request_id(body) {
                lock(&subscriptions.0).insert(id, notification);
            }
            None
        }
        Kind::Json | Kind::Subscription { .. } | Kind::Refused(_) => {
            let _ = send.send(outgoing.body);
            None
        }
        Kind::Accepted { cancels } => cancels,
    }
}

enum Line {
    Read,
    TooLong,
    End,
}

/// Reads one line into `line` (without its newline), never holding more than `max` bytes.
async fn read_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    line.clear();
    let mut too_long = false;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if line.is_empty() {
                Line::End
            } else {
                Line::Read
            });
        }
        let (chunk, found) = match available.iter().position(|&byte| byte == b'\n') {
            Some(end) => (&available[..end], Some(end + 1)),
            None => (available, None),
        };
        if !too_long {
            if line.len() + chunk.len() > max {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let consumed = found.unwrap_or(available.len());
        input.consume(consumed);
        if found.is_some() {
            return Ok(if too_long { Line::TooLong } else { Line::Read });
        }
    }
}

/// Writes each message and its newline with one write, together with any others already
/// queued: tokio's stdout hands every write to a blocking thread and waits for the previous
/// one, so a message and its newline written apart cost two hand-offs. A message of
/// [`OWN_WRITE`] bytes or more (a large API's `tools/list`, megabytes) is written as it is,
/// then its newline: copying it would cost more than the hand-off, and hold its size twice.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut receive: mpsc::UnboundedReceiver<Bytes>,
    mut output: W,
) -> std::io::Result<()> {
    /// The size from which a message is written on its own rather than copied.
    const OWN_WRITE: usize = 64 * 1024;
    let mut lines = Vec::new();
    while let Some(message) = receive.recv().await {
        let mut next = Some(message);
        while let Some(message) = next.take() {
            if message.len() >= OWN_WRITE {
                if !lines.is_empty() {
                    output.write_all(&lines).await?;
                    lines.clear();
                }
                output.write_all(&message).await?;
                output.write_all(b"\n").await?;
            } else {
                lines.extend_from_slice(&message);
                lines.push(b'\n');
            }
            next = receive.try_recv().ok();
        }
        if !lines.is_empty() {
            output.write_all(&lines).await?;
            lines.clear();
        }
        output.flush().await?;
    }
    Ok(())
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding this lock leaves a map of abort handles that is still usable.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use tokio::sync::mpsc;

    use super::write_lines;

    #[tokio::test]
    async fn messages_large_and_small_are_written_in_order_a_line_each() {
        let large = Bytes::from(vec![b'x'; 200 * 1024]);
        let messages = [
            Bytes::from_static(b"{\"a\":1}"),
            Bytes::from_static(b"{\"b\":2}"),
            large.clone(),
            Bytes::from_static(b"{\"c\":3}"),
            large.clone(),
        ];
        let (send, receive) = mpsc::unbounded_channel();
        // All queued before the writer starts: the small ones are written together, around
        // the large ones.
        for message in &messages {
            send.send(message.clone()).unwrap();
        }
        drop(send);
        let mut output = Vec::new();
        write_lines(receive, &mut output).await.unwrap();
        let mut expected = Vec::new();
        for message in &messages {
            expected.extend_from_slice(message);
            expected.push(b'\n');
        }
        assert_eq!(output.len(), expected.len());
        assert!(
            output == expected,
            "every message, in order, each on its line"
        );
    }
}

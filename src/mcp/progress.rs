//! `notifications/progress` for a request that asked for it with `_meta.progressToken`: a
//! streamed upstream answer tells how far it has come as its items arrive. The transport
//! hands the server a [`Notify`] that carries such notifications back on the request's way
//! (an SSE response on HTTP, a line on stdio) before its answer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::value::RawValue;

use crate::upstream;

/// Where notifications about one request go: each is one JSON-RPC message.
pub type Notify = tokio::sync::mpsc::UnboundedSender<Bytes>;

/// The least time between two notifications of one request: a stream that ends an item at
/// every read would otherwise send one per read, as fast as the upstream writes, queued for a
/// client that may read slower. The first is told at once; the answer follows the last.
pub(super) const INTERVAL: Duration = Duration::from_millis(100);

/// Tells a request's progress token how far its call has come.
pub(super) struct Reporter<'r> {
    token: &'r RawValue,
    notify: &'r Notify,
    started: Instant,
    /// When the last notification went, in microseconds after `started`; `u64::MAX`: none yet.
    last: AtomicU64,
}

impl<'r> Reporter<'r> {
    pub(super) fn new(token: &'r RawValue, notify: &'r Notify) -> Reporter<'r> {
        Reporter {
            token,
            notify,
            started: Instant::now(),
            last: AtomicU64::new(u64::MAX),
        }
    }

    /// Whether a notification may go now, at `now` microseconds after the start; if so, it
    /// is counted as gone.
    fn due(&self, now: u64) -> bool {
        let last = self.last.load(Ordering::Relaxed);
        if last != u64::MAX && now.saturating_sub(last) < INTERVAL.as_micros() as u64 {
            return false;
        }
        self.last.store(now, Ordering::Relaxed);
        true
    }
}

impl upstream::Progress for Reporter<'_> {
    /// `progress` is the bytes come so far and `total` the tool's size cap, the most that
    /// will be read, so that it only grows; the message counts the items. At most one every
    /// [`INTERVAL`].
    fn report(&self, items: u64, bytes: u64, limit: u64) {
        if !self.due(self.started.elapsed().as_micros() as u64) {
            return;
        }
        let message = match items {
            1 => "1 item so far".to_string(),
            items => format!("{items} items so far"),
        };
        let notification = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{},"progress":{bytes},"total":{limit},"message":"{message}"}}}}"#,
            self.token.get()
        );
        // A client gone away takes nothing more; the call ends as it would have.
        let _ = self.notify.send(Bytes::from(notification));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_are_told_at_most_once_an_interval() {
        let (notify, mut notes) = tokio::sync::mpsc::unbounded_channel();
        let token = RawValue::from_string("\"t\"".to_string()).expect("JSON");
        let reporter = Reporter::new(&token, &notify);
        let interval = INTERVAL.as_micros() as u64;
        let told: Vec<bool> = [0, 1, interval - 1, interval, interval + 1, 3 * interval]
            .into_iter()
            .map(|now| reporter.due(now))
            .collect();
        assert_eq!(told, [true, false, false, true, false, true]);
        // The first report is told whenever it comes.
        let reporter = Reporter::new(&token, &notify);
        upstream::Progress::report(&reporter, 1, 10, 1_000);
        let first = notes.try_recv().expect("the first report is told");
        assert!(first.ends_with(br#""progress":10,"total":1000,"message":"1 item so far"}}"#));
    }
}

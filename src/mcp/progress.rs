//! `notifications/progress` for a request that asked for it with `_meta.progressToken`: a
//! streamed upstream answer tells how far it has come as its items arrive. The transport
//! hands the server a [`Notify`] that carries such notifications back on the request's way
//! (an SSE response on HTTP, a line on stdio) before its answer.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use serde_json::value::RawValue;
use tokio::time::Instant;

use super::envelope::Params;
use crate::upstream;

/// Where notifications about one request go: each is one JSON-RPC message.
pub type Notify = tokio::sync::mpsc::UnboundedSender<Bytes>;

/// The least time between two notifications of one request: a stream that ends an item at
/// every read would otherwise send one per read, as fast as the upstream writes, queued for a
/// client that may read slower. The first is told at once; a count held back by it is told
/// once its time comes, even if the stream falls silent ([`alongside`]); the answer follows
/// the last.
pub(super) const INTERVAL: Duration = Duration::from_millis(100);

/// Tells a request's progress token how far its call has come.
pub(super) struct Reporter<'r> {
    token: &'r RawValue,
    notify: &'r Notify,
    started: Instant,
    told: Mutex<Told>,
}

/// What was told, and what is still to tell.
#[derive(Default)]
struct Told {
    /// When the last notification went, in microseconds after the start.
    last: Option<u64>,
    /// A count that came too soon after the last, to be told once its time comes.
    held: Option<Count>,
}

#[derive(Clone, Copy)]
struct Count {
    items: u64,
    bytes: u64,
    limit: u64,
}

impl<'r> Reporter<'r> {
    /// The reporter of a request whose `_meta` carries a progress token, when its
    /// transport can carry notifications.
    pub(super) fn asked(params: Option<&Params<'r>>, notify: Option<&'r Notify>) -> Option<Self> {
        Some(Reporter::new(params?.progress_token?, notify?))
    }

    fn new(token: &'r RawValue, notify: &'r Notify) -> Reporter<'r> {
        Reporter {
            token,
            notify,
            started: Instant::now(),
            told: Mutex::new(Told::default()),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// Takes `count` at `now` microseconds after the start: tells it if a notification may
    /// go, else holds it (in place of any held before) until one may.
    fn take(&self, count: Count, now: u64) {
        let due = {
            let mut told = self
                .told
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if told.due(now) {
                told.held = None;
                true
            } else {
                told.held = Some(count);
                false
            }
        };
        if due {
            self.tell(count);
        }
    }

    /// Tells the held count, if any and if its time has come at `now`.
    fn release(&self, now: u64) {
        let held = {
            let mut told = self
                .told
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if told.held.is_some() && told.due(now) {
                told.held.take()
            } else {
                None
            }
        };
        if let Some(count) = held {
            self.tell(count);
        }
    }

    fn tell(
        &self,
        Count {
            items,
            bytes,
            limit,
        }: Count,
    ) {
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

impl Told {
    /// Whether a notification may go at `now`; if so, it is counted as gone.
    fn due(&mut self, now: u64) -> bool {
        if let Some(last) = self.last
            && now.saturating_sub(last) < INTERVAL.as_micros() as u64
        {
            return false;
        }
        self.last = Some(now);
        true
    }
}

impl upstream::Progress for Reporter<'_> {
    /// `progress` is the bytes come so far and `total` the tool's size cap, the most that
    /// will be read, so that it only grows; the message counts the items. At most one every
    /// [`INTERVAL`].
    fn report(&self, items: u64, bytes: u64, limit: u64) {
        self.take(
            Count {
                items,
                bytes,
                limit,
            },
            self.now(),
        );
    }
}

/// Runs `work`, the request's handling, and meanwhile tells `reporter`'s held count once
/// its time comes: a stream that brought items and then fell silent has its last count
/// told within two intervals, not only with the answer. `work` is borrowed pinned, not
/// moved: a request's handling is a large future, and most requests ask for no progress.
pub(super) async fn alongside<F: Future>(
    reporter: Option<&Reporter<'_>>,
    mut work: Pin<&mut F>,
) -> F::Output {
    let Some(reporter) = reporter else {
        return work.await;
    };
    let mut ticks = tokio::time::interval_at(Instant::now() + INTERVAL, INTERVAL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            biased;
            done = &mut work => return done,
            _ = ticks.tick() => reporter.release(reporter.now()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_are_told_at_most_once_an_interval() {
        let (notify, mut notes) = tokio::sync::mpsc::unbounded_channel();
        let token = RawValue::from_string("\"t\"".to_string()).expect("JSON");
        let interval = INTERVAL.as_micros() as u64;
        let mut state = Told::default();
        let told: Vec<bool> = [0, 1, interval - 1, interval, interval + 1, 3 * interval]
            .into_iter()
            .map(|now| state.due(now))
            .collect();
        assert_eq!(told, [true, false, false, true, false, true]);
        // The first report is told whenever it comes.
        let reporter = Reporter::new(&token, &notify);
        upstream::Progress::report(&reporter, 1, 10, 1_000);
        let first = notes.try_recv().expect("the first report is told");
        assert!(first.ends_with(br#""progress":10,"total":1000,"message":"1 item so far"}}"#));
    }

    fn count(items: u64) -> Count {
        Count {
            items,
            bytes: items * 10,
            limit: 1_000,
        }
    }

    #[test]
    fn a_count_held_back_is_told_once_its_time_comes_and_only_the_latest() {
        let (notify, mut notes) = tokio::sync::mpsc::unbounded_channel();
        let token = RawValue::from_string("7".to_string()).expect("JSON");
        let reporter = Reporter::new(&token, &notify);
        let interval = INTERVAL.as_micros() as u64;
        reporter.take(count(1), 0);
        reporter.take(count(2), 10);
        reporter.take(count(3), 20);
        reporter.release(interval - 1);
        let first = notes.try_recv().expect("the first count is told at once");
        assert!(first.ends_with(br#""message":"1 item so far"}}"#));
        assert!(notes.try_recv().is_err(), "held until its time");
        reporter.release(interval);
        let held = notes.try_recv().expect("the held count is told");
        assert!(held.ends_with(br#""progress":30,"total":1000,"message":"3 items so far"}}"#));
        reporter.release(3 * interval);
        assert!(notes.try_recv().is_err(), "nothing held, nothing told");
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_that_falls_silent_has_its_last_count_told_before_the_answer() {
        let (notify, mut notes) = tokio::sync::mpsc::unbounded_channel();
        let token = RawValue::from_string("\"t\"".to_string()).expect("JSON");
        let reporter = Reporter::new(&token, &notify);
        let work = std::pin::pin!(async {
            upstream::Progress::report(&reporter, 1, 10, 1_000);
            upstream::Progress::report(&reporter, 2, 20, 1_000);
            tokio::time::sleep(Duration::from_secs(5)).await;
            "answer"
        });
        let answer = alongside(Some(&reporter), work).await;
        assert_eq!(answer, "answer");
        let told: Vec<Bytes> = std::iter::from_fn(|| notes.try_recv().ok()).collect();
        assert_eq!(told.len(), 2, "{told:?}");
        assert!(
            told[1].ends_with(br#""message":"2 items so far"}}"#),
            "{told:?}"
        );
    }
}

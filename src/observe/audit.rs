//! The audit log: one JSON line per [`CallRecord`], appended to a file (or written to stderr)
//! by a thread of its own, so a call never waits on a disk.
//!
//! Records reach the writer through a bounded queue; when it is full (the disk is slower than
//! the calls) a record is dropped and counted rather than the call kept waiting. Each line is
//! one `write` to a file opened with `O_APPEND`, so lines of concurrent writers (two ferry
//! processes sharing a file, say) never interleave. The file is reopened on request (SIGHUP,
//! after a rotation renamed it away); a write that fails is counted and logged, at most once a
//! minute, and calls go on.

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::value::RawValue;

use super::CallRecord;

/// Records waiting for the writer at most; past that they are dropped.
pub const QUEUE: usize = 8192;

/// Where the audit log goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditTarget {
    Stderr,
    File(PathBuf),
}

/// The audit log's writer: a queue and the thread that empties it.
#[derive(Debug)]
pub struct Audit {
    sender: SyncSender<Message>,
    shared: Arc<Shared>,
    dropped: Option<::metrics::Counter>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Debug, Default)]
struct Shared {
    /// Records dropped because the queue was full.
    dropped: AtomicU64,
    /// Set by [`Audit::reopen`], cleared by the writer once it has reopened the file.
    reopen: AtomicBool,
}

#[derive(Debug)]
enum Message {
    Record(Box<CallRecord>),
    /// Look at `Shared::reopen` now.
    Wake,
    /// Write what is queued before this, then end.
    Stop,
}

/// Counters the writer moves, from the metrics when there are any.
#[derive(Debug, Clone, Default)]
pub struct AuditCounters {
    pub dropped: Option<::metrics::Counter>,
    pub write_errors: Option<::metrics::Counter>,
}

impl Audit {
    /// Opens `target` (a file is created when missing, and appended to) and starts the
    /// writer. Fails when the file cannot be opened.
    pub fn open(target: AuditTarget, counters: AuditCounters) -> std::io::Result<Audit> {
        let file = match &target {
            AuditTarget::File(path) => Some(open_file(path)?),
            AuditTarget::Stderr => None,
        };
        let (sender, receiver) = std::sync::mpsc::sync_channel(QUEUE);
        let shared = Arc::new(Shared::default());
        let writer = Writer {
            target,
            file,
            shared: Arc::clone(&shared),
            write_errors: counters.write_errors,
            line: Vec::with_capacity(512),
            failures: Throttle::default(),
            reported_drops: 0,
        };
        let thread = std::thread::Builder::new()
            .name("ferry-audit".into())
            .spawn(move || writer.run(receiver))?;
        Ok(Audit {
            sender,
            shared,
            dropped: counters.dropped,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Queues `record`; drops and counts it when the writer is that far behind.
    pub fn write(&self, record: CallRecord) {
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) =
            self.sender.try_send(Message::Record(Box::new(record)))
        {
            self.shared.dropped.fetch_add(1, Ordering::Relaxed);
            if let Some(counter) = &self.dropped {
                counter.increment(1);
            }
        }
    }

    /// Asks the writer to reopen the file at its path before the next line: after a rotation
    /// renamed the file, the next line lands in a new one.
    pub fn reopen(&self) {
        self.shared.reopen.store(true, Ordering::Release);
        // A full queue wakes the writer anyway.
        let _ = self.sender.try_send(Message::Wake);
    }

    /// Records dropped so far because the writer was behind.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// Lets the writer write the records queued, for at most `deadline`, and end.
    pub fn finish(&self, deadline: Duration) {
        let Some(thread) = self
            .thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        else {
            return;
        };
        let until = Instant::now() + deadline;
        let mut stop = Some(Message::Stop);
        while let Some(message) = stop.take() {
            match self.sender.try_send(message) {
                Err(TrySendError::Full(message)) if Instant::now() < until => {
                    stop = Some(message);
                    std::thread::sleep(Duration::from_millis(5));
                }
                _ => {}
            }
        }
        while !thread.is_finished() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        if thread.is_finished() {
            let _ = thread.join();
        } else {
            tracing::warn!("audit log: records still queued at exit were not written");
        }
    }
}

fn open_file(path: &std::path::Path) -> std::io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

struct Writer {
    target: AuditTarget,
    file: Option<File>,
    shared: Arc<Shared>,
    write_errors: Option<::metrics::Counter>,
    line: Vec<u8>,
    failures: Throttle,
    reported_drops: u64,
}

impl Writer {
    fn run(mut self, receiver: Receiver<Message>) {
        loop {
            let message = receiver.recv_timeout(Duration::from_secs(10));
            self.report_drops();
            if self.shared.reopen.swap(false, Ordering::AcqRel) {
                self.reopen();
            }
            match message {
                Ok(Message::Record(record)) => self.write(&record),
                Ok(Message::Wake) | Err(RecvTimeoutError::Timeout) => {}
                Ok(Message::Stop) | Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    fn reopen(&mut self) {
        let AuditTarget::File(path) = &self.target else {
            return;
        };
        match open_file(path) {
            Ok(file) => {
                self.file = Some(file);
                tracing::info!("audit log reopened");
            }
            Err(error) => {
                // The old file, renamed or not, is written on until a reopen succeeds.
                tracing::warn!(%error, "audit log: cannot reopen; writing on to the file open");
            }
        }
    }

    fn write(&mut self, record: &CallRecord) {
        self.line.clear();
        write_line(record, &mut self.line);
        // One write per line: with O_APPEND the kernel puts each at the end whole.
        let written = match (&self.target, &mut self.file) {
            (AuditTarget::File(_), Some(file)) => write_once(file, &self.line),
            _ => write_once(&mut std::io::stderr().lock(), &self.line),
        };
        if let Err(error) = written {
            if let Some(counter) = &self.write_errors {
                counter.increment(1);
            }
            if let Some(suppressed) = self.failures.allow() {
                tracing::warn!(%error, suppressed, "audit log: a record could not be written");
            }
        }
    }

    fn report_drops(&mut self) {
        let dropped = self.shared.dropped.load(Ordering::Relaxed);
        if dropped > self.reported_drops {
            tracing::warn!(
                dropped = dropped - self.reported_drops,
                "audit log fell behind; records dropped"
            );
            self.reported_drops = dropped;
        }
    }
}

/// `bytes` in one `write`: a short write (a full disk) is an error, not a second write that
/// could land after another writer's line.
fn write_once(out: &mut impl std::io::Write, bytes: &[u8]) -> std::io::Result<()> {
    match out.write(bytes) {
        Ok(written) if written == bytes.len() => Ok(()),
        Ok(_) => Err(std::io::Error::new(
            std::io::ErrorKind::WriteZero,
            "short write",
        )),
        Err(error) => Err(error),
    }
}

/// At most one report a minute; the reports kept back are counted.
#[derive(Default)]
struct Throttle {
    last: Option<Instant>,
    suppressed: u64,
}

impl Throttle {
    /// `Some(reports kept back since the last)` when one may be made now.
    fn allow(&mut self) -> Option<u64> {
        let now = Instant::now();
        if self
            .last
            .is_some_and(|last| now.duration_since(last) < Duration::from_secs(60))
        {
            self.suppressed += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.suppressed))
    }
}

/// The line a record is written as: JSON and its newline.
pub fn write_line(record: &CallRecord, out: &mut Vec<u8>) {
    #[derive(Serialize)]
    struct Line<'a> {
        time: &'a str,
        request_id: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        jsonrpc_id: Option<&'a RawValue>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool: Option<&'a str>,
        subject: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        client_name: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        client_version: Option<&'a str>,
        outcome: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error_code: Option<i32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        upstream_method: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        upstream_path: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        upstream_status: Option<u16>,
        attempts: u32,
        duration_us: u64,
        upstream_us: u64,
        bytes_in: u64,
        bytes_out: u64,
    }
    let mut time = String::with_capacity(32);
    rfc3339(record.time, &mut time);
    let mut request_id = String::with_capacity(16);
    let _ = write!(request_id, "{:016x}", record.request_id);
    let client = record.client.as_ref();
    let line = Line {
        time: &time,
        request_id: &request_id,
        jsonrpc_id: record.jsonrpc_id.as_deref(),
        tool: record.tool.as_ref().map(|tool| tool.name.as_str()),
        subject: record.subject.as_deref().unwrap_or("anonymous"),
        client_name: client.and_then(|client| client.name.as_deref()),
        client_version: client.and_then(|client| client.version.as_deref()),
        outcome: record.outcome.as_str(),
        reason: match record.outcome {
            super::Outcome::Refused(reason) => Some(reason.as_str()),
            _ => None,
        },
        error_code: record.error_code,
        upstream_method: record.tool.as_ref().map(|tool| tool.method.as_str()),
        upstream_path: record.tool.as_ref().map(|tool| tool.template.as_str()),
        upstream_status: record.upstream_status,
        attempts: record.attempts,
        duration_us: micros(record.duration),
        upstream_us: micros(record.upstream_duration),
        bytes_in: record.bytes_in,
        bytes_out: record.bytes_out,
    };
    // Serializing plain fields into a vector cannot fail.
    let _ = serde_json::to_writer(&mut *out, &line);
    out.push(b'\n');
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

/// `time` as RFC 3339 in UTC with microseconds: `2026-12-01T12:00:00.000000Z`.
fn rfc3339(time: SystemTime, out: &mut String) {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = since.as_secs();
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days);
    let _ = write!(
        out,
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_micros()
    );
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

//! The audit log: one JSON line per [`CallRecord`], appended to a file (or written to stderr)
//! by a thread of its own, so a call never waits on a disk.
//!
//! Records reach the writer through a bounded queue; when it is full (the disk is slower than
//! the calls) a record is dropped and counted rather than the call kept waiting. Each line is
//! one `write` to a file opened with `O_APPEND`, so lines of concurrent writers (two ferry
//! processes sharing a file, say) never interleave. The file is reopened on request (SIGHUP,
//! after a rotation renamed it away); a write that fails is counted and logged, at most once a
//! minute, and calls go on.

use std::fs::{File, OpenOptions};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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

/// The line a record is written as: JSON and its newline. Written by hand rather than through
/// a serialized struct: the keys are fixed, so only values that may need it are escaped, and
/// this runs once per call.
pub fn write_line(record: &CallRecord, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"time\":\"");
    rfc3339(record.time, out);
    out.extend_from_slice(b"\",\"request_id\":\"");
    for shift in (0..16).rev() {
        out.push(b"0123456789abcdef"[(record.request_id >> (shift * 4)) as usize & 0xf]);
    }
    out.push(b'"');
    if let Some(id) = &record.jsonrpc_id {
        jsonrpc_id(out, id);
    }
    if let Some(method) = record.method {
        text(out, "method", method);
    }
    if let Some(tool) = &record.tool {
        text(out, "tool", &tool.name);
        if !tool.api.is_empty() {
            text(out, "api", &tool.api);
        }
        if !tool.endpoint.is_empty() {
            text(out, "endpoint", &tool.endpoint);
        }
    }
    text(
        out,
        "subject",
        record.subject.as_deref().unwrap_or("anonymous"),
    );
    if let Some(client) = record.client.as_deref().and_then(client_of) {
        if let Some(name) = &client.name {
            text(out, "client_name", cut(name));
        }
        if let Some(version) = &client.version {
            text(out, "client_version", cut(version));
        }
    }
    text(out, "outcome", record.outcome.as_str());
    if let super::Outcome::Refused(reason) = record.outcome {
        text(out, "reason", reason.as_str());
    }
    if let Some(confirmation) = record.confirmation {
        text(out, "confirmation", confirmation);
    }
    if let Some(failure) = record.state_failure {
        text(out, "state_failure", failure.as_str());
    }
    if let Some(code) = record.error_code {
        key(out, "error_code");
        if code < 0 {
            out.push(b'-');
        }
        digits(u64::from(code.unsigned_abs()), out);
    }
    if let Some(status) = &record.operation {
        // A status URL is longer than a name: kept whole up to a bound of its own.
        let mut end = status.len().min(1024);
        while !status.is_char_boundary(end) {
            end -= 1;
        }
        text(out, "operation_status", &status[..end]);
    }
    if let Some(tool) = &record.tool {
        text(out, "upstream_method", &tool.method);
        text(out, "upstream_path", &tool.template);
    }
    if let Some(status) = record.upstream_status {
        number(out, "upstream_status", u64::from(status));
    }
    number(out, "attempts", u64::from(record.attempts));
    number(out, "duration_us", micros(record.duration));
    number(out, "upstream_us", micros(record.upstream_duration));
    number(out, "bytes_in", record.bytes_in);
    number(out, "bytes_out", record.bytes_out);
    out.extend_from_slice(b"}\n");
}

/// `"jsonrpc_id":` the request's id as the client wrote it, when that is at most 128 bytes.
/// A longer one is the caller's bulk, repeated in every record: it is written as a string
/// cut to 128 bytes (a string's text, a number's digits) and `"jsonrpc_id_cut":true`. A
/// string whose escapes are not Unicode text (a lone surrogate, `"\ud800"`) is JSON that
/// most readers refuse, which would lose them the whole line: it is written as a string of
/// what the client wrote, quotes and backslashes included.
fn jsonrpc_id(out: &mut Vec<u8>, id: &RawValue) {
    let written = id.get();
    // A string's text; `None` for a number, and for a string that is not text.
    let decoded: Option<std::borrow::Cow<'_, str>> = written
        .starts_with('"')
        .then(|| serde_json::from_str(written).ok())
        .flatten();
    let readable = decoded.is_some() || !written.starts_with('"');
    if written.len() <= 128 && readable {
        key(out, "jsonrpc_id");
        out.extend_from_slice(written.as_bytes());
        return;
    }
    let value = decoded.unwrap_or(std::borrow::Cow::Borrowed(written));
    text(out, "jsonrpc_id", cut(&value));
    if written.len() > 128 {
        out.extend_from_slice(b",\"jsonrpc_id_cut\":true");
    }
}

/// The client's name and version, as `clientInfo` writes them.
#[derive(serde::Deserialize)]
struct Client<'a> {
    #[serde(borrow, default)]
    name: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    version: Option<std::borrow::Cow<'a, str>>,
}

fn client_of(raw: &RawValue) -> Option<Client<'_>> {
    serde_json::from_str(raw.get()).ok()
}

/// At most 128 bytes of `text`, cut at a character: the client writes it, and it is for the
/// log only.
fn cut(text: &str) -> &str {
    let mut end = text.len().min(128);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn key(out: &mut Vec<u8>, name: &str) {
    out.extend_from_slice(b",\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

/// `"name":"value"`, the value escaped as JSON when it has anything to escape.
fn text(out: &mut Vec<u8>, name: &str, value: &str) {
    key(out, name);
    if value
        .bytes()
        .all(|byte| (0x20..0x7f).contains(&byte) && byte != b'"' && byte != b'\\')
    {
        out.push(b'"');
        out.extend_from_slice(value.as_bytes());
        out.push(b'"');
    } else {
        // Serializing a string into a vector cannot fail.
        let _ = serde_json::to_writer(&mut *out, value);
    }
}

fn number(out: &mut Vec<u8>, name: &str, value: u64) {
    key(out, name);
    digits(value, out);
}

fn digits(mut value: u64, out: &mut Vec<u8>) {
    let mut buffer = [0u8; 20];
    let mut at = buffer.len();
    loop {
        at -= 1;
        buffer[at] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(&buffer[at..]);
}

/// `value` in exactly `width` digits, zero-padded (`value` is below 10^width).
fn padded(value: u64, width: u32, out: &mut Vec<u8>) {
    for place in (0..width).rev() {
        out.push(b'0' + (value / 10u64.pow(place) % 10) as u8);
    }
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

/// `time` as RFC 3339 in UTC with microseconds: `2026-12-01T12:00:00.000000Z`.
pub(crate) fn rfc3339(time: SystemTime, out: &mut Vec<u8>) {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = since.as_secs();
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days);
    padded(year % 10_000, 4, out);
    out.push(b'-');
    padded(month, 2, out);
    out.push(b'-');
    padded(day, 2, out);
    out.push(b'T');
    padded(rest / 3600, 2, out);
    out.push(b':');
    padded(rest % 3600 / 60, 2, out);
    out.push(b':');
    padded(rest % 60, 2, out);
    out.push(b'.');
    padded(u64::from(since.subsec_micros()), 6, out);
    out.push(b'Z');
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

//! Sending finished spans to an OTLP/HTTP collector (`--otlp-endpoint`), so that exporting
//! never slows or fails a call: a call's span goes into a bounded queue with one `try_send`
//! (full, it is dropped and counted); a thread of its own, with its own runtime, takes them
//! out in batches (every interval, or as soon as a batch is full) and posts each with a
//! deadline. A batch the collector does not take is dropped and counted too; the log says so
//! at most once a minute. [`Exporting::shutdown`] posts what is queued, within a deadline.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::otlp::{self, Origin, Span, Value};

/// How spans are batched and sent; [`ExportOptions::default`] is what `ferry serve` uses.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// Spans waiting at most; past that, new ones are dropped.
    pub queue: usize,
    /// Spans in one request at most; a full batch is sent at once.
    pub batch: usize,
    /// Longest a span waits to be sent.
    pub interval: Duration,
    /// Longest one request to the collector may take.
    pub timeout: Duration,
}

impl Default for ExportOptions {
    fn default() -> Self {
        // OpenTelemetry's batch processor defaults (2048 spans, 512 a batch), with a shorter
        // interval: a gateway's spans are small and an operator looks at them while testing.
        ExportOptions {
            queue: 2048,
            batch: 512,
            interval: Duration::from_secs(1),
            timeout: Duration::from_secs(10),
        }
    }
}

/// Where spans go: an http(s) URL, used as given (`http://127.0.0.1:4318/v1/traces`).
#[derive(Debug, Clone)]
pub struct Endpoint(reqwest::Url);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EndpointError {
    #[error("not an absolute URL; give the collector's, as http://127.0.0.1:4318/v1/traces")]
    NotUrl,
    #[error("the scheme must be http or https, as http://127.0.0.1:4318/v1/traces")]
    Scheme,
    #[error("it has no host")]
    NoHost,
    #[error(
        "it carries credentials, which would be sent with every span and shown in logs; \
         put the collector behind a local agent or proxy that adds them"
    )]
    Credentials,
    #[error("it cannot have a fragment")]
    Fragment,
}

impl Endpoint {
    pub fn parse(text: &str) -> Result<Endpoint, EndpointError> {
        let url = reqwest::Url::parse(text).map_err(|_| EndpointError::NotUrl)?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(EndpointError::Scheme);
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(EndpointError::NoHost);
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(EndpointError::Credentials);
        }
        if url.fragment().is_some() {
            return Err(EndpointError::Fragment);
        }
        Ok(Endpoint(url))
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl std::str::FromStr for Endpoint {
    type Err = EndpointError;

    fn from_str(text: &str) -> Result<Endpoint, EndpointError> {
        Endpoint::parse(text)
    }
}

/// Where a finished span is handed over; cheap to clone, shared by every serving thread.
#[derive(Debug, Clone)]
pub struct Exporter {
    queue: SyncSender<Vec<u8>>,
    shared: Arc<Shared>,
}

/// The exporting thread, to be flushed and stopped with [`Exporting::shutdown`].
#[derive(Debug)]
pub struct Exporting {
    shared: Arc<Shared>,
    done: tokio::sync::oneshot::Receiver<()>,
}

#[derive(Debug)]
struct Shared {
    /// Spans queued and not yet taken out.
    queued: AtomicUsize,
    batch: usize,
    /// Wakes the thread before its interval: a full batch, or shutdown.
    wake: SyncSender<()>,
    stopping: AtomicBool,
    dropped: AtomicU64,
    exported: AtomicU64,
}

/// Starts the exporting thread for `endpoint`.
pub fn start(endpoint: Endpoint, options: ExportOptions) -> std::io::Result<(Exporter, Exporting)> {
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(options.timeout)
        .user_agent(concat!("ferry/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(std::io::Error::other)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (queue, spans) = mpsc::sync_channel(options.queue.max(1));
    let (wake, woken) = mpsc::sync_channel(1);
    let shared = Arc::new(Shared {
        queued: AtomicUsize::new(0),
        batch: options.batch.max(1),
        wake,
        stopping: AtomicBool::new(false),
        dropped: AtomicU64::new(0),
        exported: AtomicU64::new(0),
    });
    let (finished, done) = tokio::sync::oneshot::channel();
    let thread = Thread {
        endpoint,
        client,
        origin: Origin::new(
            &[
                ("service.name", Value::Str("ferry")),
                ("service.version", Value::Str(env!("CARGO_PKG_VERSION"))),
            ],
            "ferry",
            env!("CARGO_PKG_VERSION"),
        ),
        spans,
        woken,
        shared: shared.clone(),
        interval: options.interval,
        failed: 0,
        last_logged: None,
        last_dropped: 0,
    };
    std::thread::Builder::new()
        .name("ferry-traces".into())
        .spawn(move || {
            thread.run(&runtime);
            let _ = finished.send(());
        })?;
    Ok((
        Exporter {
            queue,
            shared: shared.clone(),
        },
        Exporting { shared, done },
    ))
}

impl Exporter {
    /// Queues `span`, or drops and counts it when the queue is full: never waits.
    pub fn export(&self, span: &Span<'_>) {
        let bytes = otlp::encode_span(span);
        match self.queue.try_send(bytes) {
            Ok(()) => {
                let queued = self.shared.queued.fetch_add(1, Ordering::Relaxed) + 1;
                if queued == self.shared.batch {
                    let _ = self.shared.wake.try_send(());
                }
            }
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.shared.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Spans dropped so far: the queue was full, or the collector did not take them.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// Spans the collector accepted so far.
    pub fn exported(&self) -> u64 {
        self.shared.exported.load(Ordering::Relaxed)
    }
}

impl Exporting {
    /// Sends what is queued and stops the thread, waiting at most `deadline`; spans not sent
    /// by then are lost, and the log says how many were dropped in all.
    pub async fn shutdown(self, deadline: Duration) {
        self.shared.stopping.store(true, Ordering::Relaxed);
        let _ = self.shared.wake.try_send(());
        if tokio::time::timeout(deadline, self.done).await.is_err() {
            tracing::warn!(
                deadline_ms = deadline.as_millis() as u64,
                "spans not all exported before the shutdown deadline"
            );
        }
        let dropped = self.shared.dropped.load(Ordering::Relaxed);
        if dropped > 0 {
            tracing::info!(dropped, "spans dropped while running");
        }
    }
}

/// Nanoseconds since the Unix epoch, as OTLP times spans.
pub fn now_unix_nano() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64)
}

/// How often at most the log says spans were lost.
const LOG_EVERY: Duration = Duration::from_secs(60);

struct Thread {
    endpoint: Endpoint,
    client: reqwest::Client,
    origin: Origin,
    spans: Receiver<Vec<u8>>,
    woken: Receiver<()>,
    shared: Arc<Shared>,
    interval: Duration,
    /// Requests the collector did not take since the last log line.
    failed: u64,
    last_logged: Option<Instant>,
    /// `dropped` when the log last spoke.
    last_dropped: u64,
}

impl Thread {
    /// Waits (blocking: this thread serves nothing else) for the interval or a wake-up, then
    /// posts what is queued on `runtime`.
    fn run(mut self, runtime: &tokio::runtime::Runtime) {
        loop {
            let signal = self.woken.recv_timeout(self.interval);
            let stopping = self.shared.stopping.load(Ordering::Relaxed)
                || signal == Err(RecvTimeoutError::Disconnected);
            loop {
                let batch: Vec<Vec<u8>> = self.spans.try_iter().take(self.shared.batch).collect();
                if batch.is_empty() {
                    break;
                }
                self.shared.queued.fetch_sub(batch.len(), Ordering::Relaxed);
                let full = batch.len() == self.shared.batch;
                runtime.block_on(self.post(&batch));
                if !full {
                    break;
                }
            }
            self.report(stopping);
            if stopping {
                return;
            }
        }
    }

    async fn post(&mut self, batch: &[Vec<u8>]) {
        let body = otlp::encode_request(&self.origin, batch);
        let sent = self
            .client
            .post(self.endpoint.0.clone())
            .header(http::header::CONTENT_TYPE, "application/x-protobuf")
            .body(body)
            .send()
            .await;
        let count = batch.len() as u64;
        match sent {
            Ok(response) if response.status().is_success() => {
                // The body (a partial success, at most) is read so the connection is reused.
                let _ = response.bytes().await;
                self.shared.exported.fetch_add(count, Ordering::Relaxed);
            }
            Ok(response) => {
                self.fail(
                    count,
                    format!("the collector answered {}", response.status()),
                );
            }
            Err(error) => {
                let reason = if error.is_timeout() {
                    "the collector did not answer in time".to_owned()
                } else if error.is_connect() {
                    "cannot connect to the collector".to_owned()
                } else {
                    "the request to the collector failed".to_owned()
                };
                self.fail(count, reason);
            }
        }
    }

    fn fail(&mut self, count: u64, reason: String) {
        self.shared.dropped.fetch_add(count, Ordering::Relaxed);
        self.failed += 1;
        if self
            .last_logged
            .is_none_or(|logged| logged.elapsed() >= LOG_EVERY)
        {
            self.log(&reason);
        }
    }

    /// Says, at most once a minute, how many spans were lost since it last did.
    fn report(&mut self, now: bool) {
        let dropped = self.shared.dropped.load(Ordering::Relaxed);
        if dropped > self.last_dropped
            && (now
                || self
                    .last_logged
                    .is_none_or(|logged| logged.elapsed() >= LOG_EVERY))
        {
            self.log("the queue was full or the collector refused them");
        }
    }

    fn log(&mut self, reason: &str) {
        let dropped = self.shared.dropped.load(Ordering::Relaxed);
        tracing::warn!(
            endpoint = %self.endpoint.as_str(),
            reason,
            dropped_since = dropped - self.last_dropped,
            failed_requests = self.failed,
            "spans dropped"
        );
        self.last_dropped = dropped;
        self.failed = 0;
        self.last_logged = Some(Instant::now());
    }
}

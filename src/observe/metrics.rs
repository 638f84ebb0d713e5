//! The metrics: counters, gauges and histograms read from each [`CallRecord`], kept by the
//! `metrics` crate's Prometheus recorder and rendered in the Prometheus text format.
//!
//! The recorder is ferry's own, not installed globally, so two servers in one process (the
//! tests) keep their counts apart. Every handle is looked up once: the server-wide ones when
//! the metrics are made, a tool's the first time the tool needs each (a series that was never
//! moved is not exposed, so a large catalog does not fill every scrape with zeros). Moving a
//! handle is an atomic operation; no lock is taken per call.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use ::metrics::{
    Counter, Gauge, Histogram, Label, Unit, counter, describe_counter, describe_gauge,
    describe_histogram, gauge, histogram,
};
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};

use super::{CallRecord, Outcome, Reason, StateFailure};

/// Upper bounds of `ferry_call_duration_seconds`: ferry's own time is microseconds to
/// milliseconds.
const OWN_BUCKETS: [f64; 14] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0,
];
/// Upper bounds of `ferry_upstream_duration_seconds`.
const UPSTREAM_BUCKETS: [f64; 14] = [
    0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Where `outcome` is counted among a tool's calls (`ToolHandles::calls`); `None` for a call
/// that reached no tool.
fn tool_outcome(outcome: Outcome) -> Option<usize> {
    Some(match outcome {
        Outcome::Ok => 0,
        Outcome::ApiError => 1,
        Outcome::InvalidArguments => 2,
        Outcome::Refused(_) => 3,
        Outcome::UpstreamFailure => 4,
        Outcome::GatewayFailure => 5,
        Outcome::Unconfirmed => 6,
        Outcome::ContractBroken => 7,
        Outcome::ProtocolError => return None,
    })
}

/// ferry's metrics. Cheap to clone.
#[derive(Clone)]
pub struct Metrics(Arc<Inner>);

struct Inner {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
    server: ServerHandles,
}

/// The handles of the server-wide series, made with the metrics.
struct ServerHandles {
    in_flight: Gauge,
    tools_served: Gauge,
    refused: [Counter; 7],
    /// By [`StateFailure`], in its order.
    state_failures: [Counter; 3],
    reloads_ok: Counter,
    reloads_failed: Counter,
    audit_dropped: Counter,
    audit_write_errors: Counter,
    /// The digest of the catalog served and its `ferry_catalog_info` series, set to 0 when a
    /// catalog of another digest replaces it.
    catalog_info: Mutex<Option<(String, Gauge)>>,
}

/// One tool's handles, each made the first time it is needed.
#[derive(Debug)]
pub struct ToolHandles {
    /// `tool`, and `api` and `endpoint` where the curation lists several.
    labels: Vec<Label>,
    calls: [OnceLock<Counter>; 8],
    classes: [OnceLock<Counter>; 5],
    retries: OnceLock<Counter>,
    duration: OnceLock<Histogram>,
    upstream: OnceLock<Histogram>,
}

impl ToolHandles {
    /// The tool's labels and `key`.
    fn with(&self, key: &'static str, value: &'static str) -> Vec<Label> {
        let mut labels = self.labels.clone();
        labels.push(Label::new(key, value));
        labels
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let builder = PrometheusBuilder::new();
        // Both bucket lists are non-empty, so neither call can fail.
        let builder = builder
            .set_buckets_for_metric(
                Matcher::Full("ferry_call_duration_seconds".into()),
                &OWN_BUCKETS,
            )
            .and_then(|builder| {
                builder.set_buckets_for_metric(
                    Matcher::Full("ferry_upstream_duration_seconds".into()),
                    &UPSTREAM_BUCKETS,
                )
            })
            .unwrap_or_else(|_| PrometheusBuilder::new());
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        let server = ::metrics::with_local_recorder(&recorder, || {
            describe();
            ServerHandles {
                in_flight: gauge!("ferry_calls_in_flight"),
                tools_served: gauge!("ferry_tools_served"),
                refused: Reason::ALL
                    .map(|reason| counter!("ferry_refused_total", "reason" => reason.as_str())),
                state_failures: StateFailure::ALL.map(|failure| {
                    counter!("ferry_state_failures_total", "check" => failure.check(), "rule" => failure.rule())
                }),
                reloads_ok: counter!("ferry_reloads_total", "result" => "ok"),
                reloads_failed: counter!("ferry_reloads_total", "result" => "failed"),
                audit_dropped: counter!("ferry_audit_dropped_total"),
                audit_write_errors: counter!("ferry_audit_write_errors_total"),
                catalog_info: Mutex::new(None),
            }
        });
        Metrics(Arc::new(Inner {
            recorder,
            handle,
            server,
        }))
    }

    /// The metrics in the Prometheus text format.
    pub fn render(&self) -> String {
        self.0.handle.render()
    }

    /// Folds the histograms' recent samples into their buckets; run every few seconds, or
    /// samples pile up between scrapes.
    pub fn upkeep(&self) {
        self.0.handle.run_upkeep();
    }

    pub fn audit_dropped(&self) -> Counter {
        self.0.server.audit_dropped.clone()
    }

    pub fn audit_write_errors(&self) -> Counter {
        self.0.server.audit_write_errors.clone()
    }

    pub(super) fn in_flight(&self) -> &Gauge {
        &self.0.server.in_flight
    }

    /// The handles of the tool `name` of the API `api`, served by the endpoint `endpoint`
    /// (each empty where the curation lists no `apis:` or `endpoints:`, and then no label).
    pub(super) fn tool(&self, name: &str, api: &str, endpoint: &str) -> ToolHandles {
        let mut labels = vec![Label::new("tool", name.to_owned())];
        for (key, value) in [("api", api), ("endpoint", endpoint)] {
            if !value.is_empty() {
                labels.push(Label::new(key, value.to_owned()));
            }
        }
        ToolHandles {
            labels,
            calls: Default::default(),
            classes: Default::default(),
            retries: OnceLock::new(),
            duration: OnceLock::new(),
            upstream: OnceLock::new(),
        }
    }

    pub(super) fn state_failed(&self, failure: StateFailure) {
        self.0.server.state_failures[failure as usize].increment(1);
    }

    pub(super) fn record(&self, record: &CallRecord, tool: Option<&ToolHandles>) {
        if let Outcome::Refused(reason) = record.outcome {
            self.0.server.refused[reason as usize].increment(1);
        }
        if let Some(failure) = record.state_failure {
            self.state_failed(failure);
        }
        let Some(tool) = tool else {
            return;
        };
        if let Some(index) = tool_outcome(record.outcome) {
            tool.calls[index]
                .get_or_init(|| {
                    self.register(|| {
                        counter!(
                            "ferry_tool_calls_total",
                            tool.with("outcome", record.outcome.as_str())
                        )
                    })
                })
                .increment(1);
        }
        let own = record.duration.saturating_sub(record.upstream_duration);
        tool.duration
            .get_or_init(|| {
                self.register(|| histogram!("ferry_call_duration_seconds", tool.labels.clone()))
            })
            .record(own.as_secs_f64());
        if record.attempts > 0 {
            tool.upstream
                .get_or_init(|| {
                    self.register(|| {
                        histogram!("ferry_upstream_duration_seconds", tool.labels.clone())
                    })
                })
                .record(record.upstream_duration.as_secs_f64());
        }
        if record.retries > 0 {
            tool.retries
                .get_or_init(|| {
                    self.register(|| counter!("ferry_upstream_retries_total", tool.labels.clone()))
                })
                .increment(u64::from(record.retries));
        }
        if let Some(status) = record.upstream_status
            && let Some(index) = (status / 100).checked_sub(1).map(usize::from)
            && let Some(slot) = tool.classes.get(index)
        {
            slot.get_or_init(|| {
                self.register(|| {
                    counter!(
                        "ferry_upstream_responses_total",
                        tool.with("class", CLASSES[index])
                    )
                })
            })
            .increment(1);
        }
    }

    pub(super) fn catalog(&self, tools: usize, digest: &str) {
        self.0.server.tools_served.set(tools as f64);
        let info = self.register(|| gauge!("ferry_catalog_info", "digest" => digest.to_owned()));
        info.set(1.0);
        let mut served = self
            .0
            .server
            .catalog_info
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // A reload that changed nothing serves the same series: it stays at 1.
        if let Some((previous, gauge)) = served.replace((digest.to_owned(), info))
            && previous != digest
        {
            gauge.set(0.0);
        }
    }

    pub(super) fn reloaded(&self, ok: bool) {
        match ok {
            true => self.0.server.reloads_ok.increment(1),
            false => self.0.server.reloads_failed.increment(1),
        }
    }

    /// Runs `make` (a `metrics` macro) against ferry's recorder.
    fn register<T>(&self, make: impl FnOnce() -> T) -> T {
        ::metrics::with_local_recorder(&self.0.recorder, make)
    }
}

const CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

/// Every metric's help text, given once.
fn describe() {
    describe_counter!(
        "ferry_tool_calls_total",
        "tools/call requests answered, by tool and outcome"
    );
    describe_histogram!(
        "ferry_call_duration_seconds",
        Unit::Seconds,
        "time ferry itself spent on a call, the upstream's time excluded"
    );
    describe_histogram!(
        "ferry_upstream_duration_seconds",
        Unit::Seconds,
        "time a call spent waiting on the upstream, every attempt together"
    );
    describe_counter!(
        "ferry_upstream_responses_total",
        "upstream answers passed on, by tool and status class"
    );
    describe_counter!(
        "ferry_upstream_retries_total",
        "requests sent upstream beyond each call's first"
    );
    describe_gauge!(
        "ferry_calls_in_flight",
        "tools/call requests being answered"
    );
    describe_counter!(
        "ferry_refused_total",
        "requests refused before anything was sent upstream, by reason"
    );
    describe_counter!(
        "ferry_state_failures_total",
        "calls for which the state replicas share did not answer in time, by what could not be checked and whether the call went on (open) or was refused (closed)"
    );
    describe_gauge!("ferry_tools_served", "tools in the catalog served");
    describe_counter!("ferry_reloads_total", "catalog reloads, by result");
    describe_gauge!(
        "ferry_catalog_info",
        "1 for the digest of the catalog served"
    );
    describe_counter!(
        "ferry_audit_dropped_total",
        "audit records dropped because the writer was behind"
    );
    describe_counter!(
        "ferry_audit_write_errors_total",
        "audit records that could not be written"
    );
}

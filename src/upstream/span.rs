//! One upstream attempt as a span (kind CLIENT), named and attributed as OpenTelemetry's
//! HTTP client conventions say: the method and the path template, never the filled path
//! (it can hold personal data), the status, and what went wrong.

use http::StatusCode;

use super::Part;
use crate::catalog::OperationPlan;
use crate::client::{Failure, Response};
use crate::trace::otlp::{self, Value};
use crate::trace::{self, Exporter, SpanId, export};

/// What an attempt ended with, as a span says it.
pub(super) struct Ended {
    pub(super) status: Option<StatusCode>,
    /// What failed, when no status says it (`error.type` is then the status for 4xx and
    /// 5xx).
    pub(super) error: Option<&'static str>,
}

impl Ended {
    /// An attempt that ran out of the call's time.
    pub(super) const TIMEOUT: Ended = Ended {
        status: None,
        error: Some("timeout"),
    };

    /// A stream answered with `status` that stopped before its end.
    pub(super) fn stopped(status: http::StatusCode) -> Ended {
        Ended {
            status: Some(status),
            error: Some("stream_stopped"),
        }
    }

    pub(super) fn of(attempt: &Result<Response, Failure>) -> Ended {
        let error = match attempt {
            Ok(response) => {
                return Ended {
                    status: Some(response.status),
                    error: None,
                };
            }
            Err(Failure::Body { status, .. }) => {
                return Ended {
                    status: Some(*status),
                    error: Some("response_body_error"),
                };
            }
            Err(Failure::Connect { timeout: true, .. } | Failure::Closed { timeout: true, .. }) => {
                "timeout"
            }
            Err(Failure::Connect { .. }) => "connect_error",
            Err(Failure::Head(..)) => "malformed_response",
            Err(Failure::Closed { .. }) => "connection_closed",
        };
        Ended {
            status: None,
            error: Some(error),
        }
    }
}

/// One attempt's place: its span under the call's, its number (0 for the first) and when
/// it began.
pub(super) struct Begun<'a> {
    pub(super) context: &'a trace::Context,
    pub(super) span_id: SpanId,
    pub(super) resend: u32,
    pub(super) start_unix_nano: u64,
}

/// Exports the attempt `begun` of a call of `tool`, which ended as `ended`.
pub(super) fn export_attempt(
    exporter: &Exporter,
    part: &Part,
    tool: &OperationPlan,
    begun: &Begun<'_>,
    ended: &Ended,
) {
    let method = tool.plan.method.as_str();
    let template = tool.plan.path.as_str();
    let mut attributes: [(&str, Value<'_>); 7] = [("", Value::Int(0)); 7];
    let mut count = 0;
    let mut push = |key, value| {
        attributes[count] = (key, value);
        count += 1;
    };
    push("http.request.method", Value::Str(method));
    push("url.template", Value::Str(template));
    if let Some(host) = part.base_url.host_str() {
        push("server.address", Value::Str(host));
    }
    if let Some(port) = part.base_url.port_or_known_default() {
        push("server.port", Value::Int(i64::from(port)));
    }
    if begun.resend > 0 {
        push(
            "http.request.resend_count",
            Value::Int(i64::from(begun.resend)),
        );
    }
    if let Some(status) = ended.status {
        push(
            "http.response.status_code",
            Value::Int(i64::from(status.as_u16())),
        );
    }
    let status = ended.status;
    let error = ended.error.or_else(|| {
        status
            .as_ref()
            .filter(|status| status.as_u16() >= 400)
            .map(StatusCode::as_str)
    });
    if let Some(error) = error {
        push("error.type", Value::Str(error));
    }
    let context = begun.context;
    exporter.export(&otlp::Span {
        trace_id: context.trace_id,
        span_id: begun.span_id,
        parent_id: Some(context.span_id),
        trace_state: context.state.as_ref().and_then(|state| state.to_str().ok()),
        name: &[method, " ", template],
        kind: otlp::Kind::Client,
        start_unix_nano: begun.start_unix_nano,
        end_unix_nano: export::now_unix_nano(),
        attributes: &attributes[..count],
        error: error.is_some(),
        flags: u32::from(context.flags & trace::SAMPLED) | otlp::CONTEXT_HAS_IS_REMOTE,
    });
}

//! A call refused by a rate limit: what the caller is told, in the text the model reads and
//! in `dev.ferry/rateLimit` (a call result's `_meta`, a refused task look's error data).

use serde_json::{Value, json};

use super::{Block, CallResult};
use crate::catalog::Rate;

/// A call over a rate limit, as the caller is told of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::mcp) struct RateLimited {
    /// Whole seconds until the call would fit, at least 1.
    pub retry_after_seconds: u64,
    pub limit: Rate,
    /// Whose budget: `tool`, or the class's (`reads`, `writes`).
    pub scope: &'static str,
    /// The budgets could not be read (the shared state did not answer) and the call was
    /// refused for it (`--state-on-failure closed`), not for being over.
    pub unchecked: bool,
}

impl RateLimited {
    /// What `_meta["dev.ferry/rateLimit"]` holds (and a refused `tasks/cancel`'s error data):
    /// when to try again, which limit and whose budget, and `unchecked` when the budgets
    /// could not be read.
    pub(in crate::mcp) fn meta(&self) -> Value {
        let mut meta = json!({
            "retryAfterSeconds": self.retry_after_seconds,
            "limit": self.limit.to_string(),
            "scope": self.scope,
        });
        if self.unchecked {
            meta["unchecked"] = true.into();
        }
        meta
    }

    /// What the caller is told: whose budget, that nothing was sent to the API, and when to
    /// try again.
    pub(in crate::mcp) fn told(&self) -> String {
        let budget = match self.scope {
            "reads" => "the read tools, together,",
            "writes" => "the write tools, together,",
            "step" => "a tool one of this workflow's steps calls, alone or through a workflow,",
            _ => "this tool",
        };
        let seconds = self.retry_after_seconds;
        let unit = if seconds == 1 { "second" } else { "seconds" };
        if self.unchecked {
            format!(
                "rate limit not checked: each caller may call {budget} {}, and the budgets the servers share could not be read in time, so the request was refused; nothing was sent to the API: try again in {seconds} {unit}",
                self.limit
            )
        } else {
            format!(
                "rate limit reached: each caller may call {budget} {}; nothing was sent to the API: try again in {seconds} {unit}",
                self.limit
            )
        }
    }
}

/// The result for a call over a rate limit: nothing was sent upstream, and the text and
/// `_meta["dev.ferry/rateLimit"]` say when to try again.
pub(in crate::mcp) fn rate_limited(limited: RateLimited) -> CallResult<'static> {
    let text = limited.told();
    CallResult {
        content: vec![Block::Text(text)],
        is_error: true,
        rate_limit: Some(limited),
        ..CallResult::default()
    }
}

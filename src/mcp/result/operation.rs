//! The words for a long-running operation: one ferry followed to a failure or a
//! cancellation, and one it did not follow to its end. The API accepted the operation in
//! both, so neither is said to have failed unless the API says so: what the model must do
//! next (nothing is lost, where the status is, that calling again starts another one) is in
//! the text it reads.

use serde_json::json;

use super::{Block, CallResult};
use crate::catalog::long_running::State;
use crate::upstream::{Followed, Pending, Unfollowed};

/// `_meta["dev.ferry/result"].operation`: where the status was, and how it ended.
pub(super) fn meta(followed: &Followed) -> serde_json::Value {
    json!({"status": followed.status, "state": followed.state.as_str()})
}

/// `result`, the answer that ended the operation `followed`, said as the operation's end:
/// a failure or a cancellation the API reported is an error result led by what it means.
pub(super) fn ended(result: &mut CallResult<'_>, followed: &Followed) {
    let lead = match followed.state {
        State::Failed => "the operation failed",
        State::Cancelled => "the operation was cancelled",
        State::Working | State::Completed => return,
    };
    result.is_error = true;
    result.content.insert(
        0,
        Block::Text(format!(
            "{lead}, as its status at {} says (below, as the API answered)",
            followed.status
        )),
    );
}

/// The text for an operation the API accepted that ferry did not follow to its end.
pub(super) fn pending(pending: &Pending) -> String {
    let status = &pending.status;
    match pending.why {
        Unfollowed::Running { timeout_ms } => format!(
            "the API accepted the operation and it is still running: it had not finished within this tool's timeout ({timeout_ms} ms), so ferry stopped waiting. Nothing is lost: its status is at {status}. Calling this tool again starts another operation; to see how this one goes, read its status there (a GET on this API)"
        ),
        Unfollowed::Task => format!(
            "the API accepted the operation and it is running: its status is at {status}, which is longer than a task can carry, so ferry does not follow it. Calling this tool again starts another operation"
        ),
        Unfollowed::OtherOrigin => format!(
            "the API accepted the operation and names {status} for it, on another origin than the API's, which ferry never calls: the operation was not followed there. Calling this tool again starts another operation"
        ),
    }
}

/// The `CallToolResult` a task holds once its operation ended: `outcome` written as a
/// modern call's result would be.
pub(in crate::mcp) fn task_result(
    tool: &str,
    outcome: crate::upstream::Outcome,
) -> Result<serde_json::Value, serde_json::Error> {
    let result = super::outcome_result(tool, outcome);
    let mut out = Vec::with_capacity(512);
    super::written::Written {
        result: &result,
        result_type: Some("complete"),
        server_info: None,
        wrap: false,
    }
    .write(&mut out)?;
    serde_json::from_slice(&out)
}

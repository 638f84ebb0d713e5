//! `notifications/progress` for a request that asked for it with `_meta.progressToken`: a
//! streamed upstream answer tells how far it has come as its items arrive. The transport
//! hands the server a [`Notify`] that carries such notifications back on the request's way
//! (an SSE response on HTTP, a line on stdio) before its answer.

use bytes::Bytes;
use serde_json::value::RawValue;

use crate::upstream;

/// Where notifications about one request go: each is one JSON-RPC message.
pub type Notify = tokio::sync::mpsc::UnboundedSender<Bytes>;

/// Tells a request's progress token how far its call has come.
pub(super) struct Reporter<'r> {
    pub(super) token: &'r RawValue,
    pub(super) notify: &'r Notify,
}

impl upstream::Progress for Reporter<'_> {
    /// `progress` is the bytes come so far and `total` the tool's size cap, the most that
    /// will be read, so that it only grows; the message counts the items.
    fn report(&self, items: u64, bytes: u64, limit: u64) {
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

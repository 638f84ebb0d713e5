//! The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) over long-running
//! operations: for a modern client that declares the extension, a call of a long-running
//! tool that the API accepts with `202` answers a task (`resultType: "task"`), and the
//! client follows it with `tasks/get` and may end it with `tasks/cancel`.
//!
//! **Stateless.** The task id is the task: the API's id, the tool, the status location as
//! the API named it and when the task was made, sealed with an HMAC under the key that seals
//! confirmation state (`confirm_key`) over them and the caller's subject. Any replica
//! sharing the key answers `tasks/get` for a task another made, a reload loses none, and
//! ferry holds nothing that grows with tasks. An id that does not open (tampered, sealed
//! under another key, for another subject, expired after [`TTL_SECONDS`], or naming a tool
//! this endpoint does not serve as long-running) is an unknown task, and nothing is
//! fetched.
//!
//! **Each `tasks/get` is one look**: one GET of the status location (with the API's own
//! credential, on its origin, within the tool's timeout and size cap), and when the
//! operation ended, its final result is fetched as a call that followed it would have.
//! A look (`tasks/get` or `tasks/cancel`) is spent from the tool's rate limits as a call is:
//! over them the API is not asked, and `tasks/get` answers the task `working`, saying why,
//! with `pollIntervalMs` the time until the budget has room again; a refused look is recorded
//! as a refusal of its method (not a call of its tool).
//! What the extension leaves to the server, ferry chooses so: a task whose operation
//! failed or was cancelled by the API is `completed` with an `isError` result (the
//! extension's `failed` is for a JSON-RPC error, which a call of ferry's never is), a task
//! cancelled with `tasks/cancel` and so reported by the API is `cancelled`; `pollIntervalMs`
//! of a look made is the API's `Retry-After`, else the tool's `interval_ms`; `ttlMs` is fixed; no
//! `tasks/update` is ever needed (ferry never asks for input in a task), so it is refused.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::confirm::ConfirmKey;
use super::envelope::{MetaString, Params};
use super::failure::Failure;
use super::{META_SERVER_INFO, Outgoing, Scope, Server, respond_value, result};
use crate::auth::Principal;
use crate::catalog::long_running::State;
use crate::catalog::{OperationPlan, Runs};
use crate::run::follow::{Look, Polled, look};
use crate::upstream::{self, CallError, Pending};

#[cfg(test)]
mod tests;

/// The extension's identifier, as clients and servers declare it.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// The methods that look at a task's operation, each a request to the API.
pub const LOOKS: [&str; 2] = ["tasks/get", "tasks/cancel"];
/// How long a task id stays valid: a day from the call that made it.
pub const TTL_SECONDS: u64 = 86_400;
/// The longest status location a task id carries; a longer one is followed within the
/// call instead.
pub const MAX_STATUS_BYTES: usize = 2048;
/// Domain separation: a task id's MAC is never valid for anything else.
const MAC_CONTEXT: &[u8] = b"ferry task v1\0";
const VERSION: u8 = 1;
const DIGEST_LEN: usize = 32;
/// The longest id that can open: a bound before any decoding.
const MAX_ID_CHARS: usize = 4096;

/// What a task id holds: the operation the API accepted, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// The tool whose call made it.
    pub tool: String,
    /// The API the tool calls, by its id.
    pub api: String,
    /// The status location, as the API named it.
    pub status: String,
    /// When the call made it, in seconds since the Unix epoch.
    pub created: u64,
}

/// Why a task id does not open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unknown {
    /// Not an id ferry writes, or altered, or sealed under another key.
    Forged,
    /// Made for another caller.
    OtherCaller,
    /// Older than [`TTL_SECONDS`].
    Expired,
}

/// Whether `capabilities` (`_meta`'s `clientCapabilities`, as received) declares the
/// extension under `extensions`.
pub fn declared(capabilities: Option<&RawValue>) -> bool {
    #[derive(serde::Deserialize)]
    struct Declared<'a> {
        #[serde(borrow, default)]
        extensions: Option<std::collections::HashMap<&'a str, serde::de::IgnoredAny>>,
    }
    capabilities
        .and_then(|raw| serde_json::from_str::<Declared<'_>>(raw.get()).ok())
        .and_then(|declared| declared.extensions)
        .is_some_and(|extensions| extensions.contains_key(EXTENSION))
}

/// The id of `task`, made for `subject`; `None` when its parts are too long to carry.
pub fn seal(key: &ConfirmKey, subject: &str, task: &Task) -> Option<String> {
    let tool = u8::try_from(task.tool.len()).ok()?;
    let api = u8::try_from(task.api.len()).ok()?;
    if task.status.len() > MAX_STATUS_BYTES {
        return None;
    }
    let mut payload = Vec::with_capacity(64 + task.tool.len() + task.api.len() + task.status.len());
    payload.push(VERSION);
    payload.extend_from_slice(&task.created.to_be_bytes());
    payload.extend_from_slice(&Sha256::digest(subject.as_bytes()));
    payload.push(tool);
    payload.extend_from_slice(task.tool.as_bytes());
    payload.push(api);
    payload.extend_from_slice(task.api.as_bytes());
    payload.extend_from_slice(task.status.as_bytes());
    let mac = key.mac(MAC_CONTEXT, &payload);
    payload.extend_from_slice(&mac);
    Some(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(payload))
}

/// The task `id` holds, for `subject` at `now` (seconds since the Unix epoch). The MAC is
/// checked first, so nothing in a forged id is believed.
pub fn open(key: &ConfirmKey, id: &str, subject: &str, now: u64) -> Result<Task, Unknown> {
    if id.len() > MAX_ID_CHARS {
        return Err(Unknown::Forged);
    }
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(id)
        .map_err(|_| Unknown::Forged)?;
    let Some(split) = bytes.len().checked_sub(DIGEST_LEN) else {
        return Err(Unknown::Forged);
    };
    let (payload, tag) = bytes.split_at(split);
    if !key.verify(MAC_CONTEXT, payload, tag) {
        return Err(Unknown::Forged);
    }
    let mut reader = Reader(payload);
    if reader.take(1) != Some(&[VERSION][..]) {
        return Err(Unknown::Forged);
    }
    let created = reader
        .take(8)
        .and_then(|bytes| bytes.try_into().ok())
        .map(u64::from_be_bytes)
        .ok_or(Unknown::Forged)?;
    let caller = reader.take(DIGEST_LEN).ok_or(Unknown::Forged)?;
    let tool = reader.text().ok_or(Unknown::Forged)?;
    let api = reader.text().ok_or(Unknown::Forged)?;
    let status = std::str::from_utf8(reader.0).map_err(|_| Unknown::Forged)?;
    if now > created.saturating_add(TTL_SECONDS) {
        return Err(Unknown::Expired);
    }
    if caller != &Sha256::digest(subject.as_bytes())[..] {
        return Err(Unknown::OtherCaller);
    }
    Ok(Task {
        tool,
        api,
        status: status.to_string(),
        created,
    })
}

/// A verified payload, read in order.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (taken, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(taken)
    }

    /// A string led by its length in one byte.
    fn text(&mut self) -> Option<String> {
        let len = usize::from(*self.take(1)?.first()?);
        String::from_utf8(self.take(len)?.to_vec()).ok()
    }
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// A call that made a task: its id, and what it holds.
#[derive(Debug)]
pub(super) struct Created {
    pub(super) id: String,
    pub(super) task: Task,
}

impl Server {
    /// The task a call of `tool` (calling `operation`) by `principal` made when the API
    /// accepted it (`pending`); `None` when it cannot be carried in an id.
    pub(super) fn task_of(
        &self,
        tool: &str,
        operation: &OperationPlan,
        principal: &Principal,
        pending: &Pending,
    ) -> Option<Created> {
        let task = Task {
            tool: tool.to_string(),
            api: operation.api.clone(),
            status: pending.status.clone(),
            created: now(),
        };
        let id = seal(self.confirmer.key(), &principal.subject, &task)?;
        Some(Created { id, task })
    }

    /// `tasks/get` and `tasks/cancel`: open the id, then look at the operation once. Only a
    /// request that declares the extension is answered (-32021 otherwise); `tasks/update`
    /// is -32602, since ferry's tasks follow an API's operation and never wait for input.
    pub(super) async fn task_request(
        &self,
        id: &RawValue,
        method: &str,
        params: &Params<'_>,
        scope: Scope<'_, '_>,
    ) -> Result<Outgoing, Failure> {
        let trace = &scope.trace.context;
        if !declared(params.round.capabilities) {
            return Err(Failure::missing_extension(method, EXTENSION));
        }
        if method == "tasks/update" {
            return Err(Failure::invalid_params(
                "no task of yours waits for input: ferry's tasks never ask for any",
            ));
        }
        let task_id = match &params.task_id {
            Some(MetaString::Text(task_id)) => task_id.as_ref(),
            Some(MetaString::NotText) => {
                return Err(Failure::invalid_params("params.taskId is not a string"));
            }
            None => return Err(Failure::invalid_params("params.taskId is missing")),
        };
        let principal = scope.principal.unwrap_or(Principal::anonymous_ref());
        let unknown = |why: &str| {
            tracing::info!(user = %principal.subject, why, "task refused; nothing fetched");
            Failure::invalid_params("unknown task: no task of yours has this id")
        };
        let task =
            open(self.confirmer.key(), task_id, &principal.subject, now()).map_err(|refusal| {
                unknown(match refusal {
                    Unknown::Forged => "forged",
                    Unknown::OtherCaller => "other caller",
                    Unknown::Expired => "expired",
                })
            })?;
        // The tool must be served here, as a long-running operation of the same API, and
        // the caller may still call it.
        let index = *self
            .by_name
            .get(&task.tool)
            .ok_or_else(|| unknown("tool not served"))?;
        let served = &self.tools[index];
        let (Runs::Operation(operation), [route]) = (&served.tool.runs, served.routes.as_slice())
        else {
            return Err(unknown("tool not served"));
        };
        if operation.api != task.api || operation.long_running.is_none() {
            return Err(unknown("tool changed"));
        }
        if self
            .authenticator
            .authorize(principal, &served.tool.name)
            .is_err()
        {
            return Err(unknown("scope"));
        }
        let Some(upstream) = &self.upstream else {
            return Err(Failure::internal());
        };
        let which = if method == "tasks/cancel" {
            if operation
                .long_running
                .as_ref()
                .is_none_or(|plan| plan.cancel.is_none())
            {
                return Err(Failure::invalid_params(
                    "this task cannot be cancelled: the API offers no way to cancel its operation",
                ));
            }
            Look::Cancel
        } else {
            Look::Poll
        };
        // A look is a request to the API made for the caller, so it is spent from the tool's
        // rate limits as a call is; over them, the API is not asked, and the refusal is
        // recorded as a call's is.
        if let Some(limited) = self
            .over_limit(
                served,
                Some(principal),
                true,
                &mut scope.facts.state_failure,
            )
            .await
        {
            scope.facts.tool = Some(index);
            scope.facts.outcome = Some(crate::observe::Outcome::Refused(
                crate::observe::Reason::RateLimit,
            ));
            let told = limited.told();
            if which == Look::Cancel {
                let message = format!("the API was not asked to cancel the operation: {told}");
                // Budgets that could not be read are the server's trouble, not the caller's.
                let failure = if limited.unchecked {
                    Failure::new(
                        http::StatusCode::INTERNAL_SERVER_ERROR,
                        super::code::INTERNAL_ERROR,
                        &message,
                    )
                } else {
                    Failure::invalid_params(&message)
                };
                return Err(failure.with_data(json!({ result::RATE_LIMIT_META: limited.meta() })));
            }
            let mut detailed = detailed(task_id, &task);
            detailed["status"] = json!("working");
            detailed["statusMessage"] = json!(format!("its status was not looked at: {told}"));
            detailed["pollIntervalMs"] = json!(limited.retry_after_seconds.saturating_mul(1000));
            return Ok(self.task_answer(id, detailed));
        }
        let mut stats = upstream::CallStats::default();
        let polled = match look(
            upstream,
            (route, operation),
            &task.status,
            principal,
            trace,
            which,
            &mut stats,
        )
        .await
        {
            // A cancellation's answer is only read for its status: nothing of it is served.
            Polled::Ended(outcome) if which == Look::Poll => {
                let mut outcome = result::shaped(&operation.call.shape, outcome);
                // A long-running tool declares no output schema; a stream's items are still
                // checked, as a call's are.
                served.check_items(&mut outcome);
                Polled::Ended(outcome)
            }
            other => other,
        };
        if which == Look::Cancel {
            return match polled {
                Polled::Ended(Ok(answer)) if answer.http.status.is_success() => {
                    Ok(respond_value(id, &json!({"resultType": "complete"})))
                }
                Polled::Ended(Ok(answer)) => Err(Failure::invalid_params(&format!(
                    "the API refused to cancel the operation: it answered {}",
                    answer.http.status.as_u16()
                ))),
                _ => Err(Failure::invalid_params(
                    "the API did not answer the cancellation; the task goes on",
                )),
            };
        }
        self.task_result(id, task_id, &task, polled)
    }

    /// The `tasks/get` answer for `task`, which one look found `polled`.
    fn task_result(
        &self,
        id: &RawValue,
        task_id: &str,
        task: &Task,
        polled: Polled,
    ) -> Result<Outgoing, Failure> {
        let mut detailed = detailed(task_id, task);
        match polled {
            Polled::Working(wait) => {
                detailed["status"] = json!("working");
                detailed["pollIntervalMs"] = json!(wait.as_millis() as u64);
            }
            Polled::Ended(Ok(answer))
                if answer
                    .handling
                    .operation
                    .as_ref()
                    .is_some_and(|followed| followed.state == State::Cancelled) =>
            {
                detailed["status"] = json!("cancelled");
            }
            // A result fetch that got no answer says nothing of the operation.
            Polled::Ended(Err(
                CallError::Timeout { .. }
                | CallError::ConnectTimeout { .. }
                | CallError::Connect
                | CallError::Closed,
            )) => {
                detailed["status"] = json!("working");
                detailed["statusMessage"] =
                    json!("the API did not answer the last look; ask again");
            }
            Polled::Ended(outcome) => {
                let written = result::operation::task_result(&task.tool, outcome).map_err(
                    |error| {
                        tracing::error!(tool = %task.tool, %error, "task result does not serialize");
                        Failure::internal()
                    },
                )?;
                detailed["status"] = json!("completed");
                detailed["result"] = written;
            }
        }
        Ok(self.task_answer(id, detailed))
    }

    /// The `tasks/get` response holding `detailed`, the task as it stands.
    fn task_answer(&self, id: &RawValue, mut detailed: Value) -> Outgoing {
        detailed["resultType"] = json!("complete");
        detailed["_meta"] = json!({ META_SERVER_INFO: &self.server_info });
        respond_value(id, &detailed)
    }
}

/// The `CreateTaskResult` of a call that made `created`.
pub(super) fn created_result(id: &RawValue, created: &Created, server_info: &RawValue) -> Outgoing {
    let mut task = detailed(&created.id, &created.task);
    task["resultType"] = json!("task");
    task["status"] = json!("working");
    task["statusMessage"] = json!(format!(
        "the API accepted the operation; its status is at {}",
        created.task.status
    ));
    task["_meta"] = json!({ META_SERVER_INFO: server_info });
    respond_value(id, &task)
}

/// The fields every task answer has.
fn detailed(task_id: &str, task: &Task) -> Value {
    json!({
        "taskId": task_id,
        "createdAt": rfc3339(task.created),
        "lastUpdatedAt": rfc3339(now()),
        "ttlMs": TTL_SECONDS * 1000,
    })
}

/// `seconds` since the Unix epoch as RFC 3339 in UTC.
fn rfc3339(seconds: u64) -> String {
    let mut out = Vec::with_capacity(32);
    crate::observe::audit::rfc3339(
        UNIX_EPOCH + std::time::Duration::from_secs(seconds),
        &mut out,
    );
    String::from_utf8(out).unwrap_or_default()
}

//! Confirmation rounds: a confirming tool's call is answered `input_required` with one
//! form-mode elicitation and a sealed `requestState`, and proceeds only when the retry
//! carries the user's acceptance and that state, verified (digest §4, SEP-2322).
//!
//! ferry keeps nothing of a question between its two rounds, so the state carries what the
//! retry is checked against: an expiry and a random nonce in clear, and SHA-256 digests of the caller's
//! subject, the tool's name, what the user was shown of the tool and what it runs (its
//! question, its title, each request's method and path: a reload that changes any of them
//! refuses the states given before) and the canonical arguments, all under an HMAC-SHA256
//! with the server's key. A nonce is accepted once per process (remembered until its expiry, in a
//! bounded set), or, with `--state`, once for every replica sharing it (one `SET NX` in Redis;
//! a Redis that does not answer refuses the confirmation); without shared state, only the
//! API's idempotency key can deduplicate across replicas, which is why the nonce is sent as
//! that key where the tool has one.
//!
//! `input_required` is answered only to a modern request that declares `elicitation`
//! (otherwise -32021), and carries no caching hints.
//!
//! [`Confirmer::decide`] returns what to do as a [`Decision`]; `result` writes every answer.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::catalog::{Confirm, ConfirmSettings, MessagePart, Tool};

use super::Era;

mod state;

pub use state::{
    Binding, ConfirmKey, MAX_NONCES, Nonces, Opened, Refusal, arguments_digest, hmac_sha256, open,
    seal,
};
use state::{DIGEST_LEN, NONCE_LEN, uuid};

/// The key of ferry's one input request, in `inputRequests` and `inputResponses`.
pub const INPUT_KEY: &str = "confirm";
/// The form's boolean field: `true` confirms.
pub const CONFIRM_FIELD: &str = "confirm";
/// The form's text field, when the tool asks for a value typed back.
pub const TYPED_FIELD: &str = "typed";
/// Each argument value shown in a message is cut to this many characters.
pub const MAX_VALUE_CHARS: usize = 200;
/// A whole message is cut to this many characters.
pub const MAX_MESSAGE_CHARS: usize = 2_000;
/// Arguments listed by the default message, at most.
const MAX_LISTED_ARGUMENTS: usize = 20;

/// What the request says about this round, borrowed from its `params`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Round<'a> {
    /// `_meta`'s `clientCapabilities`, as received.
    pub(super) capabilities: Option<&'a RawValue>,
    pub(super) input_responses: Option<&'a RawValue>,
    pub(super) request_state: Option<&'a RawValue>,
}

/// What to answer a confirming tool's call with.
#[derive(Debug)]
pub(super) enum Decision {
    /// `input_required`: ask the user.
    Ask(Question),
    /// Call the upstream, with this idempotency key (the state's nonce) when confirmed.
    Proceed { idempotency_key: Option<String> },
    /// The user did not confirm; nothing is sent.
    Declined(NotConfirmed),
    /// The retry's state is refused; nothing is sent.
    Refused(Refusal),
    /// A modern client that did not declare `elicitation` (-32021).
    NeedsElicitation,
    /// A legacy client, which cannot be asked (`confirm_legacy: refuse`).
    LegacyRefused,
    /// The retry's `requestState` or `inputResponses` breaks the schema (-32602): the text.
    Malformed(&'static str),
    /// The OS gave no random bytes for a nonce: ferry's own fault (-32603).
    NoRandomness,
}

impl Decision {
    /// The confirmation's outcome as one word, for the log and an audit record: `asked`,
    /// `confirmed`, `unconfirmed_legacy`, `declined`, `cancelled`, `mistyped`,
    /// `refused_state`, `needs_elicitation`, `refused_legacy`, `malformed`.
    pub(super) fn outcome(&self) -> &'static str {
        match self {
            Decision::Ask(_) => "asked",
            Decision::Proceed {
                idempotency_key: Some(_),
            } => "confirmed",
            Decision::Proceed {
                idempotency_key: None,
            } => "unconfirmed_legacy",
            Decision::Declined(NotConfirmed::Declined) => "declined",
            Decision::Declined(NotConfirmed::Cancelled) => "cancelled",
            Decision::Declined(NotConfirmed::Mistyped) => "mistyped",
            Decision::Refused(_) => "refused_state",
            Decision::NeedsElicitation => "needs_elicitation",
            Decision::LegacyRefused => "refused_legacy",
            Decision::Malformed(_) => "malformed",
            Decision::NoRandomness => "no_randomness",
        }
    }
}

/// How the user did not confirm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NotConfirmed {
    Declined,
    /// Dismissed without a choice.
    Cancelled,
    /// Accepted, but the value typed back is not the argument's.
    Mistyped,
}

/// One elicitation to send: the filled message, the argument to type back, the state.
#[derive(Debug)]
pub(super) struct Question {
    pub(super) message: String,
    pub(super) type_to_confirm: Option<String>,
    pub(super) state: String,
}

/// A server's confirmation policy and memory: the key, the time-to-live, the legacy rule, the
/// nonces answered.
#[derive(Debug)]
pub(super) struct Confirmer {
    key: ConfirmKey,
    ttl: Duration,
    allow_legacy: bool,
    nonces: std::sync::Arc<Nonces>,
}

impl Confirmer {
    /// The key confirmation state is sealed with, which seals task ids too: every replica
    /// sharing `confirm_key` opens what another sealed.
    pub(super) fn key(&self) -> &ConfirmKey {
        &self.key
    }

    /// A confirmer sealing with `key` and spending nonces from `nonces` (shared by every
    /// server one process builds, so a reload never lets a state be answered twice).
    pub(super) fn new(
        key: ConfirmKey,
        settings: &ConfirmSettings,
        nonces: std::sync::Arc<Nonces>,
    ) -> Confirmer {
        Confirmer {
            key,
            ttl: settings.ttl,
            allow_legacy: settings.allow_legacy,
            nonces,
        }
    }

    /// Decides a call of `tool` with valid `arguments` from `subject`, at `now` (seconds
    /// since the Unix epoch); a tool that does not confirm proceeds. Only an answer's nonce,
    /// spent in the state replicas share, waits for anything.
    pub(super) async fn decide<'t>(
        &self,
        tool: impl Into<Asked<'t>>,
        arguments: &Map<String, Value>,
        subject: &str,
        era: Era,
        round: &Round<'_>,
        now: u64,
    ) -> Decision {
        let tool = tool.into();
        let Some(confirm) = tool.confirm else {
            return Decision::Proceed {
                idempotency_key: None,
            };
        };
        if era == Era::Legacy {
            return if self.allow_legacy {
                Decision::Proceed {
                    idempotency_key: None,
                }
            } else {
                Decision::LegacyRefused
            };
        }
        if !declares_form_elicitation(round.capabilities) {
            return Decision::NeedsElicitation;
        }
        let value = Value::Object(arguments.clone());
        let binding = Binding {
            subject,
            tool: tool.name,
            shown: tool.digest(),
            arguments: arguments_digest(&value),
        };
        let ask = || {
            let mut nonce = [0u8; NONCE_LEN];
            if getrandom::fill(&mut nonce).is_err() {
                // No nonce, no question: a predictable one could be replayed.
                return Decision::NoRandomness;
            }
            // A version 4 UUID's bits, so the nonce is also a usual idempotency key.
            nonce[6] = (nonce[6] & 0x0f) | 0x40;
            nonce[8] = (nonce[8] & 0x3f) | 0x80;
            let expires = now.saturating_add(self.ttl.as_secs());
            Decision::Ask(Question {
                message: message(confirm, &tool, arguments),
                type_to_confirm: confirm.type_to_confirm.clone(),
                state: seal(&self.key, &binding, expires, nonce),
            })
        };
        let Some(state) = round.request_state else {
            // A first call, or responses without the state they answer: ask (again).
            return ask();
        };
        let Ok(state) = serde_json::from_str::<std::borrow::Cow<'_, str>>(state.get()) else {
            return Decision::Malformed("requestState is not a string");
        };
        let opened = match open(&self.key, &state, &binding, now) {
            Ok(opened) => opened,
            Err(refusal) => return Decision::Refused(refusal),
        };
        let answer = match round.input_responses.map(read_answer) {
            None | Some(Ok(None)) => return ask(),
            Some(Err(problem)) => return Decision::Malformed(problem),
            Some(Ok(Some(answer))) => answer,
        };
        // Any answer spends the nonce: a state declined once cannot be accepted later.
        let sealed = opened.expires.saturating_sub(self.ttl.as_secs());
        if let Err(refusal) = self.nonces.spend_once(&opened, sealed, now).await {
            return Decision::Refused(refusal);
        }
        match answer.action {
            Action::Decline => Decision::Declined(NotConfirmed::Declined),
            Action::Cancel => Decision::Declined(NotConfirmed::Cancelled),
            Action::Accept => {
                let content = answer.content.unwrap_or_default();
                if content.get(CONFIRM_FIELD) != Some(&Value::Bool(true)) {
                    return Decision::Declined(NotConfirmed::Declined);
                }
                if let Some(argument) = &confirm.type_to_confirm {
                    let expected = arguments.get(argument).and_then(Value::as_str);
                    let typed = content.get(TYPED_FIELD).and_then(Value::as_str);
                    if expected.is_none() || typed != expected {
                        return Decision::Declined(NotConfirmed::Mistyped);
                    }
                }
                Decision::Proceed {
                    idempotency_key: Some(uuid(&opened.nonce)),
                }
            }
        }
    }
}

/// A confirmation that ends the call with a JSON-RPC error, and whose doing that is.
pub(super) enum GateError {
    /// The client's: it cannot be asked (no elicitation), or its retry breaks the schema.
    Caller(super::Failure),
    /// ferry's own.
    Gateway(super::Failure),
}

/// What a call of a tool does after its confirmation is decided.
pub(super) enum Gate {
    /// Call the upstream (with this idempotency key, when confirmed).
    Proceed { idempotency_key: Option<String> },
    /// Ask the user this (answered `input_required`).
    Ask(Question),
    /// Answer with this tool result; nothing is sent.
    Unconfirmed(Box<super::result::CallResult<'static>>),
}

impl super::Server {
    /// Decides the confirmation of a call of `served` with valid `arguments`: a tool that does
    /// not confirm proceeds. The outcome is logged with the call and returned beside the gate
    /// as the word an audit record names (`None` for a tool that does not confirm); a nonce
    /// the shared state could not spend is noted in `state_failure`.
    pub(super) async fn confirmation(
        &self,
        served: &super::ServedTool,
        arguments: &Map<String, Value>,
        principal: &crate::auth::Principal,
        era: Era,
        round: &Round<'_>,
        state_failure: &mut Option<crate::observe::StateFailure>,
    ) -> (Result<Gate, GateError>, Option<&'static str>) {
        let tool = Asked::from(&served.tool);
        if tool.confirm.is_none() {
            let proceed = Gate::Proceed {
                idempotency_key: None,
            };
            return (Ok(proceed), None);
        }
        let decision = self
            .confirmer
            .decide(tool, arguments, &principal.subject, era, round, now())
            .await;
        if let Decision::Refused(Refusal::StateUnavailable) = decision {
            *state_failure = Some(crate::observe::StateFailure::Confirmation);
        }
        let outcome = decision.outcome();
        let word = Some(outcome);
        match &decision {
            Decision::Proceed {
                idempotency_key: None,
            } => {
                tracing::warn!(tool = %tool.name, user = %principal.subject, confirmation = outcome, "legacy client: call proceeds unconfirmed (confirm_legacy: allow)")
            }
            Decision::Refused(refusal) => {
                tracing::info!(tool = %tool.name, user = %principal.subject, confirmation = outcome, reason = refusal.as_str(), "confirmation state refused")
            }
            _ => {
                tracing::info!(tool = %tool.name, user = %principal.subject, confirmation = outcome, "tool call confirmation")
            }
        }
        use super::result;
        let gate = match decision {
            Decision::Proceed { idempotency_key } => Ok(Gate::Proceed { idempotency_key }),
            Decision::Ask(question) => Ok(Gate::Ask(question)),
            Decision::NeedsElicitation => {
                Err(GateError::Caller(super::Failure::missing_capability()))
            }
            Decision::Malformed(problem) => {
                Err(GateError::Caller(super::Failure::invalid_params(problem)))
            }
            Decision::NoRandomness => {
                tracing::error!(tool = %tool.name, "no random bytes for a confirmation nonce");
                Err(GateError::Gateway(super::Failure::internal()))
            }
            Decision::Declined(how) => Ok(Gate::Unconfirmed(Box::new(result::declined(how)))),
            Decision::Refused(refusal) => {
                Ok(Gate::Unconfirmed(Box::new(result::state_refused(refusal))))
            }
            Decision::LegacyRefused => {
                Ok(Gate::Unconfirmed(Box::new(result::legacy_cannot_confirm())))
            }
        };
        (gate, word)
    }
}

/// What a confirmation asks about: the tool, and what a call of it sends.
#[derive(Debug, Clone, Copy)]
pub(super) struct Asked<'a> {
    tool: &'a Tool,
    name: &'a str,
    title: Option<&'a str>,
    confirm: Option<&'a Confirm>,
}

impl<'a> From<&'a Tool> for Asked<'a> {
    fn from(tool: &'a Tool) -> Asked<'a> {
        Asked {
            tool,
            name: &tool.name,
            title: tool.title.as_deref(),
            confirm: tool.confirm.as_ref(),
        }
    }
}

impl Asked<'_> {
    /// SHA-256 of what the user is shown of the tool and what a call of it sends: its title,
    /// its question (literal parts and the arguments they name) and the value to type back,
    /// and each request's method and path (a composite tool's: its workflow and every step's).
    /// Each part is written with its length, so no two tools' parts run together the same.
    pub(super) fn digest(&self) -> [u8; DIGEST_LEN] {
        let mut hash = Sha256::new();
        let mut part = |text: &str| {
            hash.update((text.len() as u64).to_be_bytes());
            hash.update(text.as_bytes());
        };
        part(self.title.unwrap_or(""));
        if let Some(confirm) = self.confirm {
            for message in confirm.message.iter().flatten() {
                match message {
                    MessagePart::Literal(literal) => {
                        part("literal");
                        part(literal);
                    }
                    MessagePart::Argument(name) => {
                        part("argument");
                        part(name);
                    }
                }
            }
            part(confirm.type_to_confirm.as_deref().unwrap_or(""));
        }
        let (_, origin) = self.tool.origin();
        part(&origin);
        for request in self.tool.requests() {
            part(request.plan.method.as_str());
            part(&request.plan.path);
        }
        hash.finalize().into()
    }
}

/// Seconds since the Unix epoch, now.
pub(super) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// Whether `clientCapabilities` declares form-mode elicitation: `elicitation: {}` (form only)
/// or with `form`.
fn declares_form_elicitation(capabilities: Option<&RawValue>) -> bool {
    #[derive(Deserialize)]
    struct Capabilities<'a> {
        #[serde(borrow, default)]
        elicitation: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Elicitation<'a> {
        #[serde(borrow, default)]
        form: Option<&'a RawValue>,
        #[serde(borrow, default)]
        url: Option<&'a RawValue>,
    }
    let Some(Ok(capabilities)) =
        capabilities.map(|raw| serde_json::from_str::<Capabilities<'_>>(raw.get()))
    else {
        return false;
    };
    match capabilities
        .elicitation
        .map(|raw| serde_json::from_str::<Elicitation<'_>>(raw.get()))
    {
        Some(Ok(modes)) => modes.form.is_some() || modes.url.is_none(),
        _ => false,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Action {
    Accept,
    Decline,
    Cancel,
}

#[derive(Debug, Deserialize)]
struct Answer {
    action: Action,
    #[serde(default)]
    content: Option<Map<String, Value>>,
}

/// The answer to ferry's input request in `inputResponses`: `Ok(None)` when there is none
/// (other keys are ignored), `Err` when the map or the answer breaks the schema.
fn read_answer(input_responses: &RawValue) -> Result<Option<Answer>, &'static str> {
    #[derive(Deserialize)]
    struct Responses<'a> {
        #[serde(rename = "confirm", borrow, default)]
        confirm: Option<&'a RawValue>,
    }
    if !input_responses.get().starts_with('{') {
        return Err("inputResponses is not an object");
    }
    let responses: Responses<'_> = serde_json::from_str(input_responses.get())
        .map_err(|_| "inputResponses is not an object")?;
    let Some(raw) = responses.confirm else {
        return Ok(None);
    };
    serde_json::from_str::<Answer>(raw.get())
        .map(Some)
        .map_err(|_| "inputResponses.confirm is not an elicitation result ({\"action\": \"accept\" | \"decline\" | \"cancel\", \"content\"?: {...}})")
}

/// The question for this call: the curation's message filled with the call's arguments, or
/// the tool and its arguments listed; the value to type back named last.
fn message(confirm: &Confirm, tool: &Asked<'_>, arguments: &Map<String, Value>) -> String {
    let mut text = String::new();
    match &confirm.message {
        Some(parts) => {
            for part in parts {
                match part {
                    MessagePart::Literal(literal) => text.push_str(literal),
                    MessagePart::Argument(name) => match arguments.get(name) {
                        Some(value) => text.push_str(&shown(value)),
                        None => text.push_str("(not given)"),
                    },
                }
            }
        }
        None => {
            let title = tool.title.unwrap_or(tool.name);
            let sends = tool.tool.sends(|part| escape(part, MAX_VALUE_CHARS));
            text.push_str(&format!(
                "Allow {} ({sends})?",
                escape(title, MAX_VALUE_CHARS)
            ));
            let mut names: Vec<&String> = arguments.keys().collect();
            names.sort();
            for name in names.iter().take(MAX_LISTED_ARGUMENTS) {
                text.push_str(&format!(
                    "\n{}: {}",
                    escape(name, MAX_VALUE_CHARS),
                    shown(&arguments[name.as_str()])
                ));
            }
            if names.len() > MAX_LISTED_ARGUMENTS {
                text.push_str(&format!(
                    "\n(and {} more arguments)",
                    names.len() - MAX_LISTED_ARGUMENTS
                ));
            }
        }
    }
    if let Some(argument) = &confirm.type_to_confirm
        && let Some(value) = arguments.get(argument)
    {
        text.push_str(&format!("\n\nType {} to confirm.", shown(value)));
    }
    cut(&text, MAX_MESSAGE_CHARS)
}

/// An argument's value as shown to the user: a string as it is, anything else as JSON,
/// escaped and cut to [`MAX_VALUE_CHARS`].
fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => escape(text, MAX_VALUE_CHARS),
        other => escape(&other.to_string(), MAX_VALUE_CHARS),
    }
}

/// `text` with what could change how the message reads written out, then cut to `max`
/// characters. Written out are every character of the Unicode general categories Cc
/// (controls: a newline would start a line of the caller's choosing), Cf (format characters,
/// among them every bidirectional control, which reorder what is shown, and invisible ones)
/// and Zl and Zp (the line and paragraph separators, which start a line as a newline does).
pub fn escape(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max * 2));
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unseen(c) => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    cut(&out, max)
}

/// Whether `c` changes how the text around it reads without being seen itself: what
/// [`escape`] writes out.
pub fn is_unseen(c: char) -> bool {
    use unicode_general_category::{GeneralCategory, get_general_category};
    // Printable ASCII is most of what is shown; it needs no table.
    if (' '..='~').contains(&c) {
        return false;
    }
    matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    )
}

/// `text` cut to `max` characters, an ellipsis marking the cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests;

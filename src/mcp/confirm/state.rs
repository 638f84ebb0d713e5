//! A confirmation's sealed state: what it binds (the caller, the tool, what the user was
//! shown of it and what it runs, the arguments), sealed with HMAC-SHA256 under the server's
//! key beside an expiry and a random nonce, and the nonces already answered: in this process,
//! or, with `--state`, in the state every replica shares.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};

use base64::Engine as _;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Nonces remembered at once: past this, expired ones are forgotten, and while none has
/// expired new confirmations are refused rather than a live nonce forgotten.
pub const MAX_NONCES: usize = 65_536;

const VERSION: u8 = 2;
pub(super) const NONCE_LEN: usize = 16;
pub(super) const DIGEST_LEN: usize = 32;
const PAYLOAD_LEN: usize = 1 + 8 + NONCE_LEN + 4 * DIGEST_LEN;
const STATE_LEN: usize = PAYLOAD_LEN + DIGEST_LEN;
/// A state's length in base64url without padding.
const STATE_CHARS: usize = (STATE_LEN * 4).div_ceil(3);
/// Domain separation: the MAC of a confirmation state is never valid for anything else.
const MAC_CONTEXT: &[u8] = b"ferry confirm state v1\0";

/// The key that seals confirmation state. `Debug` never shows it.
#[derive(Clone)]
pub struct ConfirmKey(Box<[u8]>);

impl ConfirmKey {
    /// The fewest bytes a configured key may have.
    pub const MIN_LEN: usize = 32;

    /// A configured key: `None` when it is shorter than [`ConfirmKey::MIN_LEN`].
    pub fn new(bytes: &[u8]) -> Option<ConfirmKey> {
        (bytes.len() >= Self::MIN_LEN).then(|| ConfirmKey(bytes.into()))
    }

    /// The MAC of `data` under this key, for what `context` names: a value sealed for one
    /// purpose is never valid for another.
    pub fn mac(&self, context: &[u8], data: &[u8]) -> [u8; DIGEST_LEN] {
        hmac_sha256(&self.0, &[context, data])
    }

    /// Whether `tag` is [`ConfirmKey::mac`] of `data` for `context`, compared in constant
    /// time.
    pub fn verify(&self, context: &[u8], data: &[u8], tag: &[u8]) -> bool {
        equal(&self.mac(context, data), tag)
    }

    /// A key of 32 random bytes, for one process: state it seals is valid only there.
    pub fn generate() -> ConfirmKey {
        let mut bytes = [0u8; 32];
        // Without the OS's randomness no key, nonce or TLS session can be made safely.
        getrandom::fill(&mut bytes).expect("the operating system provides random bytes");
        ConfirmKey(bytes.into())
    }
}

impl fmt::Debug for ConfirmKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ConfirmKey(<redacted>)")
    }
}

/// What one state is made for: who calls, which tool, what the user is shown of it and what
/// it runs, with what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding<'a> {
    pub subject: &'a str,
    pub tool: &'a str,
    /// The digest of the question's template and what the tool runs ([`Asked::digest`]).
    pub shown: [u8; DIGEST_LEN],
    /// [`arguments_digest`] of the call's arguments.
    pub arguments: [u8; DIGEST_LEN],
}

/// Why a retry's `requestState` is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not a state ferry writes (wrong length, not base64url, unknown version).
    Unreadable,
    /// Its MAC does not verify: altered, or sealed with another key (another replica with
    /// its own generated key, or ferry restarted).
    Forged,
    Expired,
    OtherTool,
    /// The tool was changed by a reload since the user was asked: its question, or what it
    /// runs.
    Changed,
    OtherCaller,
    OtherArguments,
    /// Its nonce was already answered (in this process, or on any replica sharing state).
    Replayed,
    /// Too many confirmations are outstanding to remember one more.
    Busy,
    /// The shared state did not answer in time, so the nonce could not be spent once-only.
    StateUnavailable,
    /// It was sealed before the shared state's memory began (Redis lost its data since):
    /// its nonce may have been spent and forgotten.
    StateLost,
}

impl Refusal {
    /// The word for logs and records.
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::Unreadable => "unreadable",
            Refusal::Forged => "forged",
            Refusal::Expired => "expired",
            Refusal::OtherTool => "other_tool",
            Refusal::Changed => "changed",
            Refusal::OtherCaller => "other_caller",
            Refusal::OtherArguments => "other_arguments",
            Refusal::Replayed => "replayed",
            Refusal::Busy => "busy",
            Refusal::StateUnavailable => "state_unavailable",
            Refusal::StateLost => "state_lost",
        }
    }
}

/// What a state that verified holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opened {
    pub expires: u64,
    pub nonce: [u8; NONCE_LEN],
}

/// The SHA-256 of `arguments` written canonically (object keys sorted, no spaces), so the
/// same arguments in another key order bind the same.
pub fn arguments_digest(arguments: &Value) -> [u8; DIGEST_LEN] {
    let canonical = crate::catalog::canonical(arguments.clone());
    Sha256::digest(canonical.to_string().as_bytes()).into()
}

/// A state for `binding`, valid until `expires` (seconds since the Unix epoch), carrying
/// `nonce`: base64url of the payload and its MAC.
pub fn seal(
    key: &ConfirmKey,
    binding: &Binding<'_>,
    expires: u64,
    nonce: [u8; NONCE_LEN],
) -> String {
    let mut state = Vec::with_capacity(STATE_LEN);
    state.push(VERSION);
    state.extend_from_slice(&expires.to_be_bytes());
    state.extend_from_slice(&nonce);
    state.extend_from_slice(&Sha256::digest(binding.subject.as_bytes()));
    state.extend_from_slice(&Sha256::digest(binding.tool.as_bytes()));
    state.extend_from_slice(&binding.shown);
    state.extend_from_slice(&binding.arguments);
    let mac = mac(key, &state);
    state.extend_from_slice(&mac);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(state)
}

/// Verifies `state` for `binding` at `now` (seconds since the Unix epoch). The MAC is
/// checked first, so nothing in a forged state is believed.
pub fn open(
    key: &ConfirmKey,
    state: &str,
    binding: &Binding<'_>,
    now: u64,
) -> Result<Opened, Refusal> {
    // Decoding is bounded by the length check: a state is a fixed size.
    if state.len() != STATE_CHARS {
        return Err(Refusal::Unreadable);
    }
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(state)
        .map_err(|_| Refusal::Unreadable)?;
    if bytes.len() != STATE_LEN || bytes[0] != VERSION {
        return Err(Refusal::Unreadable);
    }
    let (payload, tag) = bytes.split_at(PAYLOAD_LEN);
    if !equal(&mac(key, payload), tag) {
        return Err(Refusal::Forged);
    }
    let mut expires = [0u8; 8];
    expires.copy_from_slice(&payload[1..9]);
    let expires = u64::from_be_bytes(expires);
    let mut nonce = [0u8; NONCE_LEN];
    nonce.copy_from_slice(&payload[9..9 + NONCE_LEN]);
    let digests = &payload[9 + NONCE_LEN..];
    if now > expires {
        return Err(Refusal::Expired);
    }
    if digests[DIGEST_LEN..2 * DIGEST_LEN] != Sha256::digest(binding.tool.as_bytes())[..] {
        return Err(Refusal::OtherTool);
    }
    if digests[..DIGEST_LEN] != Sha256::digest(binding.subject.as_bytes())[..] {
        return Err(Refusal::OtherCaller);
    }
    if digests[2 * DIGEST_LEN..3 * DIGEST_LEN] != binding.shown[..] {
        return Err(Refusal::Changed);
    }
    if digests[3 * DIGEST_LEN..] != binding.arguments[..] {
        return Err(Refusal::OtherArguments);
    }
    Ok(Opened { expires, nonce })
}

/// Nonces answered, each until its state's expiry: in this process, or in the state replicas
/// share.
#[derive(Debug, Default)]
pub struct Nonces {
    seen: Mutex<HashMap<[u8; NONCE_LEN], u64>>,
    /// Where nonces are spent when replicas share them; `None`: in `seen`.
    shared: Option<crate::state::Shared>,
}

impl Nonces {
    /// Nonces spent in `shared`, once for every replica that uses it.
    pub fn shared_by(shared: crate::state::Shared) -> Nonces {
        Nonces {
            seen: Mutex::default(),
            shared: Some(shared),
        }
    }

    /// Records `opened`'s nonce as answered, its state sealed at `sealed` (seconds since the
    /// Unix epoch, as `now`): [`Nonces::spend`] here, or one round trip to the shared state.
    /// A shared state that does not answer refuses it (`StateUnavailable`): no confirmation
    /// is accepted whose once-only cannot be made sure of.
    pub async fn spend_once(&self, opened: &Opened, sealed: u64, now: u64) -> Result<(), Refusal> {
        let Some(shared) = &self.shared else {
            return self.spend(opened, now);
        };
        let spent =
            crate::boxed::future(|| shared.spend_nonce(&opened.nonce, sealed, opened.expires, now))
                .await;
        match spent {
            Ok(crate::state::Spent::Now) => Ok(()),
            Ok(crate::state::Spent::Already) => Err(Refusal::Replayed),
            Ok(crate::state::Spent::Unknowable) => Err(Refusal::StateLost),
            Err(failure) => {
                tracing::warn!(%failure, "confirmation refused: the shared state did not answer");
                Err(Refusal::StateUnavailable)
            }
        }
    }

    /// Records `opened`'s nonce as answered in this process: `Err` when it already was, or
    /// when [`MAX_NONCES`] unexpired ones are held. The lock is held only for the lookup.
    pub fn spend(&self, opened: &Opened, now: u64) -> Result<(), Refusal> {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.contains_key(&opened.nonce) {
            return Err(Refusal::Replayed);
        }
        if seen.len() >= MAX_NONCES {
            seen.retain(|_, expires| *expires >= now);
            if seen.len() >= MAX_NONCES {
                return Err(Refusal::Busy);
            }
        }
        seen.insert(opened.nonce, opened.expires);
        Ok(())
    }
}

/// `nonce` written as a UUID.
pub(super) fn uuid(nonce: &[u8; NONCE_LEN]) -> String {
    let hex: String = nonce.iter().map(|byte| format!("{byte:02x}")).collect();
    crate::upstream::uuid_text(&hex)
}

/// HMAC-SHA256 (RFC 2104) of `MAC_CONTEXT` then `data` under `key`.
fn mac(key: &ConfirmKey, data: &[u8]) -> [u8; DIGEST_LEN] {
    hmac_sha256(&key.0, &[MAC_CONTEXT, data])
}

/// HMAC-SHA256 of the concatenated `parts`: twenty lines of RFC 2104 over `sha2`, rather
/// than a crate.
pub fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; DIGEST_LEN] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..DIGEST_LEN].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|byte| byte ^ 0x36));
    for part in parts {
        inner.update(part);
    }
    let mut outer = Sha256::new();
    outer.update(block.map(|byte| byte ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// Compares two MACs in time that does not depend on where they differ.
fn equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

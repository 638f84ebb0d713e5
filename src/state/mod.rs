//! State shared between replicas (`--state redis://…`): the rate-limit budgets and the spent
//! confirmation nonces that one process otherwise keeps for itself, held in Redis so that
//! copies of ferry behind a load balancer keep one budget per caller and accept each
//! confirmation once.
//!
//! Each operation is one atomic round trip: a call's GCRA step over all of its budgets is
//! one script (`gcra.lua`, run by `EVALSHA`, loaded again when Redis has forgotten it), and a
//! nonce is one `SET NX PX` (`nonce.lua`, which also refuses a state sealed before Redis's
//! memory began, so a Redis that lost its data cannot accept a nonce twice). Time is Redis's
//! own (`TIME`), so replicas whose clocks differ read one budget alike.
//!
//! Every round trip has a deadline of its own ([`Options::timeout`]); what a failure means
//! is the caller's to decide (`mcp::limit` and `mcp::confirm`): a confirmation fails closed,
//! a rate limit as [`OnFailure`] says. Nothing here is on the path of a call that needs no
//! state, and a slow or dead Redis only ever costs such a call nothing.
//!
//! Keys are `PREFIX` followed by `limit:SUBJECT:BUDGET` (the subject as the first 16 bytes
//! of its SHA-256 in hex, so a key is short and names nobody in clear; the budget `tool:NAME`,
//! `reads` or `writes`), `nonce:NONCE` (the 16-byte nonce in hex, which every state carries
//! in clear anyway) and `began`. No argument value or secret is ever written.

use std::cell::RefCell;
use std::fmt;
use std::sync::{Arc, Weak};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, ErrorKind, IntoConnectionInfo, RedisError, Script, ServerErrorKind};
use sha2::{Digest, Sha256};

/// The key prefix by default.
pub const DEFAULT_PREFIX: &str = "ferry:";
/// How long one round trip may take by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(100);
/// How long a state sealed at or after the moment Redis's memory began must wait before it
/// is believed sealed after it, in seconds: one for the whole seconds both sides count in,
/// one for clocks that differ between hosts (kept in step by NTP, they differ by far less).
const BEGAN_MARGIN_SECONDS: u64 = 2;
/// How long past its state's expiry a nonce is kept: a replica whose clock is behind still
/// takes the state as unexpired for that long.
const NONCE_GRACE_SECONDS: u64 = 60;
/// How long a connection (TCP, TLS, `AUTH`) may take to be made, at start and after Redis
/// was lost; each call still waits no longer than its own round trip's deadline.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// What a rate limit does when the shared state cannot be read in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFailure {
    /// The call goes on as if within its limits.
    Open,
    /// The call is refused, as if over a limit.
    Closed,
}

impl OnFailure {
    pub fn as_str(self) -> &'static str {
        match self {
            OnFailure::Open => "open",
            OnFailure::Closed => "closed",
        }
    }
}

/// Where the shared state is and how it is used, as the command line gives it.
#[derive(Clone)]
pub struct Options {
    /// `redis://[USER@]HOST[:PORT][/DB]` or `rediss://…` (TLS); no password in it.
    pub url: String,
    /// The password (or the ACL user's), from the environment.
    pub password: Option<String>,
    /// PEM certificates to trust for `rediss://` instead of the system's.
    pub ca_certificates: Option<Vec<u8>>,
    /// Put before every key, so that several deployments can share one Redis.
    pub prefix: String,
    /// The deadline of each round trip.
    pub timeout: Duration,
    /// What a rate limit does when the state cannot be read.
    pub on_failure: OnFailure,
}

thread_local! {
    /// This thread's connections, one for each shared state it has made a round trip to (a
    /// process has one): see [`Shared::connection`].
    static CONNECTIONS: RefCell<Vec<(Weak<Inner>, ConnectionManager)>> = const { RefCell::new(Vec::new()) };
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("url", &self.url)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .field("on_failure", &self.on_failure)
            .finish_non_exhaustive()
    }
}

/// Why the shared state could not be set up at start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The URL is not one ferry connects to; the text never repeats it.
    #[error("{0}")]
    Url(String),
    /// Redis refused the password, or the user lacks a permission ferry needs.
    #[error("{0}")]
    Refused(String),
    /// Any other problem (TLS set-up, the CA file).
    #[error("{0}")]
    Other(String),
}

/// Why one round trip failed: Redis did not answer in time, or answered with an error (or
/// could not be reached at all).
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    #[error("no answer within {0:?}")]
    TimedOut(Duration),
    #[error("{0}")]
    Redis(RedisError),
}

/// One budget a call spends, as [`Shared::spend`] is given it.
#[derive(Debug, Clone, Copy)]
pub struct Budget<'a> {
    /// Names it among the subject's: `tool:NAME`, `reads` or `writes`.
    pub name: &'a str,
    /// Time one call spends, and the most a budget can be spent ahead, in nanoseconds.
    pub interval_nanos: u64,
    pub period_nanos: u64,
}

/// A call that does not fit: which budget frees last, and in how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Over {
    /// Index into the budgets given.
    pub budget: usize,
    pub retry_after_nanos: u64,
}

/// What became of a nonce spent in the shared state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spent {
    /// Spent now: the confirmation may proceed.
    Now,
    /// Spent before, here or on another replica.
    Already,
    /// Sealed before Redis's memory began: it may have been spent and forgotten.
    Unknowable,
}

/// The shared state, cheap to clone: every server one process builds uses the same one. Each
/// serving thread has a connection of its own, made on its first round trip: a multiplexed
/// connection, on which that thread's concurrent round trips are pipelined, and which
/// reconnects by itself when Redis is lost (`bench/README.md`, "Shared state").
#[derive(Clone)]
pub struct Shared(Arc<Inner>);

struct Inner {
    client: Client,
    config: ConnectionManagerConfig,
    prefix: Box<str>,
    timeout: Duration,
    on_failure: OnFailure,
    /// Where Redis is (host and port), for log lines.
    address: String,
    gcra: Script,
    nonce: Script,
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("address", &self.0.address)
            .field("prefix", &self.0.prefix)
            .field("timeout", &self.0.timeout)
            .field("on_failure", &self.0.on_failure)
            .finish_non_exhaustive()
    }
}

/// Sets up the shared state `options` names and checks it can be used: connects, logs in and
/// runs both scripts once on keys of their own, within a few seconds. A password Redis
/// refuses or a permission the user lacks is a [`StartError::Refused`]; a Redis that cannot
/// be reached is not an error (ferry starts, says so, and the failure rules apply until Redis
/// answers). The connections that serve are made later, each by the thread that uses it.
pub async fn connect(options: Options) -> Result<Shared, StartError> {
    let client = client(&options)?;
    let address = client.get_connection_info().addr().to_string();
    let gcra = Script::new(include_str!("gcra.lua"));
    let nonce = Script::new(include_str!("nonce.lua"));
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(CONNECT_TIMEOUT))
        .set_response_timeout(Some(options.timeout))
        .set_number_of_retries(2)
        .set_min_delay(Duration::from_millis(50))
        .set_max_delay(Duration::from_millis(500));
    let shared = Shared(Arc::new(Inner {
        client: client.clone(),
        config,
        prefix: options.prefix.into(),
        timeout: options.timeout,
        on_failure: options.on_failure,
        address,
        gcra,
        nonce,
    }));
    // One connection of its own, not retried: a refused password is said once, at once.
    match tokio::time::timeout(CONNECT_TIMEOUT + options.timeout * 2, shared.check(&client)).await {
        Ok(Ok(())) => {}
        Ok(Err(error)) if untrusted(&error) => {
            return Err(StartError::Other(format!(
                "the TLS certificate of Redis at {} is not trusted: {error} (--state-ca-file names the CA that signed it)",
                shared.0.address
            )));
        }
        Ok(Err(error)) if refused(&error) => {
            return Err(StartError::Refused(format!(
                "Redis at {} refused ferry: {error} (check the user in the URL, the password in $FERRY_STATE_PASSWORD, and the user's ACL: `ferry serve --help` names what it needs)",
                shared.0.address
            )));
        }
        Ok(Err(error)) => {
            tracing::warn!(redis = %shared.0.address, %error, "shared state unreachable at start: calls that need it follow the failure rules until it answers");
        }
        Err(_) => {
            tracing::warn!(redis = %shared.0.address, "shared state did not answer at start: calls that need it follow the failure rules until it answers");
        }
    }
    Ok(shared)
}

impl Shared {
    /// What a rate limit does when this state cannot be read.
    pub fn on_failure(&self) -> OnFailure {
        self.0.on_failure
    }

    /// Where Redis is, for log lines.
    pub fn address(&self) -> &str {
        &self.0.address
    }

    /// Checks a call of `subject` against every one of `budgets` and, when it fits all and
    /// `spend` is set, spends it from each: one round trip. `Ok(None)` when it fits.
    pub async fn spend(
        &self,
        subject: &str,
        budgets: &[Budget<'_>],
        spend: bool,
    ) -> Result<Option<Over>, Failure> {
        if budgets.is_empty() {
            return Ok(None);
        }
        let subject = subject_key(subject);
        let mut invocation = self.0.gcra.prepare_invoke();
        for budget in budgets {
            invocation.key(format!("{}limit:{subject}:{}", self.0.prefix, budget.name));
        }
        invocation.arg(if spend { "1" } else { "0" });
        for budget in budgets {
            invocation
                .arg(micros(budget.interval_nanos))
                .arg(micros(budget.period_nanos));
        }
        let mut connection = self.connection()?;
        let (position, wait): (u64, u64) = self
            .round_trip(invocation.invoke_async(&mut connection))
            .await?;
        Ok(match usize::try_from(position) {
            Ok(0) | Err(_) => None,
            Ok(position) => Some(Over {
                budget: (position - 1).min(budgets.len() - 1),
                retry_after_nanos: wait.saturating_mul(1_000),
            }),
        })
    }

    /// Spends `nonce`, whose state was sealed at `sealed` and expires at `expires` (seconds
    /// since the Unix epoch; `now` is the same clock), for every replica: one round trip.
    // Out of line, so that a caller that boxes its future has it written in the box
    // (`crate::boxed`).
    #[inline(never)]
    pub async fn spend_nonce(
        &self,
        nonce: &[u8],
        sealed: u64,
        expires: u64,
        now: u64,
    ) -> Result<Spent, Failure> {
        let keep_ms = expires
            .saturating_sub(now)
            .saturating_add(NONCE_GRACE_SECONDS)
            .saturating_mul(1_000);
        let mut invocation = self.0.nonce.prepare_invoke();
        invocation
            .key(format!("{}nonce:{}", self.0.prefix, hex(nonce)))
            .key(format!("{}began", self.0.prefix))
            .arg(sealed)
            .arg(keep_ms)
            .arg(BEGAN_MARGIN_SECONDS);
        let mut connection = self.connection()?;
        let spent: i64 = self
            .round_trip(invocation.invoke_async(&mut connection))
            .await?;
        Ok(match spent {
            1 => Spent::Now,
            0 => Spent::Already,
            _ => Spent::Unknowable,
        })
    }

    /// This thread's connection, made (lazily: it connects on its first round trip, within
    /// that round trip's deadline) the first time the thread asks, and driven by the runtime
    /// the thread runs: each serving thread runs its own, so a round trip never wakes another
    /// thread (one connection for the process woke a second thread on each call, and died
    /// with the runtime that drove it: `bench/README.md`, "Shared state"). Held by the
    /// thread, as `client::Pool` holds its connections by thread; unlike those, it is one
    /// long-lived connection that reconnects by itself, so there is nothing to sweep, and it
    /// goes with its thread.
    fn connection(&self) -> Result<ConnectionManager, Failure> {
        CONNECTIONS.with_borrow_mut(|connections| {
            let this = Arc::as_ptr(&self.0);
            if let Some((_, connection)) = connections
                .iter()
                .find(|(state, _)| std::ptr::eq(state.as_ptr(), this))
            {
                return Ok(connection.clone());
            }
            // A state dropped since (a test's, say) lets its connection go here.
            connections.retain(|(state, _)| state.strong_count() > 0);
            let made = ConnectionManager::new_lazy_with_config(
                self.0.client.clone(),
                self.0.config.clone(),
            )
            .map_err(Failure::Redis)?;
            connections.push((Arc::downgrade(&self.0), made.clone()));
            Ok(made)
        })
    }

    /// `request` within the round trip's deadline.
    async fn round_trip<T>(
        &self,
        request: impl Future<Output = Result<T, RedisError>>,
    ) -> Result<T, Failure> {
        match tokio::time::timeout(self.0.timeout, request).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(Failure::Redis(error)),
            Err(_) => Err(Failure::TimedOut(self.0.timeout)),
        }
    }

    /// Connects once with `client`, and runs both scripts as serving will (a budget only
    /// measured, a nonce of its own spent): what a wrong password or a missing permission
    /// fails.
    async fn check(&self, client: &Client) -> Result<(), RedisError> {
        let mut connection = client.get_multiplexed_async_connection().await?;
        let mut probe = [0u8; 16];
        // Any bytes do for a probe's nonce; random ones keep replicas starting together apart.
        let _ = getrandom::fill(&mut probe);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        self.0
            .gcra
            .key(format!("{}limit:probe:probe", self.0.prefix))
            .arg("0")
            .arg(1_000_000)
            .arg(1_000_000)
            .invoke_async::<(i64, i64)>(&mut connection)
            .await?;
        self.0
            .nonce
            .key(format!("{}nonce:probe-{}", self.0.prefix, hex(&probe)))
            .key(format!("{}began", self.0.prefix))
            .arg(now)
            .arg(1_000)
            .arg(BEGAN_MARGIN_SECONDS)
            .invoke_async::<i64>(&mut connection)
            .await
            .map(|_| ())
    }
}

/// A client for `options`' URL with its password and TLS roots; the URL is never repeated in
/// an error.
fn client(options: &Options) -> Result<Client, StartError> {
    let url = url::Url::parse(&options.url)
        .map_err(|error| StartError::Url(format!("--state is not a URL: {error}")))?;
    match url.scheme() {
        "redis" | "rediss" => {}
        other => {
            return Err(StartError::Url(format!(
                "--state must be a redis:// or rediss:// URL, not {other}://"
            )));
        }
    }
    if url.password().is_some() {
        return Err(StartError::Url(
            "--state must not hold a password: give it in $FERRY_STATE_PASSWORD".into(),
        ));
    }
    if url.query().is_some() {
        return Err(StartError::Url(
            "--state takes no query: the user, host, port and database number only".into(),
        ));
    }
    let mut info = url
        .as_str()
        .into_connection_info()
        .map_err(|error| StartError::Url(format!("--state is not a Redis URL: {error}")))?;
    let mut redis = info
        .redis_settings()
        .clone()
        .set_lib_name("ferry", env!("CARGO_PKG_VERSION"));
    if let Some(password) = &options.password {
        redis = redis.set_password(password);
    }
    info = info.set_redis_settings(redis);
    if url.scheme() == "rediss" {
        // rustls picks the process's provider; ferry builds with aws-lc-rs alone, but a
        // process that has several must have one chosen before TLS is set up.
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        if let Some(roots) = &options.ca_certificates {
            let certificates = redis::TlsCertificates {
                client_tls: None,
                root_cert: Some(roots.clone()),
            };
            return Client::build_with_tls(info, certificates)
                .map_err(|error| StartError::Other(format!("setting up TLS to Redis: {error}")));
        }
    } else if options.ca_certificates.is_some() {
        return Err(StartError::Url(
            "--state-ca-file is for a rediss:// (TLS) URL".into(),
        ));
    }
    Client::open(info).map_err(|error| StartError::Other(format!("setting up Redis: {error}")))
}

/// Whether `error` is Redis refusing ferry (a password, a user, a permission), which no retry
/// will mend.
fn refused(error: &RedisError) -> bool {
    if matches!(
        error.kind(),
        ErrorKind::AuthenticationFailed | ErrorKind::Server(ServerErrorKind::NoPerm)
    ) {
        return true;
    }
    // Inside a script, a command the user may not run is a plain `ERR` with these words.
    let text = error.to_string();
    ["NOPERM", "WRONGPASS", "NOAUTH", "can't run this command"]
        .iter()
        .any(|code| text.contains(code))
}

/// Whether `error` is a TLS certificate the roots do not accept, which no retry will mend.
fn untrusted(error: &RedisError) -> bool {
    let text = error.to_string();
    text.contains("invalid peer certificate") || text.contains("certificate verify failed")
}

/// The subject as keys name it: the first 16 bytes of its SHA-256, in hex.
fn subject_key(subject: &str) -> String {
    hex(&Sha256::digest(subject.as_bytes())[..16])
}

fn hex(bytes: &[u8]) -> String {
    use fmt::Write as _;
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(text, "{byte:02x}");
    }
    text
}

/// Nanoseconds in whole microseconds, at least one: the scripts count in microseconds, which
/// Lua's numbers hold exactly for centuries of Unix time.
fn micros(nanos: u64) -> u64 {
    (nanos / 1_000).max(1)
}

#[cfg(test)]
mod tests;

//! Rate limits per caller: a GCRA (generic cell rate algorithm, the virtual-scheduling form
//! of a token bucket) keyed by (subject, limit), shared by every worker thread.
//!
//! A limit of `N` per period `P` spends `T = P / N` of a key's budget per call and allows
//! `N` calls at once after a quiet period: a key holds one number, its theoretical arrival
//! time `tat`, and a call at `now` fits when `max(tat, now) + T <= now + P`; then `tat`
//! becomes that sum. A refused call changes nothing, so it costs the caller no budget, and
//! it may try again when the sum minus `P` has passed. A key whose `tat` is past holds a full
//! budget, exactly as a key never seen: it is dropped without changing any answer.
//!
//! Keys live in [`SHARDS`] shards picked by a keyed hash of the subject (computed once per
//! check, and the shard's map is keyed by it), each a short-held mutex over that shard's
//! subjects and their keys, so one caller's limits are checked and spent together (a call
//! that one limit refuses spends none of the others) and callers on other shards never wait
//! for each other. Nothing is allocated for a caller and tool seen before (`benches/limit.rs`:
//! about 600 instructions, 50 to 80 ns, a check, clock and hash included). Memory is bounded: a shard forgets its expired
//! keys when it has grown to twice what it held after its last sweep, and at its share of
//! the hard cap ([`MAX_KEYS`] by default) it also forgets the key nearest to a full budget,
//! so that key's subject gets its budget back early, by less than any other key would.
//!
//! One limiter serves every server a process builds, start-up's and each reload's, so a
//! reload gives nobody a new budget. A tool's budget is keyed by the tool's name
//! ([`Limiter::key_for`]), not its place in a catalog, so it stays the same tool's across a
//! reload; and a budget remembers the rate it was spent at, so a reload that changes a
//! limit applies the new one to the calls already spent (the time they hold ahead is scaled
//! by the new interval over the old).
//!
//! With `--state redis://…` the budgets live in Redis instead, so that replicas share them
//! ([`Limiter::shared_by`]): [`Limiter::verdict`] then asks Redis (`state::Shared::spend`,
//! the same GCRA as one script, keyed by the subject and the budget's name: a tool's own
//! name, or its class's) and the table here is not used. Without it, `verdict` is the local
//! check and never waits.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher, RandomState};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use crate::catalog::Rate;
use crate::state;

/// The key of the budget every read tool spends together.
pub const READS_KEY: u32 = 0;
/// The key of the budget every write tool spends together.
pub const WRITES_KEY: u32 = 1;

/// Keys kept at most, over all shards, by [`Limiter::default`]: at most about 200 bytes
/// each besides the subject's own length, so some 20 MB at the cap.
pub const MAX_KEYS: usize = 100_000;
/// Shards of the key table.
pub const SHARDS: usize = 64;
/// A shard sweeps its expired keys no sooner than at this many.
const FIRST_SWEEP: usize = 64;

/// One budget a call may have to fit: which key of the subject it spends, and the rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// Names the budget among a subject's: one per tool limit and per class limit.
    pub key: u32,
    /// Time one call spends, in nanoseconds.
    interval: u64,
    /// The period, in nanoseconds: the most a budget can be spent ahead.
    period: u64,
}

/// A call that does not fit: which of the limits checked refused it (the one that frees
/// last), and when the call would fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    /// Index into the limits given to [`Limiter::check`].
    pub limit: usize,
    /// Nanoseconds from the check until every limit would let the call through.
    pub retry_after_nanos: u64,
}

impl Refusal {
    /// [`Refusal::retry_after_nanos`] in whole seconds, rounded up, at least 1.
    pub fn retry_after_seconds(&self) -> u64 {
        self.retry_after_nanos.div_ceil(1_000_000_000).max(1)
    }
}

/// How a call stands against its limits, wherever the budgets are kept.
#[derive(Debug)]
pub enum Verdict {
    /// Within every limit (and spent, when asked).
    Fits,
    /// Over one: nothing was spent.
    Over(Refusal),
    /// The shared state did not answer in time: nobody knows, and
    /// [`Limiter::on_failure`] says what follows.
    Unknown(state::Failure),
}

/// Every key's budget, per process, or the connection to where replicas keep them.
#[derive(Debug)]
pub struct Limiter {
    shards: Box<[Mutex<Shard>]>,
    /// The key each tool's own limit is spent from, by tool name; fixed once given, so a
    /// reload finds the budgets of the tools it keeps. Written only when a server is built.
    tool_keys: Mutex<ToolKeys>,
    /// Where the budgets are kept when replicas share them; `None`: in `shards`.
    shared: Option<state::Shared>,
    hasher: RandomState,
    /// Keys a shard holds at most.
    shard_cap: usize,
    /// Time zero of the nanosecond clock [`Limiter::check`] reads.
    origin: Instant,
}

#[derive(Debug, Default)]
struct ToolKeys {
    by_name: HashMap<Box<str>, u32>,
    /// The name of each tool key's budget in the shared state (`tool:NAME`), by key less
    /// [`Limiter::FIRST_TOOL_KEY`].
    budget_names: Vec<std::sync::Arc<str>>,
}

#[derive(Debug, Default)]
struct Shard {
    /// Subjects by the hash that picked the shard, so a check hashes its subject once: one
    /// entry per hash, more only when two subjects' 64-bit keyed hashes collide.
    subjects: HashMap<u64, Vec<Held>, BuildHasherDefault<Hashed>>,
    /// Budgets held, over all subjects.
    keys: usize,
    /// Sweep expired keys when `keys` would pass this.
    sweep_at: usize,
}

/// One subject's budgets.
#[derive(Debug)]
struct Held {
    subject: Box<str>,
    budgets: Vec<Budget>,
}

#[derive(Debug, Clone, Copy)]
struct Budget {
    key: u32,
    /// The theoretical arrival time, in nanoseconds since the origin.
    tat: u64,
    /// The interval `tat` was last advanced by: the limit's rate when it was spent.
    interval: u64,
}

impl Budget {
    /// `tat` as `limit` reads it at `now`: the time held ahead of `now` is the calls spent
    /// at the budget's own interval, counted again at the limit's (the same unless a reload
    /// changed the rate).
    fn tat_for(&self, limit: &Limit, now: u64) -> u64 {
        if self.interval == limit.interval || self.tat <= now || self.interval == 0 {
            return self.tat;
        }
        let ahead =
            u128::from(self.tat - now) * u128::from(limit.interval) / u128::from(self.interval);
        now.saturating_add(u64::try_from(ahead).unwrap_or(u64::MAX))
    }

    /// Spends one call of `limit` at `now`.
    fn spend(&mut self, limit: &Limit, now: u64) {
        self.tat = self.tat_for(limit, now).max(now) + limit.interval;
        self.interval = limit.interval;
    }
}

/// The "hasher" of a map whose keys are hashes already: it passes them through.
#[derive(Debug, Default)]
struct Hashed(u64);

impl Hasher for Hashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u64`s are hashed here; any other key would still be mixed in, byte by byte.
        for byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*byte);
        }
    }

    fn write_u64(&mut self, hash: u64) {
        self.0 = hash;
    }
}

impl Limit {
    pub fn new(key: u32, rate: Rate) -> Limit {
        Limit {
            key,
            interval: rate.interval_nanos(),
            period: rate.period_nanos(),
        }
    }
}

impl Default for Limiter {
    fn default() -> Limiter {
        Limiter::new(MAX_KEYS)
    }
}

impl Limiter {
    /// A limiter holding at most about `max_keys` keys (at least a few per shard).
    pub fn new(max_keys: usize) -> Limiter {
        let shard_cap = (max_keys / SHARDS).max(4);
        Limiter {
            shards: (0..SHARDS)
                .map(|_| {
                    Mutex::new(Shard {
                        sweep_at: FIRST_SWEEP.min(shard_cap),
                        ..Shard::default()
                    })
                })
                .collect(),
            tool_keys: Mutex::default(),
            shared: None,
            hasher: RandomState::new(),
            shard_cap,
            origin: Instant::now(),
        }
    }

    /// A limiter whose budgets live in `shared`, for every replica that uses it.
    pub fn shared_by(shared: state::Shared) -> Limiter {
        Limiter {
            shared: Some(shared),
            ..Limiter::new(0)
        }
    }

    /// What a call does when the shared state cannot be read: `None` for budgets kept here,
    /// which can always be.
    pub fn on_failure(&self) -> Option<state::OnFailure> {
        self.shared.as_ref().map(state::Shared::on_failure)
    }

    /// The key of the budget that the tool named `tool` spends for its own limit: the same
    /// for the same name for the limiter's life, and above every key below
    /// [`Limiter::FIRST_TOOL_KEY`], which the class limits use.
    pub fn key_for(&self, tool: &str) -> u32 {
        let mut keys = self
            .tool_keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(&key) = keys.by_name.get(tool) {
            return key;
        }
        let key = Self::FIRST_TOOL_KEY + keys.by_name.len() as u32;
        keys.by_name.insert(tool.into(), key);
        keys.budget_names.push(format!("tool:{tool}").into());
        key
    }

    /// Judges a call of `subject` against every one of `limits` and, when it fits all and
    /// `spend` is set, spends it from each: [`Limiter::check`] or [`Limiter::fits`] here, or
    /// one round trip to the shared state.
    pub async fn verdict(&self, subject: &str, limits: &[Limit], spend: bool) -> Verdict {
        let Some(shared) = &self.shared else {
            let judged = if spend {
                self.check(subject, limits)
            } else {
                self.fits(subject, limits)
            };
            return match judged {
                Ok(()) => Verdict::Fits,
                Err(refusal) => Verdict::Over(refusal),
            };
        };
        if limits.is_empty() {
            return Verdict::Fits;
        }
        // Boxed: the round trip's future is large, and only a call that needs it pays for it.
        crate::boxed::future(|| self.shared_verdict(shared, subject, limits, spend)).await
    }

    // Out of line, so that a caller that boxes its future has it written in the box
    // (`crate::boxed`).
    #[inline(never)]
    async fn shared_verdict(
        &self,
        shared: &state::Shared,
        subject: &str,
        limits: &[Limit],
        spend: bool,
    ) -> Verdict {
        let names: Vec<std::sync::Arc<str>> = {
            let keys = self
                .tool_keys
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            limits
                .iter()
                .map(|limit| match limit.key {
                    READS_KEY => "reads".into(),
                    WRITES_KEY => "writes".into(),
                    key => key
                        .checked_sub(Self::FIRST_TOOL_KEY)
                        .and_then(|at| keys.budget_names.get(at as usize))
                        .cloned()
                        .unwrap_or_else(|| format!("key:{key}").into()),
                })
                .collect()
        };
        let budgets: Vec<state::Budget<'_>> = limits
            .iter()
            .zip(&names)
            .map(|(limit, name)| state::Budget {
                name,
                interval_nanos: limit.interval,
                period_nanos: limit.period,
            })
            .collect();
        match shared.spend(subject, &budgets, spend).await {
            Ok(None) => Verdict::Fits,
            Ok(Some(over)) => Verdict::Over(Refusal {
                limit: over.budget,
                retry_after_nanos: over.retry_after_nanos,
            }),
            Err(failure) => Verdict::Unknown(failure),
        }
    }

    /// Keys below this name budgets shared by several tools (a class's); tools' own start here.
    pub const FIRST_TOOL_KEY: u32 = 16;

    /// Checks a call of `subject` against every one of `limits` now and, when it fits all,
    /// spends it from each.
    pub fn check(&self, subject: &str, limits: &[Limit]) -> Result<(), Refusal> {
        self.check_at(subject, limits, self.now())
    }

    /// Whether a call of `subject` would fit every one of `limits` now, spending nothing:
    /// what a call that asks the user first checks, so that asking costs no budget and the
    /// user is not asked about a call that would be refused.
    pub fn fits(&self, subject: &str, limits: &[Limit]) -> Result<(), Refusal> {
        self.fits_at(subject, limits, self.now())
    }

    /// [`Limiter::fits`] at `now`, as [`Limiter::check_at`].
    pub fn fits_at(&self, subject: &str, limits: &[Limit], now: u64) -> Result<(), Refusal> {
        if limits.is_empty() {
            return Ok(());
        }
        let hash = self.hasher.hash_one(subject);
        let shard = self.shards[Self::shard_of(hash, self.shards.len())]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match judge(shard.held(hash, subject), limits, now).0 {
            Some(refusal) => Err(refusal),
            None => Ok(()),
        }
    }

    /// Nanoseconds on the limiter's clock. Starting at 1 keeps 0 free to mean "never seen"
    /// (a full budget).
    fn now(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64 + 1
    }

    /// The shard a subject's `hash` picks: bits the map inside does not use for its buckets
    /// (the low ones) nor its tags (the top seven), so each shard's map still sees
    /// well-spread hashes.
    fn shard_of(hash: u64, shards: usize) -> usize {
        (hash >> 32) as usize % shards
    }

    /// [`Limiter::check`] at `now`, nanoseconds on the limiter's own clock: what the tests
    /// drive. `now` must not go back.
    pub fn check_at(&self, subject: &str, limits: &[Limit], now: u64) -> Result<(), Refusal> {
        if limits.is_empty() {
            return Ok(());
        }
        let hash = self.hasher.hash_one(subject);
        let mut shard = self.shards[Self::shard_of(hash, self.shards.len())]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // The usual call: a caller seen before, on a tool it has called. One lookup, and the
        // budgets are judged and spent in place.
        if let Some(held) = shard.held_mut(hash, subject) {
            let (refusal, missing) = judge(Some(held), limits, now);
            if let Some(refusal) = refusal {
                return Err(refusal);
            }
            if missing == 0 {
                for (budget, limit) in held.budgets_of(limits) {
                    budget.spend(limit, now);
                }
                return Ok(());
            }
        }
        let (refusal, missing) = judge(shard.held(hash, subject), limits, now);
        if let Some(refusal) = refusal {
            return Err(refusal);
        }
        if missing > 0 {
            shard.make_room(missing, now, self.shard_cap);
        }
        let shard = &mut *shard;
        let chain = shard.subjects.entry(hash).or_default();
        let held = match chain.iter().position(|held| *held.subject == *subject) {
            Some(at) => &mut chain[at],
            None => {
                chain.push(Held {
                    subject: subject.into(),
                    budgets: Vec::with_capacity(limits.len()),
                });
                let last = chain.len() - 1;
                &mut chain[last]
            }
        };
        for limit in limits {
            match held.budgets.iter_mut().find(|b| b.key == limit.key) {
                Some(budget) => budget.spend(limit, now),
                None => {
                    held.budgets.push(Budget {
                        key: limit.key,
                        tat: now + limit.interval,
                        interval: limit.interval,
                    });
                    shard.keys += 1;
                }
            }
        }
        Ok(())
    }

    /// Keys held now, expired ones not yet swept included.
    pub fn keys(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| shard.lock().unwrap_or_else(PoisonError::into_inner).keys)
            .sum()
    }

    /// The most keys this limiter holds.
    pub fn max_keys(&self) -> usize {
        self.shard_cap * self.shards.len()
    }
}

/// Whether a call fits every one of `limits` at `now`, given the caller's budgets (`None`:
/// never seen): the refusal that frees last, if any, and how many limits have no budget yet.
fn judge(held: Option<&Held>, limits: &[Limit], now: u64) -> (Option<Refusal>, usize) {
    let mut refusal: Option<Refusal> = None;
    let mut missing = 0;
    for (position, limit) in limits.iter().enumerate() {
        let tat = match held.and_then(|held| held.budget(limit.key)) {
            Some(budget) => budget.tat_for(limit, now),
            None => {
                missing += 1;
                0
            }
        };
        let next = tat.max(now) + limit.interval;
        let allowed = now + limit.period;
        if next > allowed {
            let wait = next - allowed;
            if refusal.is_none_or(|r| wait > r.retry_after_nanos) {
                refusal = Some(Refusal {
                    limit: position,
                    retry_after_nanos: wait,
                });
            }
        }
    }
    (refusal, missing)
}

impl Shard {
    fn held_mut(&mut self, hash: u64, subject: &str) -> Option<&mut Held> {
        self.subjects
            .get_mut(&hash)?
            .iter_mut()
            .find(|held| *held.subject == *subject)
    }

    fn held(&self, hash: u64, subject: &str) -> Option<&Held> {
        self.subjects
            .get(&hash)?
            .iter()
            .find(|held| *held.subject == *subject)
    }

    /// Makes room for `adding` more keys: sweeps the expired ones when the shard has grown
    /// enough since the last sweep, then, at the cap, forgets the keys nearest to full.
    fn make_room(&mut self, adding: usize, now: u64, cap: usize) {
        if self.keys + adding > self.sweep_at {
            self.sweep(now);
            self.sweep_at = (self.keys * 2).clamp(FIRST_SWEEP.min(cap), cap);
        }
        while self.keys + adding > cap && self.keys > 0 {
            self.forget_nearest_full();
        }
    }

    /// Drops every key whose budget is full again.
    fn sweep(&mut self, now: u64) {
        let mut dropped = 0;
        self.subjects.retain(|_, chain| {
            chain.retain_mut(|held| {
                let before = held.budgets.len();
                held.budgets.retain(|budget| budget.tat > now);
                dropped += before - held.budgets.len();
                !held.budgets.is_empty()
            });
            !chain.is_empty()
        });
        self.keys -= dropped;
    }

    /// Drops the key with the earliest `tat`: of all, the one whose forgetting gives back
    /// the least.
    fn forget_nearest_full(&mut self) {
        let nearest = self
            .subjects
            .iter()
            .flat_map(|(hash, chain)| {
                chain.iter().enumerate().flat_map(move |(at, held)| {
                    held.budgets
                        .iter()
                        .enumerate()
                        .map(move |(index, budget)| (budget.tat, *hash, at, index))
                })
            })
            .min_by_key(|(tat, ..)| *tat);
        let Some((_, hash, at, index)) = nearest else {
            return;
        };
        let Some(chain) = self.subjects.get_mut(&hash) else {
            return;
        };
        chain[at].budgets.swap_remove(index);
        if chain[at].budgets.is_empty() {
            chain.swap_remove(at);
        }
        if chain.is_empty() {
            self.subjects.remove(&hash);
        }
        self.keys -= 1;
    }
}

impl Held {
    fn budget(&self, key: u32) -> Option<&Budget> {
        self.budgets.iter().find(|budget| budget.key == key)
    }

    /// Each of `limits` with its budget, for limits that all have one.
    fn budgets_of<'h, 'l>(
        &'h mut self,
        limits: &'l [Limit],
    ) -> impl Iterator<Item = (&'h mut Budget, &'l Limit)> {
        self.budgets.iter_mut().filter_map(move |budget| {
            limits
                .iter()
                .find(|limit| limit.key == budget.key)
                .map(|limit| (budget, limit))
        })
    }
}

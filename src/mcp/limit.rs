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
//! Keys live in [`SHARDS`] shards picked by a hash of the subject, each a short-held mutex
//! over a map from subject to that subject's keys, so one caller's limits are checked and
//! spent together (a call that one limit refuses spends none of the others) and callers on
//! other shards never wait for each other. Memory is bounded: a shard forgets its expired
//! keys when it has grown to twice what it held after its last sweep, and at its share of
//! the hard cap ([`MAX_KEYS`] by default) it also forgets the key nearest to a full budget,
//! so that key's subject gets its budget back early, by less than any other key would.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use crate::catalog::Rate;

/// Keys kept at most, over all shards, by [`Limiter::default`]: about 100 bytes each.
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

/// Every key's budget, per process.
#[derive(Debug)]
pub struct Limiter {
    shards: Box<[Mutex<Shard>]>,
    hasher: RandomState,
    /// Keys a shard holds at most.
    shard_cap: usize,
    /// Time zero of the nanosecond clock [`Limiter::check`] reads.
    origin: Instant,
}

#[derive(Debug, Default)]
struct Shard {
    subjects: HashMap<Box<str>, Vec<Budget>>,
    /// Budgets held, over all subjects.
    keys: usize,
    /// Sweep expired keys when `keys` would pass this.
    sweep_at: usize,
}

#[derive(Debug, Clone, Copy)]
struct Budget {
    key: u32,
    /// The theoretical arrival time, in nanoseconds since the origin.
    tat: u64,
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
            hasher: RandomState::new(),
            shard_cap,
            origin: Instant::now(),
        }
    }

    /// Checks a call of `subject` against every one of `limits` now and, when it fits all,
    /// spends it from each.
    pub fn check(&self, subject: &str, limits: &[Limit]) -> Result<(), Refusal> {
        // Starting at 1 keeps 0 free to mean "never seen" (a full budget).
        let now = self.origin.elapsed().as_nanos() as u64 + 1;
        self.check_at(subject, limits, now)
    }

    /// [`Limiter::check`] at `now`, nanoseconds on the limiter's own clock: what the tests
    /// drive. `now` must not go back.
    pub fn check_at(&self, subject: &str, limits: &[Limit], now: u64) -> Result<(), Refusal> {
        if limits.is_empty() {
            return Ok(());
        }
        let index = self.hasher.hash_one(subject) as usize % self.shards.len();
        let mut shard = self.shards[index]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let held = shard.subjects.get(subject);
        let mut refusal: Option<Refusal> = None;
        let mut missing = 0;
        for (position, limit) in limits.iter().enumerate() {
            let tat = match held.and_then(|budgets| budgets.iter().find(|b| b.key == limit.key)) {
                Some(budget) => budget.tat,
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
        if let Some(refusal) = refusal {
            return Err(refusal);
        }
        if missing > 0 {
            shard.make_room(missing, now, self.shard_cap);
        }
        let shard = &mut *shard;
        let budgets = match shard.subjects.get_mut(subject) {
            Some(budgets) => budgets,
            None => shard
                .subjects
                .entry(subject.into())
                .or_insert_with(|| Vec::with_capacity(limits.len())),
        };
        for limit in limits {
            match budgets.iter_mut().find(|b| b.key == limit.key) {
                Some(budget) => budget.tat = budget.tat.max(now) + limit.interval,
                None => {
                    budgets.push(Budget {
                        key: limit.key,
                        tat: now + limit.interval,
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

impl Shard {
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
        self.subjects.retain(|_, budgets| {
            let before = budgets.len();
            budgets.retain(|budget| budget.tat > now);
            dropped += before - budgets.len();
            !budgets.is_empty()
        });
        self.keys -= dropped;
    }

    /// Drops the key with the earliest `tat`: of all, the one whose forgetting gives back
    /// the least.
    fn forget_nearest_full(&mut self) {
        let nearest = self
            .subjects
            .iter()
            .flat_map(|(subject, budgets)| {
                budgets
                    .iter()
                    .enumerate()
                    .map(move |(index, budget)| (budget.tat, subject, index))
            })
            .min_by_key(|(tat, _, _)| *tat)
            .map(|(_, subject, index)| (subject.clone(), index));
        let Some((subject, index)) = nearest else {
            return;
        };
        if let Some(budgets) = self.subjects.get_mut(&subject) {
            budgets.swap_remove(index);
            if budgets.is_empty() {
                self.subjects.remove(&subject);
            }
            self.keys -= 1;
        }
    }
}

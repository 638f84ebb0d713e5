//! What a rate-limit check adds to a call: `Limiter::check` for a call that must fit a tool
//! limit and a class limit, the clock read included, for one caller, for many callers in
//! turn, and from two threads at once (on one caller, the worst case: one shard's lock).
//!
//! `cargo bench --bench limit [-- CASE]` (release; CASE runs only the cases whose name holds
//! it). `FERRY_LIMIT_CALLS=N` sets the checks per case (default and most 1,000,000: the
//! burst of the rate checked, so every check fits and spends, the longer path); under
//! callgrind, two runs of one case with different N give instructions per check.

use std::hint::black_box;
use std::time::{Duration, Instant};

use ferry::catalog::Rate;
use ferry::mcp::limit::{Limit, Limiter};

#[allow(clippy::print_stdout)] // a benchmark reports on stdout
fn main() {
    let calls: usize = std::env::var("FERRY_LIMIT_CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000)
        .min(1_000_000);
    let only = std::env::args().skip(1).find(|arg| !arg.starts_with('-'));
    let runs = |case: &str| only.as_deref().is_none_or(|only| case.contains(only));
    // A burst no case spends, at a pace no key expires in while a case runs.
    let rate = Rate::parse("1000000/h").expect("rate");
    let limits = [Limit::new(2, rate), Limit::new(1, rate)];

    if runs("one-caller") {
        let limiter = Limiter::default();
        let start = Instant::now();
        for _ in 0..calls {
            black_box(limiter.check(black_box("alice@example.com"), &limits)).expect("fits");
        }
        report("one-caller", start.elapsed(), calls);
    }

    if runs("many-callers") {
        let subjects: Vec<String> = (0..10_000)
            .map(|n| format!("user-{n}@example.com"))
            .collect();
        let limiter = Limiter::default();
        let start = Instant::now();
        for n in 0..calls {
            let subject = &subjects[n % subjects.len()];
            black_box(limiter.check(black_box(subject), &limits)).expect("fits");
        }
        report("many-callers (10,000)", start.elapsed(), calls);
    }

    for (case, shared) in [
        ("two-threads-one-caller", true),
        ("two-threads-two-callers", false),
    ] {
        if !runs(case) {
            continue;
        }
        let limiter = Limiter::default();
        let start = Instant::now();
        std::thread::scope(|scope| {
            for thread in 0..2 {
                let (limiter, limits) = (&limiter, &limits);
                scope.spawn(move || {
                    let subject = if shared {
                        "alice"
                    } else {
                        ["alice", "bob"][thread]
                    };
                    for _ in 0..calls / 2 {
                        black_box(limiter.check(black_box(subject), limits)).expect("fits");
                    }
                });
            }
        });
        report(case, start.elapsed(), calls);
    }
}

#[allow(clippy::print_stdout)]
fn report(case: &str, elapsed: Duration, calls: usize) {
    println!(
        "{case:<26} {:>7.1} ns per check, wall clock ({calls} checks in {:.0} ms)",
        elapsed.as_nanos() as f64 / calls as f64,
        elapsed.as_secs_f64() * 1000.0
    );
}

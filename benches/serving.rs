//! What a request pays to read the server currently served ([`ferry::mcp::Serving::load`],
//! the one step reloading adds to every request), beside cloning a plain `Arc<Server>` as
//! requests did before, on one thread and on two at once, with and without a reload
//! swapping the server meanwhile.
//!
//! `cargo bench --bench serving` (release).

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ferry::catalog::{Catalog, ServerInfo};
use ferry::mcp::{Server, ServerOptions, Serving};

const LOADS: u32 = 20_000_000;

#[allow(clippy::print_stdout)] // a benchmark reports on stdout
fn main() {
    let server = || Arc::new(Server::new(&catalog(), None, ServerOptions::default()));
    let plain = server();
    let serving = Serving::new(server());
    println!("per request, {LOADS} each, best of 3:");
    println!(
        "  Arc::clone, 1 thread:       {:>6.2} ns",
        best(|| per_load(|| drop(black_box(Arc::clone(&plain)))))
    );
    println!(
        "  Serving::load, 1 thread:    {:>6.2} ns",
        best(|| per_load(|| drop(black_box(serving.load()))))
    );
    println!(
        "  Arc::clone, 2 threads:      {:>6.2} ns",
        best(|| on_two(|| per_load(|| drop(black_box(Arc::clone(&plain))))))
    );
    println!(
        "  Serving::load, 2 threads:   {:>6.2} ns",
        best(|| on_two(|| per_load(|| drop(black_box(serving.load())))))
    );
    let swapping = AtomicBool::new(true);
    let reloads = std::thread::scope(|scope| {
        let reloader = scope.spawn(|| {
            let mut reloads = 0u64;
            while swapping.load(Ordering::Relaxed) {
                serving.replace(server(), false);
                reloads += 1;
                std::thread::sleep(Duration::from_millis(1));
            }
            reloads
        });
        println!(
            "  Serving::load, 1 thread, a reload every ms: {:>6.2} ns",
            best(|| per_load(|| drop(black_box(serving.load()))))
        );
        swapping.store(false, Ordering::Relaxed);
        reloader.join().unwrap_or_default()
    });
    println!("  ({reloads} reloads meanwhile)");
}

/// Nanoseconds per call of `load`.
fn per_load(load: impl Fn()) -> f64 {
    let started = Instant::now();
    for _ in 0..LOADS {
        load();
    }
    started.elapsed().as_nanos() as f64 / f64::from(LOADS)
}

/// Runs `measure` on two threads at once; the slower one's figure.
fn on_two(measure: impl Fn() -> f64 + Sync) -> f64 {
    std::thread::scope(|scope| {
        let other = scope.spawn(&measure);
        let here = measure();
        here.max(other.join().unwrap_or(f64::NAN))
    })
}

fn best(measure: impl Fn() -> f64) -> f64 {
    (0..3).map(|_| measure()).fold(f64::INFINITY, f64::min)
}

fn catalog() -> Catalog {
    let server = ServerInfo {
        name: "bench".into(),
        title: None,
        version: "1".into(),
        instructions: None,
    };
    Catalog::new(server, None, Vec::new())
}

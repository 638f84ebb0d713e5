//! The `ferry` command: parses arguments, sets up logging, calls the library, and turns an
//! error into an exit code (0 clean, 1 problems found, 2 could not run).

use std::process::ExitCode;

use clap::Parser;

mod cli;

// A tool call allocates many small, short-lived values across the runtime's threads; glibc's
// malloc spent about a sixth of ferry's CPU on them, partly waiting on its arena locks.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    give_back_freed_memory_sooner();
    ferry::serve::when_serving_begins(keep_freed_memory_while_serving);
    let args = cli::Args::parse();
    cli::init_logging(args.verbose, args.log_format);
    match cli::run(args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("ferry: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// `mi_option_purge_delay` in mimalloc.h (15 in mimalloc 2 and 3), which libmimalloc-sys
/// does not name.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// mimalloc 3 gives memory back to the system a second after it is freed (`purge_delay`,
/// 1000 ms); start-up frees most of what it allocates as it goes (each tool's schema tree
/// once its text is written, the document once compiled), and within that second the pages
/// pile up: serving 5,000 operations peaked at 140 MiB resident with the second, 119 MiB
/// with 10 ms (mimalloc 2's default). Serving lengthens it again
/// ([`keep_freed_memory_while_serving`]).
fn give_back_freed_memory_sooner() {
    // Set before any thread but this one runs.
    set_purge_delay(10);
}

/// Once serving, 10 ms is too soon: under load at concurrency 64 a page freed by one call is
/// given back before another call takes it, and taken again with a page fault (0.15 a call,
/// with a `madvise` about every thirty calls: about 0.75 µs of CPU a call). At 100 ms the
/// faults all but stop (0.02 a call) and an idle server still gives its memory back within
/// a tenth of a second. Start-up is over by then, so its peak is what the 10 ms made it.
fn keep_freed_memory_while_serving() {
    set_purge_delay(100);
}

/// Sets mimalloc's purge delay, unless the environment gave one (`MIMALLOC_PURGE_DELAY`, or
/// its older name `MIMALLOC_RESET_DELAY`, read by mimalloc as it loads): that always wins.
fn set_purge_delay(milliseconds: std::ffi::c_long) {
    if ["MIMALLOC_PURGE_DELAY", "MIMALLOC_RESET_DELAY"]
        .iter()
        .any(|name| std::env::var_os(name).is_some())
    {
        return;
    }
    // SAFETY: the option is one aligned machine word that mimalloc reads, unlocked, each time
    // it decides whether to purge; `mi_option_set` writes only that word (and its
    // initialised flag), so a thread purging meanwhile reads either the old delay or the new.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, milliseconds) };
}

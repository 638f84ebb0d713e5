#!/usr/bin/env bash
# Fuzzes ferry's parsers, then minimizes what was found into the kept corpus.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Runs each target (all of them by default; `cargo +nightly fuzz list` names them) for
# SECONDS (default 300), one after the other with one job, starting from the hand-written
# seeds (fuzz/seeds/<target>), the kept corpus (fuzz/corpus/<target>) and the inputs found
# before (fuzz/work/<target>, not kept). Then `cargo fuzz cmin` reduces the working corpus
# to the inputs that reach new code, and the fewest inputs of at most 512 bytes that reach
# every edge those reach replace the kept corpus. `cargo test` replays seeds and corpus. A
# crash does not stop the run (libFuzzer's fork mode goes on): its input is left in
# fuzz/artifacts/<target>/, listed at the end, and the script fails. Once it is fixed, keep
# the input in fuzz/regressions/<target>/ so that the tests replay it for ever.
set -euo pipefail

cd "$(dirname "$0")/../fuzz"
seconds="${1:-300}"
shift || true
if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
# Small inputs keep the corpus small and each run quick; a few KB reach every parser's depth.
max_len="${FUZZ_MAX_LEN:-4096}"
keep_len="${FUZZ_KEEP_LEN:-512}"

crashed=0
for target in "${targets[@]}"; do
    mkdir -p "work/$target" "corpus/$target" "seeds/$target"
    echo "== $target: ${seconds}s"
    cargo +nightly fuzz run "$target" "work/$target" "corpus/$target" "seeds/$target" -- \
        -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 ||
        true
    # The kept corpus: the fewest inputs that reach every edge the kept and the new inputs
    # reach (hit counts left out, which keeps it a fraction of the working corpus's size),
    cargo +nightly fuzz cmin "$target" "work/$target" -- -max_len="$max_len"
    # of at most $keep_len bytes: the repository keeps a few hundred KB in all.
    rm -rf "corpus/$target.new" "work/$target.small"
    mkdir "corpus/$target.new" "work/$target.small"
    for dir in "corpus/$target" "work/$target"; do
        find "$dir" -type f -size -"$((keep_len + 1))"c -exec cp -t "work/$target.small" {} +
    done
    cargo +nightly fuzz run "$target" "corpus/$target.new" "work/$target.small" -- \
        -merge=1 -use_counters=0 -max_len="$keep_len"
    rm -rf "corpus/$target" "work/$target.small"
    mv "corpus/$target.new" "corpus/$target"
    if compgen -G "artifacts/$target/*" >/dev/null; then
        echo "== $target: inputs that failed:"
        ls -l "artifacts/$target"
        crashed=1
    fi
done
du -sh corpus
exit "$crashed"

//! Replays the hand-written seeds (`fuzz/seeds/<target>/`), the kept fuzzing corpus
//! (`fuzz/corpus/<target>/`) and every input a harness once failed on
//! (`fuzz/regressions/<target>/`) through the harnesses of `ferry::fuzzing`: what
//! `scripts/fuzz.sh` found is checked on every test run, without fuzzing.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

/// Inputs that show a defect not mended yet: each still fails its harness. When one passes,
/// the defect is gone and its line here goes.
const KNOWN: &[(&str, &str)] = &[
    // Empty: the echoed-secret inputs (issue 9, defect 1) and the 2^64 - 1 seconds
    // Retry-After (defect 2) pass since their fixes. An input that shows a defect not yet
    // fixed is listed here, with a FIXME naming it.
];

#[test]
fn every_kept_fuzzing_input_passes_its_harness() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut replayed = 0;
    let mut unexpected = Vec::new();
    for (target, harness) in ferry::fuzzing::TARGETS {
        for kept in ["seeds", "corpus", "regressions"] {
            let Ok(entries) = std::fs::read_dir(root.join(kept).join(target)) else {
                continue;
            };
            let mut paths: Vec<_> = entries
                .filter_map(|entry| Some(entry.ok()?.path()))
                .collect();
            paths.sort();
            for path in paths {
                let data = std::fs::read(&path).expect("a corpus file is readable");
                let name = path
                    .file_name()
                    .and_then(|name| name.to_str())
                    .unwrap_or("");
                let failed = catch_unwind(AssertUnwindSafe(|| harness(&data))).is_err();
                let known = KNOWN.contains(&(*target, name));
                replayed += 1;
                if failed != known {
                    let what = if failed {
                        "fails"
                    } else {
                        "passes, but is listed as known"
                    };
                    unexpected.push(format!("fuzz/{kept}/{target}/{name} {what}"));
                }
            }
        }
    }
    assert!(
        replayed > 50,
        "the corpus is missing: only {replayed} inputs"
    );
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n"));
}

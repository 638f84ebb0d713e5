use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::*;

fn folder(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ferry-file-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

#[test]
fn a_regular_file_is_read_whole_up_to_its_limit() {
    let dir = folder("regular");
    let path = dir.join("ferry.yaml");
    std::fs::write(&path, "tools: {}\n").expect("write");
    assert_eq!(read_text(&path, 10).expect("read"), "tools: {}\n");
    assert!(matches!(
        read_text(&path, 9),
        Err(FileError::TooLarge { limit: 9 })
    ));
    std::fs::write(&path, [0xff, 0xfe]).expect("write");
    assert!(matches!(read_text(&path, 10), Err(FileError::NotText)));
    assert!(matches!(
        read(&dir.join("missing"), 10),
        Err(FileError::Io(error)) if error.kind() == std::io::ErrorKind::NotFound
    ));
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 23: a FIFO in the curation's place blocked the reload thread for good, and
/// `/dev/zero` grew memory to a gigabyte in seconds.
#[test]
fn what_is_not_a_regular_file_is_refused_at_once() {
    let dir = folder("special");
    let fifo = dir.join("ferry.yaml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let started = Instant::now();
    for path in [fifo.as_path(), Path::new("/dev/zero"), dir.as_path()] {
        assert!(
            matches!(read(path, 1 << 30), Err(FileError::NotRegular)),
            "{}",
            path.display()
        );
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    let _ = std::fs::remove_dir_all(dir);
}

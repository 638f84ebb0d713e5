//! Reading a file ferry is given (the curation, a document, the lock) by one rule: only a
//! regular file, at most a given size, and nothing that can wait. The file is opened without
//! blocking and its type is judged from the open handle, so a FIFO (whose open and read
//! would wait for a writer forever) or a device such as `/dev/zero` (which never ends) is
//! refused at once, and what is judged is what is read: nothing can be swapped in between.

use std::fs::File;
use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A directory, FIFO, socket or device.
    #[error("not a regular file")]
    NotRegular,
    #[error("larger than {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("not UTF-8 text")]
    NotText,
}

/// The bytes of the regular file at `path`, at most `limit` of them.
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    // Opening a FIFO to read waits for a writer unless it is opened without blocking; on a
    // regular file the flag changes nothing.
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(FileError::NotRegular);
    }
    if metadata.len() > limit {
        return Err(FileError::TooLarge { limit });
    }
    // Sized by the file, the text is read into one allocation rather than grown by doubling
    // (a 47 MB document would take 64 MiB, and copies on the way).
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    // A file that grows while it is read is still cut at the limit.
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(FileError::TooLarge { limit });
    }
    Ok(bytes)
}

/// [`read`], as UTF-8 text.
pub fn read_text(path: &Path, limit: u64) -> Result<String, FileError> {
    String::from_utf8(read(path, limit)?).map_err(|_| FileError::NotText)
}

#[cfg(test)]
mod tests;

//! Loading a document and the files its `$ref`s reach, from disk or over http(s).
//!
//! [`Loader`] holds what is loaded and what is wanted next; [`load_with`] (from disk) and
//! [`load_url`] (over http(s)) drive it, each fetching the way it can. A file that cannot be
//! read, parsed or reached is recorded by name with the reason; only the root failing is an
//! error.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::file::FileError;

use super::base::Bases;
use super::index::{Index, RefSite};
use super::parse::{on_deep_stack, on_new_deep_thread};
use super::{Document, FileId, FileKey, LoadError, LoadOptions, SourceFile, SpecVersion};
use super::{detect_version, is_remote, parse_with};

/// Reads the root document at `path` and every file its `$ref`s reach, confined to the root's
/// directory, with the default [`LoadOptions`].
pub fn load(path: &Path) -> Result<Document, LoadError> {
    load_with(path, &LoadOptions::default())
}

/// Reads the root document at `path` and every file its `$ref`s reach, confined to
/// `options.root_dir` (default: the root's own directory).
///
/// Remote references, when allowed, are fetched on a thread of their own, so this may be called
/// from inside an async runtime as well as outside one.
pub fn load_with(path: &Path, options: &LoadOptions) -> Result<Document, LoadError> {
    let load = || load_here(path, options);
    on_deep_stack(options.max_depth, load).unwrap_or_else(|_| load_here(path, options))
}

/// Reads the one file at `path`, confined and budgeted as a document's root is, following no
/// `$ref`: for a document of another kind written beside the OpenAPI one (an Arazzo
/// document), which ferry reads as the value it parses to. Its name is relative to
/// `options.root_dir` (default: its own directory).
pub fn load_file(path: &Path, options: &LoadOptions) -> Result<SourceFile, LoadError> {
    let load = || load_file_here(path, options);
    on_deep_stack(options.max_depth, load).unwrap_or_else(|_| load_file_here(path, options))
}

fn load_file_here(path: &Path, options: &LoadOptions) -> Result<SourceFile, LoadError> {
    let (root_dir, name) = confined_root(path, options)?;
    let text = read_local(&root_dir, &name, options.max_file_bytes)?;
    let value = parse_with(&text, &name, options)?;
    Ok(SourceFile { name, value })
}

/// [`load_with`] on the current thread, which is where its YAML files are parsed unless the
/// thread's stack is known to be deep enough.
fn load_here(path: &Path, options: &LoadOptions) -> Result<Document, LoadError> {
    let (root_dir, name) = confined_root(path, options)?;
    let text = read_local(&root_dir, &name, options.max_file_bytes)?;
    let mut loader = Loader::new(options, Some(root_dir));
    let version = loader.add_root(name, &text)?;
    while let Some(name) = loader.next_wanted() {
        let fetched = match &loader.local_root {
            Some(root) if !is_remote(&name) => read_local(root, &name, options.max_file_bytes),
            _ => fetch_blocking(&name, options),
        };
        loader.accept(name, fetched);
    }
    Ok(loader.finish(version))
}

/// The canonical directory a root file at `path` is confined to, and the file's name in it.
fn confined_root(path: &Path, options: &LoadOptions) -> Result<(PathBuf, String), LoadError> {
    let display = path.display().to_string();
    let read_error = |error| LoadError::Read {
        path: display.clone(),
        error,
    };
    let canonical = std::fs::canonicalize(path).map_err(read_error)?;
    // The root document is trusted as the user named it, symlink or not; what it references
    // must stay beside it, or under the directory the user chose.
    let root_dir = match &options.root_dir {
        Some(dir) => std::fs::canonicalize(dir).map_err(|error| LoadError::Read {
            path: dir.display().to_string(),
            error,
        })?,
        None => canonical
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/")),
    };
    let name = relative_name(&root_dir, &canonical).ok_or_else(|| LoadError::OutsideRoot {
        name: display.clone(),
        root: format!("the root directory {}", root_dir.display()),
    })?;
    Ok((root_dir, name))
}

/// Fetches the root document at an `http(s)` URL, with the size and time limits of `options`.
/// Its relative references resolve against the URL and are fetched only when
/// `options.allow_remote` is set; otherwise they are recorded as remote and not followed.
pub async fn load_url(url: &str, options: &LoadOptions) -> Result<Document, LoadError> {
    let parsed = url::Url::parse(url).map_err(|error| fetch_error(url, error.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(fetch_error(url, "only http and https URLs can be fetched"));
    }
    let client = client(options).map_err(|error| fetch_error(url, error.to_string()))?;
    let name = {
        let mut without_fragment = parsed;
        without_fragment.set_fragment(None);
        without_fragment.to_string()
    };
    let text = fetch(&client, &name, options).await?;
    let mut loader = Loader::new(options, None);
    let version = loader.add_root(name, &text)?;
    while let Some(name) = loader.next_wanted() {
        let fetched = fetch(&client, &name, options).await;
        loader.accept(name, fetched);
    }
    Ok(loader.finish(version))
}

/// [`load_url`] for synchronous callers, inside an async runtime or not: it runs on a thread
/// of its own, with a runtime of its own.
pub fn load_url_blocking(url: &str, options: &LoadOptions) -> Result<Document, LoadError> {
    let load = || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| fetch_error(url, error.to_string()))?;
        runtime.block_on(load_url(url, options))
    };
    on_new_deep_thread(options.max_depth, load)
        .map_err(|error| fetch_error(url, error.to_string()))?
}

/// What has been loaded, what failed, and what is still wanted.
struct Loader<'a> {
    options: &'a LoadOptions,
    /// The canonical directory local files must stay in; `None` for a fetched root, whose
    /// references never reach the local disk.
    local_root: Option<PathBuf>,
    files: Vec<SourceFile>,
    failed: HashMap<String, String>,
    /// Names loaded, failed or queued: each file is wanted once.
    seen: HashSet<String>,
    queue: VecDeque<String>,
    /// The `$id`s and `$anchor`s (and `$self`s) of the files scanned so far.
    index: Index,
    /// The base URI of each file loaded so far, by the `$self` it declares or where it was
    /// read.
    bases: Bases,
    /// Every `$ref` in the files scanned so far, for [`Document::assemble`] to check.
    sites: Vec<RefSite>,
    /// How many of `files` have been indexed and had their references queued.
    scanned: usize,
    total_bytes: u64,
}

impl<'a> Loader<'a> {
    fn new(options: &'a LoadOptions, local_root: Option<PathBuf>) -> Loader<'a> {
        Loader {
            options,
            local_root,
            files: Vec::new(),
            failed: HashMap::new(),
            seen: HashSet::new(),
            queue: VecDeque::new(),
            index: Index::default(),
            bases: Bases::default(),
            sites: Vec::new(),
            scanned: 0,
            total_bytes: 0,
        }
    }

    /// Parses the root document; any failure here is the load's failure.
    fn add_root(&mut self, name: String, text: &str) -> Result<SpecVersion, LoadError> {
        let value = parse_with(text, &name, self.options)?;
        let version = detect_version(&value, &name)?;
        self.bases = Bases::new(version == SpecVersion::OpenApi32);
        self.total_bytes = text.len() as u64;
        self.seen.insert(name.clone());
        self.files.push(SourceFile { name, value });
        Ok(version)
    }

    /// The next file to fetch, after indexing the files loaded so far and queuing the files
    /// their references name. Indexing lists a file's `$ref`s too, so each file is walked once.
    fn next_wanted(&mut self) -> Option<String> {
        while self.scanned < self.files.len() {
            let file = &self.files[self.scanned];
            let first_site = self.sites.len();
            if let Some(declared) = self.bases.add(&file.name, &file.value, self.scanned == 0) {
                self.index.add_resource(&declared, FileId(self.scanned));
            }
            if let Some(base) = self.bases.base(&file.name) {
                self.index
                    .add_file(FileId(self.scanned), &base, &file.value, &mut self.sites);
            }
            let mut wanted = Vec::new();
            for site in &self.sites[first_site..] {
                let path = site.reference.split('#').next().unwrap_or("");
                if path.is_empty() {
                    continue;
                }
                match self.bases.file_key(&file.name, path) {
                    FileKey::Local(name) if self.local_root.is_some() => wanted.push(name),
                    FileKey::Remote(name) if self.options.allow_remote => wanted.push(name),
                    // Refused and not-allowed references are reported when the document is
                    // assembled, where each `$ref` is resolved.
                    _ => {}
                }
            }
            for name in wanted {
                if self.seen.insert(name.clone()) {
                    self.queue.push_back(name);
                }
            }
            self.scanned += 1;
        }
        self.queue.pop_front()
    }

    /// Takes a fetched file (or why it could not be fetched).
    fn accept(&mut self, name: String, fetched: Result<String, LoadError>) {
        let value = fetched.and_then(|text| {
            self.charge(&name, &text)?;
            parse_referenced(&name, text, self.options)
        });
        match value {
            Ok(value) => self.files.push(SourceFile { name, value }),
            Err(error) => {
                tracing::debug!(file = %name, %error, "referenced file not loaded");
                self.failed.insert(name, error.to_string());
            }
        }
    }

    /// Counts a file against the document's budgets of files and bytes.
    fn charge(&mut self, name: &str, text: &str) -> Result<(), LoadError> {
        let budget = |message| LoadError::Budget {
            name: name.to_string(),
            message,
        };
        if self.files.len() >= self.options.max_files {
            let limit = self.options.max_files;
            return Err(budget(format!(
                "the document spans more than {limit} files"
            )));
        }
        self.total_bytes += text.len() as u64;
        if self.total_bytes > self.options.max_total_bytes {
            let limit = self.options.max_total_bytes;
            return Err(budget(format!(
                "the document's files add up to more than {limit} bytes"
            )));
        }
        Ok(())
    }

    /// The document, once [`Loader::next_wanted`] has answered `None`: every file indexed.
    fn finish(self, version: SpecVersion) -> Document {
        debug_assert_eq!(
            self.scanned,
            self.files.len(),
            "a loaded file was not indexed"
        );
        let failed = self.failed.len();
        let document = Document::assemble(
            version,
            self.files,
            self.failed,
            self.options.allow_remote,
            (self.index, self.bases),
            self.sites,
        );
        tracing::debug!(
            files = document.files.len(),
            failed,
            bytes = self.total_bytes,
            problems = document.problems().len(),
            "document loaded"
        );
        document
    }
}

/// Parses a referenced file: JSON or YAML by its extension (or when it has none); any other
/// file, such as the code samples of `x-codeSamples`, is kept as one string, as bundlers do.
fn parse_referenced(name: &str, text: String, options: &LoadOptions) -> Result<Value, LoadError> {
    let path = name.split(['?', '#']).next().unwrap_or(name);
    let file_name = path.rsplit('/').next().unwrap_or(path);
    let extension = file_name
        .rsplit_once('.')
        .map(|(_, ext)| ext.to_ascii_lowercase());
    match extension.as_deref() {
        None | Some("json" | "yaml" | "yml") => parse_with(&text, name, options),
        Some(_) => Ok(Value::String(text)),
    }
}

/// `path` relative to `root`, `/`-separated; `None` when it is not inside.
fn relative_name(root: &Path, path: &Path) -> Option<String> {
    let relative = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Reads the file `name` under the canonical directory `root`, refusing what resolves outside
/// it through a symlink, what is not a regular file (a FIFO would block forever), and what is
/// over `limit` bytes. Errors name the file by `name`, not by its local path.
fn read_local(root: &Path, name: &str, limit: u64) -> Result<String, LoadError> {
    let read_error = |error| LoadError::Read {
        path: name.to_string(),
        error,
    };
    let canonical = std::fs::canonicalize(root.join(name)).map_err(read_error)?;
    if !canonical.starts_with(root) {
        return Err(LoadError::OutsideRoot {
            name: name.to_string(),
            root: "the root directory".into(),
        });
    }
    crate::file::read_text(&canonical, limit).map_err(|error| match error {
        FileError::Io(error) => read_error(error),
        FileError::NotRegular => read_error(std::io::Error::other("not a regular file")),
        FileError::TooLarge { limit } => LoadError::TooLarge {
            name: name.to_string(),
            limit,
        },
        FileError::NotText => LoadError::Syntax {
            name: name.to_string(),
            message: "not UTF-8 text".to_string(),
        },
    })
}

fn client(options: &LoadOptions) -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .timeout(options.fetch_timeout)
        .redirect(reqwest::redirect::Policy::limited(5))
        .build()
}

/// Fetches `url` as text, at most `options.max_file_bytes` of it, all of it (connecting,
/// the answer's head and its whole body) within `options.fetch_timeout`.
async fn fetch(
    client: &reqwest::Client,
    url: &str,
    options: &LoadOptions,
) -> Result<String, LoadError> {
    tokio::time::timeout(options.fetch_timeout, fetch_untimed(client, url, options))
        .await
        .unwrap_or_else(|_| Err(timed_out(url, options)))
}

/// [`fetch`] without its own deadline (the client's timeout still applies).
async fn fetch_untimed(
    client: &reqwest::Client,
    url: &str,
    options: &LoadOptions,
) -> Result<String, LoadError> {
    // The client's own timeout, run out in the middle of the body, is reported as a body
    // that could not be decoded; it is the same deadline.
    let failed = |error: reqwest::Error| {
        if error.is_timeout() {
            timed_out(url, options)
        } else {
            fetch_error(url, error.without_url().to_string())
        }
    };
    let too_large = || LoadError::TooLarge {
        name: url.to_string(),
        limit: options.max_file_bytes,
    };
    let mut response = client.get(url).send().await.map_err(failed)?;
    let status = response.status();
    if !status.is_success() {
        return Err(fetch_error(url, format!("the server answered {status}")));
    }
    if response
        .content_length()
        .is_some_and(|len| len > options.max_file_bytes)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        body.extend_from_slice(&chunk);
        if body.len() as u64 > options.max_file_bytes {
            return Err(too_large());
        }
    }
    String::from_utf8(body).map_err(|_| LoadError::Syntax {
        name: url.to_string(),
        message: "not UTF-8 text".into(),
    })
}

/// [`fetch`] from synchronous code: on a thread of its own with its own runtime, since the
/// caller may or may not be inside one (blocking inside a runtime panics).
fn fetch_blocking(url: &str, options: &LoadOptions) -> Result<String, LoadError> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|error| fetch_error(url, error.to_string()))?;
                let client =
                    client(options).map_err(|error| fetch_error(url, error.to_string()))?;
                runtime.block_on(fetch(&client, url, options))
            })
            .join()
            .unwrap_or_else(|_| Err(fetch_error(url, "the fetch panicked")))
    })
}

/// The [`LoadError::Fetch`] of a fetch of `url` that ran out of time.
fn timed_out(url: &str, options: &LoadOptions) -> LoadError {
    fetch_error(
        url,
        format!(
            "the server did not send the whole document within {} ms (fetch timeout)",
            options.fetch_timeout.as_millis()
        ),
    )
}

/// A [`LoadError::Fetch`] of `url`.
fn fetch_error(url: &str, message: impl Into<String>) -> LoadError {
    LoadError::Fetch {
        url: url.to_string(),
        message: message.into(),
    }
}

//! Reading OpenAPI documents: JSON or YAML, one file or many joined by `$ref`s.
//!
//! A [`Document`] keeps every file as the `serde_json::Value` it parsed to, untouched; the
//! catalog reads it through [`Document::resolve`]. Nothing here reinterprets schemas: the
//! 2.0 and 3.0 dialects are translated where tool schemas are built.
//!
//! Loading is confined: a `$ref` may not leave the root document's directory tree (by `..`, an
//! absolute path, a `file:` URI or a symlink), never reaches the network unless
//! [`LoadOptions::allow_remote`] says so, and every file is parsed under size and depth
//! budgets. Only the root document failing is a [`LoadError`]; a referenced file that cannot be
//! read is recorded, so that only what uses it fails (see [`Document::problems`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

mod base;
mod index;
mod load;
mod parse;
mod pointer;

pub use base::declared_self;
pub use load::{load, load_file, load_url, load_url_blocking, load_with};
pub use parse::{parse, parse_with, yaml_message};
pub use pointer::{escape_token, pointer_get, unescape_token};

/// Which OpenAPI dialect a document is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecVersion {
    Swagger2,
    OpenApi30,
    OpenApi31,
    /// 3.2.x: read as 3.1 is, plus what 3.2 added (the `query` and `additionalOperations`
    /// fields of a path item, `querystring` parameters, `$self`).
    OpenApi32,
}

impl SpecVersion {
    /// Whether its Schema Object is JSON Schema 2020-12 (3.1 and later), rather than the
    /// subset of an earlier draft that 2.0 and 3.0 define.
    pub fn is_json_schema_2020(self) -> bool {
        matches!(self, SpecVersion::OpenApi31 | SpecVersion::OpenApi32)
    }
}

/// Index of a file in [`Document::files`]; the root document is `FileId(0)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub usize);

/// A loaded document: the root file and every file its `$ref`s reach.
#[derive(Debug, Clone)]
pub struct Document {
    pub version: SpecVersion,
    pub files: Vec<SourceFile>,
    /// Which file has which name, for resolving references between files.
    by_name: HashMap<String, FileId>,
    /// Files that a `$ref` named but that could not be loaded, with the reason.
    failed: HashMap<String, String>,
    /// `$id`s and `$anchor`s of OpenAPI 3.1 schemas, and OpenAPI 3.2 `$self`s.
    index: index::Index,
    /// Each file's base URI, and where a URI leads.
    bases: base::Bases,
    /// Whether remote files were allowed, to tell "not allowed" from "not loaded".
    allow_remote: bool,
    problems: Vec<Problem>,
}

#[derive(Debug, Clone)]
pub struct SourceFile {
    /// For a local file, its path relative to the root directory (`/`-separated; for the root
    /// document, its file name, or empty for a document built in memory); for a fetched file,
    /// its URL.
    pub name: String,
    pub value: Value,
}

/// What a `$ref` points at.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    pub file: FileId,
    /// JSON pointer inside `file` (empty for the whole file), percent-decoded and in RFC 6901
    /// form, so that `(file, pointer)` names one value however the reference was spelled.
    pub pointer: String,
    pub value: &'a Value,
}

/// A `$ref` in the loaded files that does not resolve; kept so that only what uses it fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file the `$ref` is written in.
    pub file: FileId,
    /// Where the `$ref` is (`.../$ref`), as a JSON pointer into `file`.
    pub pointer: String,
    pub error: RefError,
}

/// Limits and permissions for [`load_with`] and [`load_url`].
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Fetch `http://` and `https://` references (and resolve the relative references of a
    /// fetched document against its URL). Off by default: a document must not make ferry
    /// reach the network by itself.
    pub allow_remote: bool,
    /// The directory tree local references must stay in; default: the root document's own
    /// directory. The root document must be inside it.
    pub root_dir: Option<PathBuf>,
    /// Largest single file, in bytes (default 64 MiB; the GitHub document is 13 MB).
    pub max_file_bytes: u64,
    /// Largest sum of all files, in bytes (default 256 MiB).
    pub max_total_bytes: u64,
    /// Most files one document may span (default 10,000; DigitalOcean's spans 2,850).
    pub max_files: usize,
    /// Deepest nesting of arrays and objects in a file (default 128, serde_json's own limit).
    pub max_depth: usize,
    /// Most YAML events recorded under anchors, and most replayed through aliases, in a file
    /// (default 25,000): what stops a "billion laughs" document, in a fraction of a second. The
    /// research documents use no aliases; one that shares a 100-event schema through 250 of
    /// them still fits.
    pub max_yaml_alias_events: usize,
    /// Time allowed for each fetch over http(s) (default 30 s).
    pub fetch_timeout: Duration,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            allow_remote: false,
            root_dir: None,
            max_file_bytes: 64 * 1024 * 1024,
            max_total_bytes: 256 * 1024 * 1024,
            max_files: 10_000,
            max_depth: 128,
            max_yaml_alias_events: 25_000,
            fetch_timeout: Duration::from_secs(30),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("{name} is not valid JSON or YAML: {message}")]
    Syntax { name: String, message: String },
    #[error("{name} is larger than the limit of {limit} bytes")]
    TooLarge { name: String, limit: u64 },
    #[error("{name} nests arrays and objects deeper than the limit of {limit}")]
    TooDeep { name: String, limit: usize },
    #[error("{name} is over budget: {message}")]
    Budget { name: String, message: String },
    #[error("{name} is outside {root}")]
    OutsideRoot { name: String, root: String },
    #[error("cannot fetch {url}: {message}")]
    Fetch { url: String, message: String },
    #[error("{0} is not an OpenAPI document (no `openapi` or `swagger` version)")]
    NotOpenApi(String),
    #[error("{name}: unsupported version {version:?} (ferry reads 2.0, 3.0.x, 3.1.x and 3.2.x)")]
    UnsupportedVersion { name: String, version: String },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefError {
    #[error("`$ref` {0:?} points at nothing")]
    Dangling(String),
    #[error("`$ref` {0:?} leaves the document's directory")]
    OutsideRoot(String),
    #[error("`$ref` {0:?} is remote, and remote references are not allowed")]
    Remote(String),
    #[error("`$ref` {0:?} names a file that was not loaded")]
    NotLoaded(String),
    #[error("`$ref` {reference:?} names a file that could not be loaded: {reason}")]
    Unreadable { reference: String, reason: String },
}

impl Document {
    /// A document already in memory, with no other files; its references to other files resolve
    /// to [`RefError::NotLoaded`].
    pub fn from_value(value: Value) -> Result<Document, LoadError> {
        let version = detect_version(&value, "openapi document")?;
        let mut index = index::Index::default();
        let mut bases = base::Bases::new(version == SpecVersion::OpenApi32);
        let mut sites = Vec::new();
        if let Some(declared) = bases.add("", &value, true) {
            index.add_resource(&declared, FileId(0));
        }
        if let Some(base) = bases.base("") {
            index.add_file(FileId(0), &base, &value, &mut sites);
        }
        let files = vec![SourceFile {
            name: String::new(),
            value,
        }];
        Ok(Document::assemble(
            version,
            files,
            HashMap::new(),
            false,
            (index, bases),
            sites,
        ))
    }

    pub fn root(&self) -> &Value {
        &self.files[0].value
    }

    pub fn file(&self, file: FileId) -> &SourceFile {
        &self.files[file.0]
    }

    /// Every `$ref` (a string under a `$ref` key) in the loaded files that does not resolve,
    /// in file order. Refs in places the catalog never reads (examples, `x-codeSamples`) are
    /// listed too: it is for the reader to decide which matter.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// Resolves `reference` as written in `from`.
    ///
    /// The part before `#` names a file (relative to `from`'s, or to the `$self` it declares;
    /// or an `http(s)` URL when remote refs were allowed), an OpenAPI 3.1 `$id` or an OpenAPI
    /// 3.2 `$self`; the fragment is an RFC 6901 pointer (percent-encoded or not) or a
    /// `$anchor` name.
    ///
    /// A simplification of JSON Schema, exact for the documents we have seen: a reference
    /// without a path (`#/components/...`, `#name`) is taken relative to the file it is written
    /// in, even inside a schema with its own `$id`, since that is what OpenAPI tooling does and
    /// what authors mean; `$id`s only come into play for references with a path.
    pub fn resolve(&self, from: FileId, reference: &str) -> Result<Target<'_>, RefError> {
        let (path, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let dangling = || RefError::Dangling(reference.to_string());
        if !path.is_empty()
            && let Some(base) = self.bases.base(self.file_name(from))
            && let Some(found) = self.index.resolve_id(&base, path, fragment)
        {
            let (file, pointer) = found.ok_or_else(dangling)?;
            let value = pointer::walk(&self.file(file).value, &pointer).ok_or_else(dangling)?;
            return Ok(Target {
                file,
                pointer,
                value,
            });
        }
        let file = if path.is_empty() {
            from
        } else {
            self.file_for(from, path, reference)?
        };
        let fragment = pointer::decode_fragment(fragment).ok_or_else(dangling)?;
        let pointer = if fragment.is_empty() || fragment.starts_with('/') {
            fragment.into_owned()
        } else {
            let base = self.bases.base(self.file_name(file));
            self.index
                .resolve_anchor(file, base.as_ref(), &fragment)
                .ok_or_else(dangling)?
        };
        let value = pointer::walk(&self.file(file).value, &pointer).ok_or_else(dangling)?;
        Ok(Target {
            file,
            pointer,
            value,
        })
    }

    /// Puts loaded files together with the index of their `$id`s and anchors and the `$ref`s
    /// found while indexing them (in file order): indexes names, then lists every `$ref` that
    /// does not resolve.
    fn assemble(
        version: SpecVersion,
        files: Vec<SourceFile>,
        failed: HashMap<String, String>,
        allow_remote: bool,
        (index, bases): (index::Index, base::Bases),
        sites: Vec<index::RefSite>,
    ) -> Document {
        let by_name = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.name.clone(), FileId(i)))
            .collect();
        let mut document = Document {
            version,
            files,
            by_name,
            failed,
            index,
            bases,
            allow_remote,
            problems: Vec::new(),
        };
        let problems = sites
            .into_iter()
            .filter_map(|site| {
                let error = document.resolve(site.file, &site.reference).err()?;
                Some(Problem {
                    file: site.file,
                    pointer: site.pointer,
                    error,
                })
            })
            .collect();
        document.problems = problems;
        document
    }

    fn file_name(&self, file: FileId) -> &str {
        &self.file(file).name
    }

    /// The file a reference's path names, as written in `from`.
    fn file_for(&self, from: FileId, path: &str, reference: &str) -> Result<FileId, RefError> {
        let key = match self.bases.file_key(self.file_name(from), path) {
            FileKey::Local(name) | FileKey::Remote(name) => name,
            FileKey::Refused(error) => return Err(error(reference.to_string())),
        };
        if let Some(file) = self.by_name.get(&key) {
            return Ok(*file);
        }
        if let Some(reason) = self.failed.get(&key) {
            return Err(RefError::Unreadable {
                reference: reference.to_string(),
                reason: reason.clone(),
            });
        }
        if is_remote(&key) && !self.allow_remote {
            return Err(RefError::Remote(reference.to_string()));
        }
        Err(RefError::NotLoaded(reference.to_string()))
    }
}

/// Where the path part of a `$ref` leads from the file named `from`.
#[derive(Debug)]
pub(crate) enum FileKey {
    /// A local file, by its name relative to the root directory.
    Local(String),
    /// A file fetched over http(s), by its URL without fragment.
    Remote(String),
    /// Not allowed at all (escapes, `file:` and other schemes); the error takes the reference.
    Refused(fn(String) -> RefError),
}

/// Names the file `path` (non-empty, the part of a `$ref` before `#`) leads to from `from`.
pub(crate) fn file_key(from: &str, path: &str) -> FileKey {
    if let Some(scheme) = scheme_of(path) {
        return match scheme.to_ascii_lowercase().as_str() {
            "http" | "https" => match url::Url::parse(path) {
                Ok(url) => FileKey::Remote(url.to_string()),
                Err(_) => FileKey::Refused(RefError::Dangling),
            },
            _ => FileKey::Refused(RefError::OutsideRoot),
        };
    }
    if is_remote(from) {
        return match url::Url::parse(from).and_then(|base| base.join(path)) {
            Ok(url) => FileKey::Remote(url.to_string()),
            Err(_) => FileKey::Refused(RefError::Dangling),
        };
    }
    if path.starts_with("//") {
        // A network-path reference (`//host/x`) from a local file would be a remote fetch.
        return FileKey::Refused(RefError::Remote);
    }
    match pointer::join_relative(from, path) {
        Some(name) => FileKey::Local(name),
        None => FileKey::Refused(RefError::OutsideRoot),
    }
}

pub(crate) fn is_remote(name: &str) -> bool {
    name.starts_with("http://") || name.starts_with("https://")
}

/// The scheme of a URI reference (RFC 3986 §3.1), if it has one. A Windows drive (`C:\x`) or
/// any other `word:` prefix counts, and is refused with the rest.
pub(crate) fn scheme_of(reference: &str) -> Option<&str> {
    let (scheme, _) = reference.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let valid = first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some(scheme)
}

fn detect_version(value: &Value, name: &str) -> Result<SpecVersion, LoadError> {
    let (field, version) = match (value.get("openapi"), value.get("swagger")) {
        (Some(v), _) => ("openapi", v),
        (None, Some(v)) => ("swagger", v),
        (None, None) => return Err(LoadError::NotOpenApi(name.to_string())),
    };
    let text = match version {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match (field, text.as_str()) {
        ("swagger", "2.0") => Ok(SpecVersion::Swagger2),
        ("openapi", v) if v.starts_with("3.0") => Ok(SpecVersion::OpenApi30),
        ("openapi", v) if v.starts_with("3.1") => Ok(SpecVersion::OpenApi31),
        ("openapi", v) if v.starts_with("3.2") => Ok(SpecVersion::OpenApi32),
        _ => Err(LoadError::UnsupportedVersion {
            name: name.to_string(),
            version: text,
        }),
    }
}

#[cfg(test)]
mod tests;

//! Reading OpenAPI documents: JSON or YAML, one file or many joined by `$ref`s.
//!
//! A [`Document`] keeps every file as the `serde_json::Value` it parsed to, untouched; the
//! catalog reads it through [`Document::resolve`]. Nothing here reinterprets schemas: the
//! 2.0 and 3.0 dialects are translated where tool schemas are built.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Which OpenAPI dialect a document is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecVersion {
    Swagger2,
    OpenApi30,
    OpenApi31,
}

/// Index of a file in [`Document::files`]; the root document is `FileId(0)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub usize);

/// A loaded document: the root file and every file its `$ref`s reach.
#[derive(Debug, Clone)]
pub struct Document {
    pub version: SpecVersion,
    pub files: Vec<SourceFile>,
}

#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Path relative to the root document's directory; empty for the root itself.
    pub name: String,
    pub value: Value,
}

/// What a `$ref` points at.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub file: FileId,
    /// JSON pointer inside `file` (empty for the whole file).
    pub pointer: &'a str,
    pub value: &'a Value,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{name} is not valid JSON or YAML: {message}")]
    Syntax { name: String, message: String },
    #[error("{0} is not an OpenAPI document (no `openapi` or `swagger` version)")]
    NotOpenApi(String),
    #[error("{name}: unsupported version {version:?} (ferry reads 2.0, 3.0.x and 3.1.x)")]
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
}

impl Document {
    /// A document already in memory, with no other files (tests, fetched documents).
    pub fn from_value(value: Value) -> Result<Document, LoadError> {
        let version = detect_version(&value, "openapi document")?;
        Ok(Document {
            version,
            files: vec![SourceFile {
                name: String::new(),
                value,
            }],
        })
    }

    pub fn root(&self) -> &Value {
        &self.files[0].value
    }

    pub fn file(&self, file: FileId) -> &SourceFile {
        &self.files[file.0]
    }

    /// Resolves `reference` as written in `from`, following RFC 6901 pointers.
    pub fn resolve<'a>(&'a self, from: FileId, reference: &'a str) -> Result<Target<'a>, RefError> {
        let (path, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let file = if path.is_empty() {
            from
        } else if path.contains("://") {
            return Err(RefError::Remote(reference.to_string()));
        } else {
            let name = join_relative(&self.file(from).name, path)
                .ok_or_else(|| RefError::OutsideRoot(reference.to_string()))?;
            let index = self
                .files
                .iter()
                .position(|f| f.name == name)
                .ok_or_else(|| RefError::NotLoaded(reference.to_string()))?;
            FileId(index)
        };
        let value = pointer_get(&self.file(file).value, fragment)
            .ok_or_else(|| RefError::Dangling(reference.to_string()))?;
        Ok(Target {
            file,
            pointer: fragment,
            value,
        })
    }
}

/// Reads the root document at `path` and every file its `$ref`s reach, confined to the root's
/// directory.
pub fn load(path: &Path) -> Result<Document, LoadError> {
    let display = path.display().to_string();
    let root = read_file(path)?;
    let version = detect_version(&root, &display)?;
    let dir = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let mut files = vec![SourceFile {
        name: String::new(),
        value: root,
    }];
    let mut next = 0;
    while next < files.len() {
        let mut wanted = Vec::new();
        collect_file_refs(&files[next].value, &files[next].name, &mut wanted);
        for name in wanted {
            if files.iter().any(|f| f.name == name) {
                continue;
            }
            let value = read_file(&dir.join(&name))?;
            files.push(SourceFile { name, value });
        }
        next += 1;
    }
    Ok(Document { version, files })
}

/// Parses JSON, or YAML when the text is not JSON.
pub fn parse(text: &str, name: &str) -> Result<Value, LoadError> {
    let trimmed = text.trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && let Ok(value) = serde_json::from_str(text)
    {
        return Ok(value);
    }
    // YAML 1.2 booleans only: in YAML 1.1 a property named `y` or `no` would turn into one.
    serde_saphyr::from_str_with_options(text, serde_saphyr::options! { strict_booleans: true })
        .map_err(|error| LoadError::Syntax {
            name: name.to_string(),
            message: error.to_string(),
        })
}

/// Looks up an RFC 6901 pointer (with a leading `/`, or empty for the whole value);
/// percent-encoded fragments are decoded first.
pub fn pointer_get<'a>(value: &'a Value, pointer: &str) -> Option<&'a Value> {
    if pointer.is_empty() {
        return Some(value);
    }
    if pointer.contains('%') {
        let decoded = percent_encoding::percent_decode_str(pointer)
            .decode_utf8()
            .ok()?;
        return value.pointer(&decoded);
    }
    value.pointer(pointer)
}

/// Escapes one JSON pointer token.
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn read_file(path: &Path) -> Result<Value, LoadError> {
    let display = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::Read {
        path: display.clone(),
        source,
    })?;
    parse(&text, &display)
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
        ("openapi", v) if v.starts_with("3.1") || v.starts_with("3.2") => {
            Ok(SpecVersion::OpenApi31)
        }
        _ => Err(LoadError::UnsupportedVersion {
            name: name.to_string(),
            version: text,
        }),
    }
}

fn collect_file_refs(value: &Value, from: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get("$ref") {
                let path = reference.split('#').next().unwrap_or("");
                if !path.is_empty()
                    && !path.contains("://")
                    && let Some(name) = join_relative(from, path)
                {
                    out.push(name);
                }
            }
            map.values().for_each(|v| collect_file_refs(v, from, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_file_refs(v, from, out)),
        _ => {}
    }
}

/// Joins `path` to the directory of `from` (both relative to the root's directory); `None`
/// when the result would leave that directory.
fn join_relative(from: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    if path.starts_with('/') {
        return None;
    }
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    parts.retain(|p| !p.is_empty());
    Some(parts.join("/"))
}

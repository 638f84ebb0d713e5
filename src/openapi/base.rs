//! Base URIs: where the relative references of each file resolve from, and which file a
//! URI names.
//!
//! A file's base is where it was read from (its URL, or a `ferry-local:///` URI built from
//! its name), unless it is an OpenAPI 3.2 document that declares `$self`: then its base is
//! that URI (resolved against where it was read from, when relative), and a reference that
//! names it by that URI reaches it. A URI under the root document's `$self` names the file at
//! the same place relative to the root, so a document split over files that name each other
//! by their `$self` URIs loads from disk as it would from there. Nothing else changes: a
//! file without `$self` resolves its references by the loader's own rules, and a URI that
//! maps to no local file is remote, fetched only when remote references are allowed.

use std::collections::HashMap;

use serde_json::Value;
use url::Url;

use super::index::base_uri;
use super::{FileKey, RefError, file_key, is_remote, pointer, scheme_of};

/// The bases of the files loaded so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bases {
    /// Whether `$self` is read at all: it is OpenAPI 3.2's.
    honoured: bool,
    /// The base each file that declares a usable `$self` has, by file name.
    declared: HashMap<String, Url>,
    /// The file each declared base names, by the base's URI.
    named: HashMap<String, String>,
    /// The root's declared base and its name.
    root: Option<(Url, String)>,
}

impl Bases {
    /// Bases that read `$self` when `honoured` (the root is an OpenAPI 3.2 document).
    pub fn new(honoured: bool) -> Bases {
        Bases {
            honoured,
            ..Bases::default()
        }
    }

    /// Takes note of the file `name`, parsed to `value`: its `$self`, when it declares one.
    /// Returns the base it declares, if any.
    pub fn add(&mut self, name: &str, value: &Value, root: bool) -> Option<Url> {
        if !self.honoured {
            return None;
        }
        let written = match declared_self(value)? {
            Ok(written) => written,
            Err(_) => return None,
        };
        let base = base_uri(name)?.join(written).ok()?;
        self.declared.insert(name.to_string(), base.clone());
        self.named
            .entry(base.to_string())
            .or_insert_with(|| name.to_string());
        if root {
            self.root = Some((base.clone(), name.to_string()));
        }
        Some(base)
    }

    /// The base URI of the file `name`.
    pub fn base(&self, name: &str) -> Option<Url> {
        match self.declared.get(name) {
            Some(base) => Some(base.clone()),
            None => base_uri(name),
        }
    }

    /// Names the file `path` (non-empty, the part of a `$ref` before `#`) leads to, written in
    /// the file `from`.
    pub fn file_key(&self, from: &str, path: &str) -> FileKey {
        let declared = self.declared.get(from);
        let scheme = scheme_of(path);
        if scheme.is_some_and(|scheme| scheme.eq_ignore_ascii_case("ferry-local")) {
            // ferry's own name for the root directory is no URI a document may write.
            return FileKey::Refused(RefError::OutsideRoot);
        }
        let absolute = scheme.is_some();
        if declared.is_none() && (!absolute || self.declared.is_empty()) {
            return file_key(from, path);
        }
        let uri = match declared {
            Some(base) => base.join(path),
            None => Url::parse(path),
        };
        let Ok(mut uri) = uri else {
            return FileKey::Refused(RefError::Dangling);
        };
        uri.set_fragment(None);
        if let Some(key) = self.named_file(&uri) {
            return key;
        }
        if declared.is_none() {
            return file_key(from, path);
        }
        match uri.scheme() {
            "http" | "https" => FileKey::Remote(uri.to_string()),
            // A relative `$self` keeps a local file's base local; the URI's path is a name
            // under the root directory (dot segments were resolved within it).
            "ferry-local" if uri.query().is_none() => {
                let name = uri.path().trim_start_matches('/');
                match pointer::join_relative("", name) {
                    Some(name) => FileKey::Local(name),
                    None => FileKey::Refused(RefError::Dangling),
                }
            }
            _ => FileKey::Refused(RefError::OutsideRoot),
        }
    }

    /// The file `uri` names by a declared `$self`: a file that declares it, or one at the same
    /// place under the root's base as under the root.
    fn named_file(&self, uri: &Url) -> Option<FileKey> {
        let key = |name: &str| {
            if is_remote(name) {
                FileKey::Remote(name.to_string())
            } else {
                FileKey::Local(name.to_string())
            }
        };
        if let Some(name) = self.named.get(uri.as_str()) {
            return Some(key(name));
        }
        let (base, root) = self.root.as_ref()?;
        let folder = base.join("./").ok()?;
        let rest = uri.as_str().strip_prefix(folder.as_str())?;
        if rest.is_empty() || uri.query().is_some() {
            return None;
        }
        if is_remote(root) {
            let url = Url::parse(root).ok()?.join(rest).ok()?;
            return Some(FileKey::Remote(url.to_string()));
        }
        Some(match pointer::join_relative(root, rest) {
            Some(name) => FileKey::Local(name),
            None => FileKey::Refused(RefError::OutsideRoot),
        })
    }
}

/// The `$self` a file declares, as written: `None` when it declares none (or is no OpenAPI
/// document, whose root alone may declare one), `Err` with the reason when it cannot be a
/// base URI (not a string, a fragment, not a URI reference).
pub fn declared_self(value: &Value) -> Option<Result<&str, &'static str>> {
    let object = value.as_object()?;
    object.get("openapi")?;
    let written = object.get("$self")?;
    Some(match written.as_str() {
        None => Err("it is not a string"),
        Some(text) if text.contains('#') => Err("it has a fragment, which `$self` MUST NOT"),
        Some(text) => match Url::parse("ferry-local:///").and_then(|base| base.join(text)) {
            Ok(_) => Ok(text),
            Err(_) => Err("it is not a URI reference"),
        },
    })
}

//! Where the `$ref`s of loaded files are, and the `$id`s and `$anchor`s (OpenAPI 3.1, JSON
//! Schema 2020-12) that references may name.
//!
//! Base URIs follow JSON Schema, simplified: each file has a base (its URL when fetched, a
//! `ferry-local:///` URI built from its name otherwise, a name that never touches the file
//! system); an `$id` is resolved against the base of the closest enclosing `$id`, or the
//! file's; an `$anchor` (or `$dynamicAnchor`, or a draft-07 style `$id: "#name"`) belongs to
//! that enclosing resource. An `$id` that names a real file is not followed as one: ids are
//! only ever matched against references.

use std::collections::HashMap;

use serde_json::Value;
use url::Url;

use super::{FileId, is_remote, pointer};

/// Objects nested deeper than this are not searched; parsed files cannot get there (their
/// depth is budgeted), only values built in memory could.
pub(crate) const MAX_WALK_DEPTH: usize = 512;

#[derive(Debug, Clone, Default)]
pub(crate) struct Index {
    /// The absolute URI (without fragment) of each `$id` → where its schema is.
    ids: HashMap<String, (FileId, String)>,
    /// (URI of the enclosing resource, anchor name) → where the anchored schema is.
    anchors: HashMap<(String, String), (FileId, String)>,
    /// (file, anchor name) → every place in the file with that anchor, for `#name` refs.
    file_anchors: HashMap<(FileId, String), Vec<String>>,
}

/// One `$ref` as written.
#[derive(Debug)]
pub(crate) struct RefSite {
    pub file: FileId,
    /// Pointer to the `$ref` itself.
    pub pointer: String,
    pub reference: String,
}

impl Index {
    /// Indexes the ids and anchors of one file, whose base URI is `base`, and lists its
    /// `$ref`s into `sites`.
    pub fn add_file(&mut self, file: FileId, base: &Url, value: &Value, sites: &mut Vec<RefSite>) {
        let mut walker = Walker {
            index: self,
            file,
            sites,
            pointer: String::new(),
        };
        walker.walk(value, base, 0);
    }

    /// Names the whole of `file` by `uri` (an OpenAPI 3.2 `$self`), as an `$id` names its
    /// schema: a reference to `uri` (and a fragment in it) reaches the file.
    pub fn add_resource(&mut self, uri: &Url, file: FileId) {
        let mut uri = uri.clone();
        uri.set_fragment(None);
        self.ids
            .entry(uri.to_string())
            .or_insert_with(|| (file, String::new()));
    }

    /// Resolves a reference whose path (`path`, non-empty) may name an `$id` (or a `$self`),
    /// written in a file whose base URI is `base`. `None` when none matches (the path names a
    /// file); `Some(None)` when one matches but the fragment names nothing in it.
    pub fn resolve_id(
        &self,
        base: &Url,
        path: &str,
        fragment: &str,
    ) -> Option<Option<(FileId, String)>> {
        if self.ids.is_empty() {
            return None;
        }
        let mut uri = base.join(path).ok()?;
        uri.set_fragment(None);
        let (file, at) = self.ids.get(uri.as_str())?;
        let Some(fragment) = pointer::decode_fragment(fragment) else {
            return Some(None);
        };
        Some(if fragment.is_empty() {
            Some((*file, at.clone()))
        } else if fragment.starts_with('/') {
            Some((*file, format!("{at}{fragment}")))
        } else {
            self.anchors
                .get(&(uri.to_string(), fragment.into_owned()))
                .cloned()
        })
    }

    /// Where `#name` points in `file` (whose base URI is `base`): the anchor of the file's own
    /// resource, else the only anchor of that name anywhere in the file. Two anchors of one
    /// name under different `$id`s, neither the file's own, are ambiguous without knowing where
    /// the reference sits, and resolve to nothing.
    pub fn resolve_anchor(&self, file: FileId, base: Option<&Url>, anchor: &str) -> Option<String> {
        if let Some(base) = base
            && let Some((found, at)) = self.anchors.get(&(base.to_string(), anchor.to_string()))
            && *found == file
        {
            return Some(at.clone());
        }
        match self
            .file_anchors
            .get(&(file, anchor.to_string()))?
            .as_slice()
        {
            [only] => Some(only.clone()),
            _ => None,
        }
    }
}

/// The base URI of a file by where it was read: its URL when fetched, a local-only URI
/// otherwise (`base::Bases` knows a declared `$self` too).
pub(crate) fn base_uri(name: &str) -> Option<Url> {
    if is_remote(name) {
        return Url::parse(name).ok();
    }
    Url::parse("ferry-local:///").ok()?.join(name).ok()
}

struct Walker<'a> {
    index: &'a mut Index,
    file: FileId,
    sites: &'a mut Vec<RefSite>,
    /// Pointer to the value being walked, grown and cut back as the walk goes.
    pointer: String,
}

impl Walker<'_> {
    fn walk(&mut self, value: &Value, base: &Url, depth: usize) {
        if depth > MAX_WALK_DEPTH {
            return;
        }
        match value {
            Value::Object(map) => {
                // Cloned only where an `$id` changes it.
                let mut base = std::borrow::Cow::Borrowed(base);
                if let Some(Value::String(reference)) = map.get("$ref") {
                    self.sites.push(RefSite {
                        file: self.file,
                        pointer: format!("{}/$ref", self.pointer),
                        reference: reference.clone(),
                    });
                }
                if let Some(Value::String(id)) = map.get("$id") {
                    match id.strip_prefix('#') {
                        Some(anchor) if !anchor.is_empty() && !anchor.starts_with('/') => {
                            self.anchor(&base, anchor);
                        }
                        _ => {
                            if let Ok(mut uri) = base.join(id) {
                                uri.set_fragment(None);
                                self.index
                                    .ids
                                    .entry(uri.to_string())
                                    .or_insert_with(|| (self.file, self.pointer.clone()));
                                base = std::borrow::Cow::Owned(uri);
                            }
                        }
                    }
                }
                for key in ["$anchor", "$dynamicAnchor"] {
                    if let Some(Value::String(anchor)) = map.get(key) {
                        self.anchor(&base, anchor);
                    }
                }
                for (key, child) in map {
                    if matches!(child, Value::Object(_) | Value::Array(_)) {
                        let len = self.pointer.len();
                        self.pointer.push('/');
                        push_escaped(&mut self.pointer, key);
                        self.walk(child, &base, depth + 1);
                        self.pointer.truncate(len);
                    }
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    if matches!(child, Value::Object(_) | Value::Array(_)) {
                        let len = self.pointer.len();
                        self.pointer.push('/');
                        self.pointer.push_str(&i.to_string());
                        self.walk(child, base, depth + 1);
                        self.pointer.truncate(len);
                    }
                }
            }
            _ => {}
        }
    }

    fn anchor(&mut self, base: &Url, anchor: &str) {
        let mut resource = base.clone();
        resource.set_fragment(None);
        let at = (self.file, self.pointer.clone());
        self.index
            .anchors
            .entry((resource.to_string(), anchor.to_string()))
            .or_insert(at);
        self.index
            .file_anchors
            .entry((self.file, anchor.to_string()))
            .or_default()
            .push(self.pointer.clone());
    }
}

/// Appends `token` escaped as in [`super::escape_token`], without a temporary string.
fn push_escaped(out: &mut String, token: &str) {
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

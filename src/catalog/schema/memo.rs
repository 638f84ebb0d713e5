//! What a referenced schema became, kept for the next tool that references it: most of a
//! large API's tools copy the same components into their `$defs`, and translating each copy
//! again was most of compiling their schemas.
//!
//! A copy is kept unless it met something that reads what the tool's copy met so far (a
//! recursive reference, an `$anchor`, an `$id`) or found a problem. What it says of its
//! own (its value, the patterns and warnings its keywords gave) is the same for every tool;
//! what it refers to is not: each tool names its `$defs` entries in the order it meets
//! them. So a kept copy remembers its references in order, with what it said between them,
//! and a later tool meets them again in that order (copying or naming each target as it
//! would have while translating) and then takes the value, its references renamed where
//! this tool named a target otherwise. The same calls in the same order: the same `$defs`,
//! names, patterns, warnings and errors, as long as the copy's own nesting still fits under
//! the tool's depth limit.

use std::collections::HashMap;
use std::ops::Range;
use std::rc::Rc;

use serde_json::Value;

use super::{
    MAX_TOTAL_DEPTH, SCHEMA_KEYWORDS, SCHEMA_LIST_KEYWORDS, SCHEMA_MAP_KEYWORDS, SchemaBuilder,
    def_ref,
};
use crate::openapi::FileId;

/// Copies of referenced schemas, by their place in one document. One per document and
/// compile thread.
#[derive(Default)]
pub struct Translations {
    kept: HashMap<(FileId, String), Rc<Kept>>,
}

/// One copy, and what making it said.
struct Kept {
    value: Value,
    /// The references the copy met, in order.
    refs: Vec<Met>,
    /// What the copy's own keywords gave before each reference, and after the last.
    patterns: Vec<Vec<String>>,
    warnings: Vec<Vec<(FileId, String, String)>>,
    /// The deepest inline nesting reached, counted from the schema copied.
    deepest: usize,
}

/// A reference a copy met: its target's place, how deep in the copy, the name the target
/// got, and what copying the target added to the builder's patterns and warnings.
pub(super) struct Met {
    pub(super) key: (FileId, String),
    pub(super) depth: usize,
    pub(super) name: String,
    pub(super) patterns: Range<usize>,
    pub(super) warnings: Range<usize>,
}

impl<'d> SchemaBuilder<'d> {
    /// The kept copy of the schema at `key`, made again for this tool ([`Self::replay`]),
    /// when there is one and its nesting fits at the depth the copy is made.
    pub(super) fn copy_kept(&mut self, key: &(FileId, String)) -> Option<Value> {
        let kept = self.translations.as_deref()?.kept.get(key)?;
        if self.outer_depth + kept.deepest > MAX_TOTAL_DEPTH {
            return None;
        }
        let document = self.document;
        let targets = kept
            .refs
            .iter()
            .map(|met| crate::openapi::pointer_get(&document.file(met.key.0).value, &met.key.1))
            .collect::<Option<Vec<_>>>()?;
        let kept = Rc::clone(kept);
        Some(self.replay(&kept, &targets))
    }

    /// Translates `target`, at `key`, as a `$defs` entry, and keeps the copy when it can be.
    pub(super) fn copy(&mut self, key: (FileId, String), target: &'d Value) -> Value {
        let outer_deepest = std::mem::take(&mut self.deepest);
        let outer_situated = std::mem::replace(&mut self.situated, false);
        let outer_met = std::mem::take(&mut self.met);
        let (errors, patterns, warnings) =
            (self.errors.len(), self.patterns.len(), self.warnings.len());
        let copy = self.translate(key.0, &key.1, target, 0);
        let refs = std::mem::replace(&mut self.met, outer_met);
        if !self.situated
            && self.errors.len() == errors
            && let Some(translations) = self.translations.as_deref_mut()
        {
            let patterns = own(&self.patterns, patterns, &refs, |met| &met.patterns);
            let warnings = own(&self.warnings, warnings, &refs, |met| &met.warnings);
            let kept = Kept {
                value: copy.clone(),
                refs,
                patterns,
                warnings,
                deepest: self.deepest,
            };
            translations.kept.insert(key, Rc::new(kept));
        }
        self.situated = outer_situated;
        self.deepest = outer_deepest;
        copy
    }

    /// The kept copy for this tool: its references met again in order, with what the copy
    /// said between them, and its value with each reference named as this tool names it.
    fn replay(&mut self, kept: &Kept, targets: &[&'d Value]) -> Value {
        let mut renamed: Vec<(Value, Value)> = Vec::new();
        for (at, (met, &target)) in kept.refs.iter().zip(targets).enumerate() {
            self.patterns.extend_from_slice(&kept.patterns[at]);
            self.warnings.extend_from_slice(&kept.warnings[at]);
            let name = self.refer(met.key.clone(), target, met.depth);
            if name != met.name {
                renamed.push((
                    def_ref(&met.name)["$ref"].take(),
                    def_ref(&name)["$ref"].take(),
                ));
            }
        }
        let last = kept.refs.len();
        self.patterns.extend_from_slice(&kept.patterns[last]);
        self.warnings.extend_from_slice(&kept.warnings[last]);
        let mut value = kept.value.clone();
        if !renamed.is_empty() {
            rename(&mut value, &renamed);
        }
        value
    }
}

/// What a copy's own keywords added to `said` from `start` on, split at its references:
/// everything but what copying each reference's target added.
fn own<T: Clone>(
    said: &[T],
    start: usize,
    refs: &[Met],
    added: impl Fn(&Met) -> &Range<usize>,
) -> Vec<Vec<T>> {
    let mut parts = Vec::with_capacity(refs.len() + 1);
    let mut at = start;
    for met in refs {
        let range = added(met);
        parts.push(said[at..range.start].to_vec());
        at = range.end;
    }
    parts.push(said[at..].to_vec());
    parts
}

/// Renames the `$defs` references of a translated schema: every `$ref` where translation
/// puts a schema (data keywords such as `const` and `default` are left as they are).
fn rename(schema: &mut Value, renamed: &[(Value, Value)]) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    if let Some(reference) = map.get_mut("$ref")
        && let Some((_, new)) = renamed.iter().find(|(old, _)| old == reference)
    {
        *reference = new.clone();
    }
    for (key, value) in map.iter_mut() {
        let key = key.as_str();
        if key == "items" || SCHEMA_KEYWORDS.contains(&key) {
            rename(value, renamed);
        } else if SCHEMA_LIST_KEYWORDS.contains(&key) {
            value
                .as_array_mut()
                .into_iter()
                .flatten()
                .for_each(|item| rename(item, renamed));
        } else if SCHEMA_MAP_KEYWORDS.contains(&key) {
            value
                .as_object_mut()
                .into_iter()
                .flat_map(|map| map.values_mut())
                .for_each(|item| rename(item, renamed));
        }
    }
}

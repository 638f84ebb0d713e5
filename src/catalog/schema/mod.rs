//! Building a tool's input schema out of document schemas: each schema is copied into JSON
//! Schema 2020-12, every `$ref` becomes a `#/$defs/...` reference to a copy of its target
//! (so recursive schemas stay valid and refs across files are carried along), and the
//! OpenAPI 2.0 and 3.0 dialects are translated on the way.
//!
//! Every `$ref` (inside the document, to another file, through `$id`/`$anchor`) becomes
//! `{"$ref": "#/$defs/Name"}` pointing at one copy of its target, so nothing outside the
//! tool's schema is referenced. `Name` is the target's last pointer token, made unique with
//! `_2`, `_3` in the order met. Recursion must descend into the value (`properties`, `items`
//! and the like): a cycle of copies that refer to each other through `$ref` and the in-place
//! keywords alone (`allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`,
//! `dependentSchemas`), as in `A: {$ref: B}`, `B: {allOf: [{$ref: A}]}`, would make
//! validation loop for ever. [`SchemaBuilder::cycles`] finds such cycles on the copies,
//! reading each `$defs` entry once, and each is a problem of the operation, located at the
//! cycle's first schema and naming the whole cycle.
//!
//! OpenAPI 3.0 and 2.0 become 2020-12: `nullable`/`x-nullable` add `"null"` to `type` (and
//! `enum`); boolean `exclusiveMinimum`/`exclusiveMaximum` take their bound's value; `example`
//! becomes `examples`; an `items` list becomes `prefixItems`; 2019-09 `$recursiveRef: "#"`
//! points at the schema it sits in; a `#/...` reference inside a schema with its own `$id`
//! resolves inside that schema, as JSON Schema's base-URI rule says. `$anchor`s are kept (the
//! first of each name). Keywords that only mean something inside the document or would
//! change how references resolve once copied are dropped: `$id`, `$dynamicAnchor`,
//! `$recursiveAnchor`, `$schema`, nested `$defs`/`definitions` (their members are copied
//! when referenced), `xml`, `discriminator`, `externalDocs`, and `x-` extensions.
//!
//! Every served schema validates against the 2020-12 meta-schema: a name repeated in
//! `required` or `type` is listed once; a keyword whose value the meta-schema refuses
//! (`pattern: 0`, `type: {…}`, `minLength: -1`) is left out with a warning at its document
//! pointer saying what is no longer checked; and each chosen tool's schema is checked against
//! the meta-schema at compile time (`catalog::arguments`), so one that still fails is
//! ineligible, with the reason. A `pattern` the linear-time `regex` crate cannot compile (a
//! look-ahead, say) is served as written, listed in `Tool::unchecked_patterns`, left out of
//! argument validation, and warned about.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::openapi::{Document, FileId};
use cycles::{cycles, in_place_references};
pub use memo::Translations;

mod cycles;
mod memo;
#[cfg(test)]
mod tests;

/// Keywords whose value is one schema.
const SCHEMA_KEYWORDS: &[&str] = &[
    "additionalProperties",
    "additionalItems",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];
/// Keywords whose value is a list of schemas.
const SCHEMA_LIST_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value maps names to schemas.
const SCHEMA_MAP_KEYWORDS: &[&str] = &["properties", "patternProperties", "dependentSchemas"];
/// Keywords that only make sense inside the document, or would change how references
/// resolve once copied: dropped.
const DROPPED_KEYWORDS: &[&str] = &[
    "$id",
    "$dynamicAnchor",
    "$recursiveAnchor",
    "$schema",
    "$defs",
    "definitions",
    "xml",
    "discriminator",
    "externalDocs",
];
/// Deepest nesting of inline schemas followed; deeper is reported, not followed.
const MAX_DEPTH: usize = 64;
/// Deepest nesting followed through `$ref`s as well (each copy of a target starts its own
/// inline count): a long chain of references would otherwise exhaust the stack.
const MAX_TOTAL_DEPTH: usize = 128;
/// Copies schemas for one tool, collecting the `$defs` they need.
pub struct SchemaBuilder<'d> {
    document: &'d Document,
    defs: Map<String, Value>,
    names: HashMap<(FileId, String), String>,
    /// Problems that make the tool unusable: (pointer, message).
    pub errors: Vec<(String, String)>,
    /// Patterns met, for the caller to check once per pattern.
    pub patterns: Vec<String>,
    /// Keywords left out because their value is malformed, so the copy stays a valid
    /// schema: (file, pointer, what was lost).
    pub warnings: Vec<(FileId, String, String)>,
    /// The `$defs` entry being copied, which a 2019-09 `$recursiveRef: "#"` points back to.
    current_def: Option<String>,
    /// The nearest enclosing schema with its own `$id` (file and pointer): a `#/...`
    /// reference inside it is relative to that schema, not to the file.
    resource: Option<(FileId, String)>,
    /// `$anchor`s kept so far: each name is kept once, so the copy stays a valid schema.
    anchors: Vec<String>,
    /// How deep the copies of targets in progress sit, one inside the other.
    outer_depth: usize,
    /// The copies of referenced schemas kept from earlier tools ([`memo`]).
    translations: Option<&'d mut Translations>,
    /// The copy in progress met something that reads what this tool's copy met so far (a
    /// recursive reference, an `$anchor`, an `$id`), or a reference whose target cannot be
    /// found again by its place: it is not kept.
    situated: bool,
    /// The deepest inline nesting the copy in progress reached.
    deepest: usize,
    /// The references the copy in progress met, in order.
    met: Vec<memo::Met>,
}

impl<'d> SchemaBuilder<'d> {
    pub fn new(document: &'d Document) -> Self {
        SchemaBuilder {
            document,
            defs: Map::new(),
            names: HashMap::new(),
            errors: Vec::new(),
            patterns: Vec::new(),
            warnings: Vec::new(),
            current_def: None,
            resource: None,
            anchors: Vec::new(),
            outer_depth: 0,
            translations: None,
            situated: false,
            deepest: 0,
            met: Vec::new(),
        }
    }

    /// A builder that takes the copies of referenced schemas from `translations` when it
    /// can, and keeps there the ones it makes ([`memo`]); with `None`, one that keeps none.
    pub fn with_translations(
        document: &'d Document,
        translations: Option<&'d mut Translations>,
    ) -> Self {
        SchemaBuilder {
            translations,
            ..SchemaBuilder::new(document)
        }
    }

    /// Translates `schema`, written in `file` at `pointer`, into a 2020-12 schema.
    pub fn schema(&mut self, file: FileId, pointer: &str, schema: &Value) -> Value {
        self.translate(file, pointer, schema, 0)
    }

    /// Every cycle of `$defs` entries that refer to each other through `$ref` and in-place
    /// keywords alone (`A: {$ref: B}`, `B: {allOf: [{$ref: A}]}`), as problems (file,
    /// pointer, message) located at the cycle's first schema in the document. Each entry's
    /// references are read once, on its copy, however often it is used.
    pub fn cycles(&self) -> Vec<(FileId, String, String)> {
        let index: HashMap<&str, usize> = self
            .defs
            .keys()
            .enumerate()
            .map(|(at, name)| (name.as_str(), at))
            .collect();
        let edges: Vec<Vec<usize>> = self
            .defs
            .values()
            .map(|schema| {
                let mut targets = Vec::new();
                in_place_references(schema, &mut targets);
                targets
                    .into_iter()
                    .filter_map(|name| index.get(name.as_str()).copied())
                    .collect()
            })
            .collect();
        let origins: HashMap<&str, &(FileId, String)> = self
            .names
            .iter()
            .map(|(origin, name)| (name.as_str(), origin))
            .collect();
        let names: Vec<&String> = self.defs.keys().collect();
        let mut problems = Vec::new();
        for cycle in cycles(&edges) {
            let members: Vec<(FileId, &str)> = cycle
                .iter()
                .filter_map(|&at| origins.get(names[at].as_str()))
                .map(|(file, pointer)| (*file, pointer.as_str()))
                .collect();
            let Some(&(file, pointer)) = members.first() else {
                continue;
            };
            // Pointers in the file the diagnostic names go bare; others carry their file.
            let show = |&(member_file, member_pointer): &(FileId, &str)| {
                if member_file == file {
                    format!("#{member_pointer}")
                } else {
                    format!("{}#{member_pointer}", self.document.file(member_file).name)
                }
            };
            let mut path: Vec<String> = members.iter().map(show).collect();
            path.push(show(&(file, pointer)));
            problems.push((
                file,
                pointer.to_string(),
                format!(
                    "`$ref` cycle that never descends into the value: {}; checking a value against it would never end: break the cycle by removing one of these references, or by moving it under `properties` or `items`",
                    path.join(" → ")
                ),
            ));
        }
        problems
    }

    /// The `$defs` collected so far, to place at the root of the input schema.
    pub fn into_defs(self) -> Map<String, Value> {
        // Collected anew, at its size: it was grown one entry at a time.
        self.defs.into_iter().collect()
    }

    /// Follows `$ref`s from `schema` to the schema they name, without copying anything.
    pub fn resolve<'v>(&self, file: FileId, schema: &'v Value) -> Option<(FileId, &'v Value)>
    where
        'd: 'v,
    {
        let (file, _, schema) = super::operation::follow(self.document, file, "", schema).ok()?;
        Some((file, schema))
    }

    fn translate(&mut self, file: FileId, pointer: &str, schema: &Value, depth: usize) -> Value {
        let scoped = self.document.version.is_json_schema_2020() && schema.get("$id").is_some();
        if !scoped {
            return self.translate_inner(file, pointer, schema, depth);
        }
        self.situated = true;
        let outer = self.resource.replace((file, pointer.to_string()));
        let out = self.translate_inner(file, pointer, schema, depth);
        self.resource = outer;
        out
    }

    fn translate_inner(
        &mut self,
        file: FileId,
        pointer: &str,
        schema: &Value,
        depth: usize,
    ) -> Value {
        self.deepest = self.deepest.max(depth);
        if depth > MAX_DEPTH {
            self.errors.push((
                pointer.to_string(),
                "schema is nested too deeply".to_string(),
            ));
            return Value::Object(Map::new());
        }
        if self.outer_depth + depth > MAX_TOTAL_DEPTH {
            self.errors.push((
                pointer.to_string(),
                format!("schema is nested more than {MAX_TOTAL_DEPTH} deep through its `$ref`s"),
            ));
            return Value::Object(Map::new());
        }
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(_) => return schema.clone(),
            _ => {
                self.errors
                    .push((pointer.to_string(), "schema is not an object".to_string()));
                return Value::Object(Map::new());
            }
        };
        if let Some(reference) = map.get("$recursiveRef").or_else(|| map.get("$dynamicRef")) {
            // The documents' recursive refs name the schema they sit in (`"#"`); that schema
            // is the `$defs` entry being copied.
            self.situated = true;
            return match (&self.current_def, reference.as_str()) {
                (Some(name), Some(r)) if r.starts_with('#') => def_ref(name),
                _ => {
                    self.errors.push((
                        pointer.to_string(),
                        "a recursive reference outside a named schema".to_string(),
                    ));
                    Value::Object(Map::new())
                }
            };
        }
        if let Some(reference) = map.get("$ref") {
            let target = self.reference(file, pointer, reference, depth);
            // 3.1 schemas may have keywords beside `$ref`; earlier versions ignore them.
            if !self.document.version.is_json_schema_2020() || map.len() == 1 {
                return target;
            }
            let mut rest = map.clone();
            rest.remove("$ref");
            let Value::Object(mut out) =
                self.translate(file, pointer, &Value::Object(rest), depth + 1)
            else {
                return target;
            };
            if let Value::Object(target) = target {
                out.extend(target);
            }
            return Value::Object(out);
        }
        let legacy = !self.document.version.is_json_schema_2020();
        // A copy has about as many keywords as its original: allocated once, at that size.
        let mut out = Map::with_capacity(map.len());
        let mut nullable = false;
        for (key, value) in map {
            let key = key.as_str();
            if DROPPED_KEYWORDS.contains(&key) || key.starts_with("x-") && key != "x-nullable" {
                continue;
            }
            let child = |segment: &str| {
                format!("{pointer}/{key}/{}", crate::openapi::escape_token(segment))
            };
            // A value the 2020-12 meta-schema refuses would make the whole tool definition
            // invalid, and clients that check definitions refuse it: the keyword is left
            // out, and said to be.
            if let Some(problem) = malformed(key, value) {
                self.warnings.push((
                    file,
                    format!("{pointer}/{}", crate::openapi::escape_token(key)),
                    format!(
                        "`{key}` is left out of the tool's input schema: {problem}, which JSON Schema does not allow, so what it said is not checked"
                    ),
                ));
                continue;
            }
            match key {
                "nullable" | "x-nullable" => nullable = value.as_bool().unwrap_or(false),
                "$anchor" => {
                    self.situated = true;
                    if let Some(anchor) = value
                        .as_str()
                        .filter(|a| !self.anchors.iter().any(|k| k == a))
                    {
                        self.anchors.push(anchor.to_string());
                        out.insert(key.to_string(), value.clone());
                    }
                }
                "example" => {
                    out.insert("examples".to_string(), Value::Array(vec![value.clone()]));
                }
                "exclusiveMinimum" | "exclusiveMaximum" if value.is_boolean() => {
                    let bound = if key == "exclusiveMinimum" {
                        "minimum"
                    } else {
                        "maximum"
                    };
                    if value.as_bool() == Some(true)
                        && let Some(limit) = map.get(bound)
                    {
                        out.insert(key.to_string(), limit.clone());
                    }
                }
                "minimum" | "maximum"
                    if map.get(if key == "minimum" {
                        "exclusiveMinimum"
                    } else {
                        "exclusiveMaximum"
                    }) == Some(&Value::Bool(true)) => {}
                "type" if value == "file" => {
                    out.insert("type".to_string(), Value::from("string"));
                    out.insert("contentEncoding".to_string(), Value::from("base64"));
                }
                "format" if value == "binary" => {
                    out.insert("contentEncoding".to_string(), Value::from("base64"));
                }
                "pattern" => {
                    if let Some(pattern) = value.as_str() {
                        self.patterns.push(pattern.to_string());
                    }
                    out.insert(key.to_string(), value.clone());
                }
                // A name listed twice says nothing more: listed once, the schema is valid.
                "required" | "type" if value.is_array() => {
                    let mut names: Vec<Value> = Vec::new();
                    for name in value.as_array().into_iter().flatten() {
                        if !names.contains(name) {
                            names.push(name.clone());
                        }
                    }
                    out.insert(key.to_string(), Value::Array(names));
                }
                "items" if value.is_array() => {
                    let items =
                        self.translate_list(file, &format!("{pointer}/items"), value, depth);
                    out.insert("prefixItems".to_string(), items);
                }
                "items" => {
                    out.insert(
                        key.to_string(),
                        self.translate(file, &format!("{pointer}/items"), value, depth + 1),
                    );
                }
                _ if SCHEMA_KEYWORDS.contains(&key) => {
                    out.insert(
                        key.to_string(),
                        self.translate(file, &child(""), value, depth + 1),
                    );
                }
                _ if SCHEMA_LIST_KEYWORDS.contains(&key) => {
                    out.insert(
                        key.to_string(),
                        self.translate_list(file, &format!("{pointer}/{key}"), value, depth),
                    );
                }
                _ if SCHEMA_MAP_KEYWORDS.contains(&key) => {
                    // Some documents (DigitalOcean's) `$ref` a whole `properties` map kept in
                    // a file of its own; it is read where it lives, as bundlers do.
                    let (entries_file, entries_pointer, entries) =
                        match self.schema_map(file, pointer, key, value) {
                            Some(found) => found,
                            None => continue,
                        };
                    let mut translated = Map::with_capacity(entries.len());
                    for (name, subschema) in entries {
                        if key == "properties" && self.is_read_only(entries_file, subschema) {
                            continue;
                        }
                        if key == "patternProperties" {
                            self.patterns.push(name.clone());
                        }
                        let child =
                            format!("{entries_pointer}/{}", crate::openapi::escape_token(name));
                        translated.insert(
                            name.clone(),
                            self.translate(entries_file, &child, subschema, depth + 1),
                        );
                    }
                    out.insert(key.to_string(), Value::Object(translated));
                }
                _ => {
                    out.insert(key.to_string(), value.clone());
                }
            }
        }
        // `readOnly` properties are never sent, so they are not asked for either.
        if let (Some(Value::Array(required)), Some(Value::Object(properties))) =
            (out.get("required"), map.get("properties"))
        {
            let kept: Vec<Value> = required
                .iter()
                .filter(|name| {
                    name.as_str()
                        .and_then(|name| properties.get(name))
                        .is_none_or(|schema| !self.is_read_only(file, schema))
                })
                .cloned()
                .collect();
            if kept.is_empty() {
                out.remove("required");
            } else {
                out.insert("required".to_string(), Value::Array(kept));
            }
        }
        if nullable && legacy {
            make_nullable(&mut out);
        }
        Value::Object(out)
    }

    fn translate_list(
        &mut self,
        file: FileId,
        pointer: &str,
        value: &Value,
        depth: usize,
    ) -> Value {
        let Some(items) = value.as_array() else {
            self.errors.push((
                pointer.to_string(),
                "expected a list of schemas".to_string(),
            ));
            return Value::Array(Vec::new());
        };
        Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    self.translate(file, &format!("{pointer}/{index}"), item, depth + 1)
                })
                .collect(),
        )
    }

    /// Copies the target of `reference` into `$defs` (once) and points at the copy.
    fn reference(&mut self, file: FileId, pointer: &str, reference: &Value, depth: usize) -> Value {
        let Some(reference) = reference.as_str() else {
            self.errors.push((
                format!("{pointer}/$ref"),
                "`$ref` is not a string (in YAML, quote a `#/...` reference)".to_string(),
            ));
            return Value::Object(Map::new());
        };
        let document = self.document;
        let (target_file, target_pointer, target_value) = match self.scoped_target(file, reference)
        {
            Some(found) => found,
            None => match document.resolve(file, reference) {
                Ok(target) => (target.file, target.pointer.to_string(), target.value),
                Err(error) => {
                    self.errors
                        .push((format!("{pointer}/$ref"), error.to_string()));
                    return Value::Object(Map::new());
                }
            },
        };
        let key = (target_file, target_pointer);
        if self.translations.is_none() {
            return def_ref(&self.refer(key, target_value, depth));
        }
        // A kept copy that met this reference meets it again by its target's place.
        let placed = crate::openapi::pointer_get(&document.file(key.0).value, &key.1)
            .is_some_and(|found| std::ptr::eq(found, target_value));
        let (patterns, warnings) = (self.patterns.len(), self.warnings.len());
        let name = self.refer(key.clone(), target_value, depth);
        if placed {
            self.met.push(memo::Met {
                key,
                depth,
                name: name.clone(),
                patterns: patterns..self.patterns.len(),
                warnings: warnings..self.warnings.len(),
            });
        } else {
            self.situated = true;
        }
        def_ref(&name)
    }

    /// The `$defs` name of the copy of `target`, at `key`, met `depth` deep: copied now
    /// (or taken from the kept translations) unless this tool has it already.
    fn refer(&mut self, key: (FileId, String), target: &'d Value, depth: usize) -> String {
        if let Some(name) = self.names.get(&key) {
            return name.clone();
        }
        let name = self.unique_name(&key);
        self.names.insert(key.clone(), name.clone());
        // A placeholder first, so a recursive schema finds its own name while being copied.
        self.defs.insert(name.clone(), Value::Bool(true));
        let outer_def = self.current_def.replace(name.clone());
        // The target's own enclosing `$id`, if any, is not known here; it sets its own scope
        // when it has an `$id` itself.
        let outer_resource = self.resource.take();
        self.outer_depth += depth + 1;
        let copy = match self.copy_kept(&key) {
            Some(copy) => copy,
            None => self.copy(key, target),
        };
        self.outer_depth -= depth + 1;
        self.resource = outer_resource;
        self.current_def = outer_def;
        self.defs.insert(name.clone(), copy);
        name
    }

    /// The map of a `properties`-like keyword (found at `pointer`/`key` in `file`), following
    /// a `$ref` that stands for the whole map; `None` (with an error) when it is no map.
    fn schema_map<'v>(
        &mut self,
        file: FileId,
        pointer: &str,
        key: &str,
        value: &'v Value,
    ) -> Option<(FileId, String, &'v Map<String, Value>)>
    where
        'd: 'v,
    {
        let here = format!("{pointer}/{key}");
        let found = match value.as_object() {
            Some(map) if map.len() == 1 && map.get("$ref").is_some_and(Value::is_string) => {
                let reference = map.get("$ref").and_then(Value::as_str).unwrap_or_default();
                match self.document.resolve(file, reference) {
                    Ok(target) => target
                        .value
                        .as_object()
                        .map(|m| (target.file, target.pointer.to_string(), m)),
                    Err(error) => {
                        self.errors
                            .push((format!("{here}/$ref"), error.to_string()));
                        return None;
                    }
                }
            }
            Some(map) => Some((file, here.clone(), map)),
            None => None,
        };
        if found.is_none() {
            self.errors
                .push((here, format!("`{key}` is not an object")));
        }
        found
    }

    /// A `#/...` reference inside a schema with its own `$id` names a place inside that
    /// schema (JSON Schema's base URI rule), not in the file around it.
    fn scoped_target(&self, file: FileId, reference: &str) -> Option<(FileId, String, &'d Value)> {
        let (resource_file, resource_pointer) = self.resource.as_ref()?;
        let fragment = reference.strip_prefix('#').filter(|f| f.starts_with('/'))?;
        if *resource_file != file || resource_pointer.is_empty() {
            return None;
        }
        let pointer = format!("{resource_pointer}{fragment}");
        let value = crate::openapi::pointer_get(&self.document.file(file).value, &pointer)?;
        Some((file, pointer, value))
    }

    fn unique_name(&self, (file, pointer): &(FileId, String)) -> String {
        let last = pointer
            .rsplit('/')
            .next()
            .filter(|s| !s.is_empty())
            .map(|s| s.replace("~1", "/").replace("~0", "~"));
        let base = last.unwrap_or_else(|| {
            let name = &self.document.file(*file).name;
            let stem = name.rsplit('/').next().unwrap_or(name);
            stem.split('.').next().unwrap_or(stem).to_string()
        });
        let mut base: String = base
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if base.is_empty() {
            base = "schema".to_string();
        }
        let mut name = base.clone();
        let mut n = 2;
        while self.defs.contains_key(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        name
    }

    fn is_read_only(&self, file: FileId, schema: &Value) -> bool {
        let direct = schema.get("readOnly") == Some(&Value::Bool(true));
        direct
            || self
                .resolve(file, schema)
                .is_some_and(|(_, target)| target.get("readOnly") == Some(&Value::Bool(true)))
    }
}

/// What is wrong with `value` as the value of `key`, by the JSON Schema 2020-12
/// meta-schema (and OpenAPI 3.0's `nullable`, `x-nullable` and boolean exclusive bounds, which
/// are translated), or `None` when it is fine or `key` is not a keyword. Subschema keywords
/// are judged where they are translated. A repeated name in `required` or `type` is repaired,
/// not refused.
fn malformed(key: &str, value: &Value) -> Option<&'static str> {
    let non_negative_integer = |v: &Value| {
        v.as_u64().is_some() || v.as_f64().is_some_and(|f| f >= 0.0 && f.fract() == 0.0)
    };
    let simple_type = |v: &Value| {
        matches!(
            v.as_str(),
            Some("array" | "boolean" | "integer" | "null" | "number" | "object" | "string")
        )
    };
    let ok = match key {
        "type" => match value {
            Value::Array(types) => !types.is_empty() && types.iter().all(simple_type),
            // Swagger 2.0's `file` is translated to a base64 string.
            Value::String(t) => simple_type(value) || t == "file",
            _ => false,
        },
        "enum" => value.is_array(),
        "multipleOf" => value.as_f64().is_some_and(|n| n > 0.0),
        "maximum" | "minimum" => value.is_number(),
        "exclusiveMaximum" | "exclusiveMinimum" => value.is_number() || value.is_boolean(),
        "maxLength" | "minLength" | "maxItems" | "minItems" | "maxContains" | "minContains"
        | "maxProperties" | "minProperties" => non_negative_integer(value),
        "pattern" | "format" | "title" | "description" | "contentEncoding" | "contentMediaType"
        | "$comment" => value.is_string(),
        "uniqueItems" | "deprecated" | "readOnly" | "writeOnly" => value.is_boolean(),
        "required" => value
            .as_array()
            .is_some_and(|names| names.iter().all(Value::is_string)),
        "dependentRequired" => value.as_object().is_some_and(|map| {
            map.values().all(|names| {
                names
                    .as_array()
                    .is_some_and(|names| names.iter().all(Value::is_string))
            })
        }),
        "examples" => value.is_array(),
        "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
            value.as_array().is_some_and(|items| !items.is_empty())
        }
        "properties" | "patternProperties" | "dependentSchemas" => {
            value.is_object() || value.get("$ref").is_some()
        }
        _ => true,
    };
    if ok {
        return None;
    }
    Some(match key {
        "type" => "its value is not a type name (or a list of them)",
        "multipleOf" => "its value is not a number greater than 0",
        "maximum" | "minimum" | "exclusiveMaximum" | "exclusiveMinimum" => {
            "its value is not a number"
        }
        "maxLength" | "minLength" | "maxItems" | "minItems" | "maxContains" | "minContains"
        | "maxProperties" | "minProperties" => "its value is not a whole number of 0 or more",
        "uniqueItems" | "deprecated" | "readOnly" | "writeOnly" => "its value is not true or false",
        "required" => "its value is not a list of property names",
        "dependentRequired" => "its value does not map names to lists of property names",
        "allOf" | "anyOf" | "oneOf" | "prefixItems" => "its value is not a non-empty list",
        "properties" | "patternProperties" | "dependentSchemas" => "its value is not a mapping",
        "enum" | "examples" => "its value is not a list",
        _ => "its value is not a string",
    })
}

fn def_ref(name: &str) -> Value {
    let mut map = Map::with_capacity(1);
    map.insert(
        "$ref".to_string(),
        Value::String(format!("#/$defs/{}", crate::openapi::escape_token(name))),
    );
    Value::Object(map)
}

/// OpenAPI 2.0/3.0 `nullable: true` in 2020-12 terms: `null` joins the allowed types (and
/// the enum, when there is one). Without a `type`, nullable has no effect (OpenAPI 3.0.3).
fn make_nullable(schema: &mut Map<String, Value>) {
    match schema.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = std::mem::take(t);
            schema.insert(
                "type".to_string(),
                Value::Array(vec![Value::String(t), Value::from("null")]),
            );
        }
        Some(Value::Array(types)) if !types.iter().any(|t| t == "null") => {
            types.push(Value::from("null"))
        }
        _ => return,
    }
    if let Some(Value::Array(values)) = schema.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}

//! A tool's result shape: how a 2xx JSON answer is shaped as served, decided once at compile
//! time and applied at run time by [`ResultShape::apply`] (the projection by `fields:`,
//! called by `mcp::result::shaped` alone, on the value the API sent, before the answer is
//! checked or written) and [`legacy_wrap`] (the wrap a 2025-11-25 client needs where the
//! root is not an object, decided by the result writer, which alone knows the era).
//!
//! The same description gives what a tool declares of its results: the output schema is the
//! documented one projected by [`Projection::schema`], the very rule [`Projection::apply`]
//! follows on a value, and wrapped for 2025-11-25 by the rule [`legacy_wrap`] follows, so
//! what is declared and what is served cannot part.

use serde_json::{Map, Value};

/// The member a legacy client finds a non-object `structuredContent` under: 2025-11-25
/// allows only objects there, so `[1,2]` is served to it as `{"result":[1,2]}`.
pub const LEGACY_WRAP_KEY: &str = "result";

/// How a tool's 2xx JSON answers are shaped as served.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResultShape {
    /// The projection of `fields:`, when the tool has one.
    pub projection: Option<Projection>,
}

impl ResultShape {
    /// The shape of a tool whose `fields:` are `fields` (none: the answer as it is).
    pub fn new(fields: Option<&[String]>) -> ResultShape {
        ResultShape {
            projection: fields.map(Projection::of),
        }
    }

    /// A 2xx JSON answer's value as served, whatever the era, and whether it was projected.
    pub fn apply(&self, value: Value) -> (Value, bool) {
        match &self.projection {
            Some(projection) => (projection.apply(&value), true),
            None => (value, false),
        }
    }
}

/// Whether a `structuredContent` of `value` is wrapped under [`LEGACY_WRAP_KEY`] for a
/// client that needs an object there (2025-11-25): when it is not one.
pub fn legacy_wrap(value: &Value) -> bool {
    !value.is_object()
}

/// The fields kept of a JSON answer: each as a JSON pointer's tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Projection(Vec<Vec<String>>);

impl Projection {
    /// The projection of a `fields:` list: each a JSON pointer, or one plain name.
    pub fn of(fields: &[String]) -> Projection {
        Projection(
            fields
                .iter()
                .map(|field| match field.strip_prefix('/') {
                    Some(pointer) => pointer
                        .split('/')
                        .map(|token| token.replace("~1", "/").replace("~0", "~"))
                        .collect(),
                    None => vec![field.clone()],
                })
                .collect(),
        )
    }

    /// Each kept field's tokens.
    pub fn paths(&self) -> &[Vec<String>] {
        &self.0
    }

    /// Keeps only the fields of `value`, in the value's own order. An array along the way
    /// applies the rest of the path to each element; a scalar is kept as it is.
    pub fn apply(&self, value: &Value) -> Value {
        let paths: Vec<&[String]> = self.0.iter().map(Vec::as_slice).collect();
        project(value, &paths)
    }
    /// What `schema` says of a value once [`Projection::apply`] kept only the fields: the
    /// same walk over the schema that the projection makes over a value. An object keeps the
    /// properties the paths name (and `required` of them), an array its `items` projected
    /// alike, each branch of `allOf`/`anyOf`/`oneOf` is projected (`oneOf` becomes `anyOf`:
    /// two branches may agree once projected), a `$ref` is projected in place; what could
    /// stop holding once members are gone (`additionalProperties`, counts of properties,
    /// `not`, `if`, `contains`, `uniqueItems`, an `enum` of objects) is left out, so the
    /// schema is as strict as it can be and never refuses a projected answer. `$defs` the
    /// result still names are kept at its root. `Err` for a schema whose projection would
    /// have to be unrolled deeper than [`MAX_PROJECTED_DEPTH`] (a recursive one).
    pub fn schema(&self, schema: &Value) -> Result<Value, String> {
        let defs = schema.get("$defs").and_then(Value::as_object);
        let paths: Vec<&[String]> = self.0.iter().map(Vec::as_slice).collect();
        let mut projected = project_schema(schema, &paths, defs, 0)?;
        if let (Some(defs), Value::Object(root)) = (defs, &mut projected) {
            let kept = referenced_defs(root, defs);
            if !kept.is_empty() {
                root.insert("$defs".to_string(), Value::Object(kept));
            }
        }
        Ok(projected)
    }
}

/// How deep [`Projection::schema`] unrolls nested schemas, `$ref`s included.
pub const MAX_PROJECTED_DEPTH: usize = 48;

/// Keywords that say the same of a projected value as of the value: they judge a scalar, the
/// value's type or an array's length, which the projection keeps.
const KEPT_KEYWORDS: &[&str] = &[
    "type",
    "title",
    "description",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "deprecated",
    "readOnly",
    "writeOnly",
];

fn project_schema(
    schema: &Value,
    paths: &[&[String]],
    defs: Option<&Map<String, Value>>,
    depth: usize,
) -> Result<Value, String> {
    if paths.iter().any(|path| path.is_empty()) {
        let mut whole = schema.clone();
        if let Value::Object(map) = &mut whole {
            map.remove("$defs");
        }
        return Ok(whole);
    }
    if depth > MAX_PROJECTED_DEPTH {
        return Err(format!(
            "projecting its response schema by `fields:` unrolls it more than {MAX_PROJECTED_DEPTH} deep (a recursive schema)"
        ));
    }
    let map = match schema {
        Value::Object(map) => map,
        other => return Ok(other.clone()),
    };
    let mut out = Map::new();
    let mut all_of = Vec::new();
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        let target = reference
            .strip_prefix("#/$defs/")
            .and_then(|name| defs?.get(crate::openapi::unescape_token(name)?.as_ref()))
            .ok_or_else(|| {
                format!("its response schema names {reference:?}, which is not one of its `$defs`")
            })?;
        all_of.push(project_schema(target, paths, defs, depth + 1)?);
    }
    for key in KEPT_KEYWORDS {
        if let Some(value) = map.get(*key) {
            out.insert((*key).to_string(), value.clone());
        }
    }
    for key in ["enum", "const"] {
        let scalar = |value: &Value| !value.is_object() && !value.is_array();
        let kept = match map.get(key) {
            Some(Value::Array(values)) if key == "enum" => values.iter().all(scalar),
            Some(value) if key == "const" => scalar(value),
            _ => false,
        };
        if kept {
            out.insert(key.to_string(), map[key].clone());
        }
    }
    let properties = map.get("properties").and_then(Value::as_object);
    let mut heads: Vec<&str> = Vec::new();
    for path in paths {
        if !heads.contains(&path[0].as_str()) {
            heads.push(&path[0]);
        }
    }
    let mut kept = Map::new();
    for head in &heads {
        let rests = rests(paths, head);
        let child = match properties.and_then(|properties| properties.get(*head)) {
            Some(child) => child,
            // A member the schema does not name is judged by `additionalProperties`, unless a
            // `patternProperties` name may match it; where neither says, nothing is.
            None if map.contains_key("patternProperties") => continue,
            None => match map.get("additionalProperties") {
                Some(child @ Value::Object(_)) => child,
                _ => continue,
            },
        };
        kept.insert(
            (*head).to_string(),
            project_schema(child, &rests, defs, depth + 1)?,
        );
    }
    if !kept.is_empty() {
        out.insert("properties".to_string(), Value::Object(kept));
    }
    if let Some(required) = map.get("required").and_then(Value::as_array) {
        let required: Vec<Value> = required
            .iter()
            .filter(|name| name.as_str().is_some_and(|name| heads.contains(&name)))
            .cloned()
            .collect();
        if !required.is_empty() {
            out.insert("required".to_string(), Value::Array(required));
        }
    }
    if let Some(items) = map.get("items") {
        out.insert(
            "items".to_string(),
            project_schema(items, paths, defs, depth + 1)?,
        );
    }
    if let Some(Value::Array(prefix)) = map.get("prefixItems") {
        let prefix = prefix
            .iter()
            .map(|item| project_schema(item, paths, defs, depth + 1))
            .collect::<Result<Vec<_>, _>>()?;
        out.insert("prefixItems".to_string(), Value::Array(prefix));
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = map.get(key) else {
            continue;
        };
        let branches = branches
            .iter()
            .map(|branch| project_schema(branch, paths, defs, depth + 1))
            .collect::<Result<Vec<_>, _>>()?;
        match key {
            "allOf" => all_of.extend(branches),
            _ => all_of.push(Value::Object(Map::from_iter([(
                "anyOf".to_string(),
                Value::Array(branches),
            )]))),
        }
    }
    match all_of.len() {
        0 => {}
        1 if out.is_empty() => return Ok(all_of.remove(0)),
        _ => {
            out.insert("allOf".to_string(), Value::Array(all_of));
        }
    }
    Ok(Value::Object(out))
}

/// The `$defs` entries that `schema` names, directly or through other entries.
fn referenced_defs(schema: &Map<String, Value>, defs: &Map<String, Value>) -> Map<String, Value> {
    fn references(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(name) = map
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|reference| reference.strip_prefix("#/$defs/"))
                    && let Some(name) = crate::openapi::unescape_token(name)
                {
                    out.push(name.into_owned());
                }
                map.values().for_each(|child| references(child, out));
            }
            Value::Array(items) => items.iter().for_each(|child| references(child, out)),
            _ => {}
        }
    }
    let mut pending = Vec::new();
    for (key, value) in schema {
        if key != "$defs" {
            references(value, &mut pending);
        }
    }
    let mut kept = Map::new();
    while let Some(name) = pending.pop() {
        if kept.contains_key(&name) {
            continue;
        }
        if let Some(def) = defs.get(&name) {
            references(def, &mut pending);
            kept.insert(name, def.clone());
        }
    }
    // In the order the document's defs are in, so the text is the same on every run.
    defs.iter()
        .filter(|(name, _)| kept.contains_key(*name))
        .map(|(name, def)| (name.clone(), def.clone()))
        .collect()
}

/// The types a schema's root admits, as far as its `type` says: read through a `$ref` to a
/// `$defs` entry and through `allOf` (whose branches each narrow it); empty when it says
/// none.
fn root_types<'s>(
    schema: &'s Value,
    defs: Option<&'s Map<String, Value>>,
    hops: usize,
) -> Vec<&'s str> {
    match schema.get("type") {
        Some(Value::String(one)) => return vec![one.as_str()],
        Some(Value::Array(several)) => return several.iter().filter_map(Value::as_str).collect(),
        _ => {}
    }
    if hops > 8 {
        return Vec::new();
    }
    let target = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
        .and_then(|name| defs?.get(crate::openapi::unescape_token(name)?.as_ref()));
    if let Some(target) = target {
        return root_types(target, defs, hops + 1);
    }
    schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|branch| root_types(branch, defs, hops + 1))
        .find(|types| !types.is_empty())
        .unwrap_or_default()
}

/// The output schema a 2025-11-25 client is given for `schema`, the one a 2026-07-28 client
/// is: that revision wants `type: object` at the root, and [`legacy_wrap`] serves a root
/// that is not an object under [`LEGACY_WRAP_KEY`]. `None` when the schema admits objects
/// alone (its root says `type: object`), which both revisions are given as it is.
pub fn legacy_schema(schema: &Value) -> Option<Value> {
    let types = root_types(schema, schema.get("$defs").and_then(Value::as_object), 0);
    if types == ["object"] {
        // Always an object: never wrapped, but said so at the root where only a `$ref` or an
        // `allOf` did.
        if schema.get("type").and_then(Value::as_str) == Some("object") {
            return None;
        }
        let mut said = schema.clone();
        if let Value::Object(map) = &mut said {
            map.insert("type".to_string(), Value::from("object"));
        }
        return Some(said);
    }
    let mut inner = schema.clone();
    let defs = inner.as_object_mut().and_then(|map| map.remove("$defs"));
    let wrapped = |inner: Value| {
        serde_json::json!({
            "properties": { LEGACY_WRAP_KEY: inner },
            "required": [LEGACY_WRAP_KEY],
        })
    };
    let mut root = if !types.is_empty() && !types.contains(&"object") {
        // Never an object: always wrapped.
        let mut root = wrapped(inner);
        root["additionalProperties"] = Value::Bool(false);
        root
    } else {
        // An object is served as it is, anything else wrapped: either may come.
        serde_json::json!({ "anyOf": [inner.clone(), wrapped(inner)] })
    };
    root["type"] = Value::from("object");
    if let Some(defs) = defs {
        root["$defs"] = defs;
    }
    Some(root)
}

fn project(value: &Value, paths: &[&[String]]) -> Value {
    match value {
        Value::Array(items) => {
            Value::Array(items.iter().map(|item| project(item, paths)).collect())
        }
        Value::Object(map) => {
            let mut kept = Map::new();
            for (key, child) in map {
                let rests = rests(paths, key);
                if rests.is_empty() {
                    continue;
                }
                if rests.iter().any(|rest| rest.is_empty()) {
                    kept.insert(key.clone(), child.clone());
                } else {
                    kept.insert(key.clone(), project(child, &rests));
                }
            }
            Value::Object(kept)
        }
        scalar => scalar.clone(),
    }
}

/// What is left of each path that starts at `key`.
fn rests<'p>(paths: &[&'p [String]], key: &str) -> Vec<&'p [String]> {
    paths
        .iter()
        .filter(|path| path.first().is_some_and(|first| first == key))
        .map(|path| &path[1..])
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{LEGACY_WRAP_KEY, Projection, ResultShape, legacy_schema, legacy_wrap};

    #[test]
    fn a_projection_keeps_named_fields_through_arrays_and_leaves_scalars() {
        let shape = ResultShape::new(Some(&["id".into(), "/owner/login".into()]));
        let body = json!([{"id": 1, "owner": {"login": "a", "url": "u"}, "big": "x"}, {"id": 2, "owner": null}, 3]);
        let (served, projected) = shape.apply(body);
        assert!(projected);
        assert_eq!(
            served,
            json!([{"id": 1, "owner": {"login": "a"}}, {"id": 2, "owner": null}, 3])
        );
        let (same, projected) = ResultShape::default().apply(json!({"a": 1}));
        assert!(!projected);
        assert_eq!(same, json!({"a": 1}));
    }

    /// Whether `schema` accepts `value`, as the runtime's validator judges.
    fn accepts(schema: &serde_json::Value, value: &serde_json::Value) -> bool {
        jsonschema::draft202012::meta::validate(schema).expect("a valid 2020-12 schema");
        jsonschema::draft202012::new(schema)
            .expect("compiles")
            .is_valid(value)
    }

    #[test]
    fn a_projected_schema_accepts_exactly_what_the_projection_keeps() {
        let schema = json!({
            "$defs": {
                "Owner": {"type": "object", "properties": {"login": {"type": "string"}, "url": {"type": "string"}},
                          "required": ["login", "url"], "additionalProperties": false},
                "Unused": {"type": "string"}
            },
            "type": "array",
            "items": {"oneOf": [
                {"type": "object", "properties": {"id": {"type": "integer"}, "owner": {"$ref": "#/$defs/Owner"},
                  "big": {"type": "string"}}, "required": ["id", "big"], "additionalProperties": false,
                  "minProperties": 3},
                {"type": "object", "properties": {"id": {"type": "integer"}, "owner": {"type": "null"}},
                  "required": ["id"]}
            ]}
        });
        let projection = Projection::of(&["id".into(), "/owner/login".into()]);
        let projected = projection.schema(&schema).expect("projects");
        assert!(projected.get("$defs").is_none(), "{projected}");
        let body = json!([{"id": 1, "owner": {"login": "a", "url": "u"}, "big": "x"}, {"id": 2, "owner": null}]);
        assert!(accepts(&schema, &body));
        assert!(accepts(&projected, &projection.apply(&body)));
        assert!(
            !accepts(&projected, &json!([{"id": "one"}])),
            "what is kept is still checked"
        );
        assert!(
            !accepts(&projected, &json!([{"owner": null}])),
            "a required field kept is required"
        );
        // A field kept whole keeps its `$ref`, and the `$defs` it needs.
        let whole = Projection::of(&["owner".into()])
            .schema(&schema)
            .expect("projects");
        assert_eq!(whole["$defs"], json!({"Owner": schema["$defs"]["Owner"]}));
        assert!(accepts(
            &whole,
            &json!([{"owner": {"login": "a", "url": "u"}}])
        ));
        assert!(!accepts(&whole, &json!([{"owner": {"login": "a"}}])));
    }

    #[test]
    fn a_recursive_schema_projected_through_arrays_is_refused_not_unrolled_for_ever() {
        let schema = json!({"$defs": {"Tree": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}},
                            "$ref": "#/$defs/Tree"});
        let why = Projection::of(&["id".into()])
            .schema(&schema)
            .expect_err("refused");
        assert!(why.contains("recursive"), "{why}");
    }

    #[test]
    fn the_legacy_schema_wraps_what_the_writer_wraps() {
        assert_eq!(legacy_schema(&json!({"type": "object"})), None);
        let object = json!({"$ref": "#/$defs/A", "$defs": {"A": {"allOf": [{"type": "object"}]}}});
        let said = legacy_schema(&object).expect("typed at the root");
        assert_eq!(
            said["type"], "object",
            "an object through `$ref` and `allOf`"
        );
        assert_eq!(said["$ref"], object["$ref"], "and not wrapped");
        let array = json!({"type": "array", "items": {"$ref": "#/$defs/A"}, "$defs": {"A": {"type": "integer"}}});
        let wrapped = legacy_schema(&array).expect("wrapped");
        assert_eq!(wrapped["type"], "object");
        assert!(accepts(&wrapped, &json!({LEGACY_WRAP_KEY: [1, 2]})));
        assert!(!accepts(&wrapped, &json!([1, 2])));
        let either = json!({"type": ["object", "array"]});
        let wrapped = legacy_schema(&either).expect("wrapped");
        for served in [json!({"a": 1}), json!({LEGACY_WRAP_KEY: [1]})] {
            assert!(accepts(&wrapped, &served), "{served}");
        }
        assert!(
            !accepts(&wrapped, &json!([1])),
            "a legacy client never sees an array"
        );
    }

    #[test]
    fn only_a_root_that_is_not_an_object_is_wrapped() {
        assert!(!legacy_wrap(&json!({"a": 1})));
        for value in [json!([1]), json!("a"), json!(1), json!(null), json!(true)] {
            assert!(legacy_wrap(&value), "{value}");
        }
    }
}

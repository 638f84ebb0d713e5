//! A tool's result shape: how a 2xx JSON answer is shaped as served, decided once at compile
//! time and applied at run time by [`ResultShape::apply`] (the projection by `fields:`) and
//! [`legacy_wrap`] (the wrap a 2025-11-25 client needs where the root is not an object).
//!
//! The projection and the wrap used to be decided in `upstream` and in the result writer,
//! each on its own; here they are one description, which what a tool declares of its
//! results can be derived from as well.

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

    use super::{ResultShape, legacy_wrap};

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

    #[test]
    fn only_a_root_that_is_not_an_object_is_wrapped() {
        assert!(!legacy_wrap(&json!({"a": 1})));
        for value in [json!([1]), json!("a"), json!(1), json!(null), json!(true)] {
            assert!(legacy_wrap(&value), "{value}");
        }
    }
}

//! A tool's input schema as the catalog holds it: the JSON text `tools/list` serves, every
//! object's keys sorted, written once at compile from the tree the builder made.
//!
//! A schema tree takes several times its text's memory (5,000 synthetic operations: 57 MiB of
//! trees, 7.6 MB of text), and once compiled only three readers need the schema: `tools/list`
//! and the lock, which want this very text, and argument validation, which compiles its own
//! form on a tool's first call. The tree is dropped as soon as the tool is built, so a large
//! document's schemas are never all held as trees at once.
//!
//! The text is kept in pieces where that saves most: each operation's schema carries, in its
//! root's `$defs`, a copy of every component it reaches, and a large API's operations reach the
//! same ones. Microsoft Graph beta's 22,361 input schemas are 264 MB of text, 251 MB of it
//! `$defs` members, of which 2.7 MB are distinct. A schema compiled with a [`SharedDefs`] set keeps
//! its root's other members as text and each `$defs` member as one text every schema that holds
//! the same member points to; it is written out, member by member, as the very bytes the whole
//! text would be.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::Value;
use serde_json::value::RawValue;

use super::Sorted;

/// The deepest nesting of arrays and objects a served schema may have: what serde_json (and
/// ferry's validator with it) reads back. Deeper, the text could be written but not read
/// again, by ferry or by a client whose JSON reader has the same guard.
pub const MAX_NESTING: usize = 127;

/// Why `schema` cannot be served: it nests arrays and objects deeper than [`MAX_NESTING`].
pub fn too_deep(schema: &Value) -> Option<String> {
    /// Whether `value` nests more than `levels` deep (a scalar nests none, an array or object
    /// one more than its deepest member); no deeper than `levels` is looked.
    fn deeper_than(value: &Value, levels: usize) -> bool {
        match value {
            Value::Object(map) => levels == 0 || map.values().any(|v| deeper_than(v, levels - 1)),
            Value::Array(items) => levels == 0 || items.iter().any(|v| deeper_than(v, levels - 1)),
            _ => false,
        }
    }
    deeper_than(schema, MAX_NESTING).then(|| {
        format!(
            "the input schema nests arrays and objects more than {MAX_NESTING} deep, deeper than \
             JSON readers such as ferry's own read back: no client could be sure to read it"
        )
    })
}

/// Canonical compact JSON: what [`super::canonical`] makes of the schema, as text, whole or
/// in the pieces of an object whose `$defs` are shared. Cloned by reference: the server
/// holds a copy of each tool the catalog holds, and this keeps their texts one.
#[derive(Clone)]
pub struct InputSchema(Arc<Form>);

enum Form {
    Whole(Box<RawValue>),
    /// An object's members in sorted order, its `$defs` in their place.
    Split(Box<[(Box<str>, Piece)]>),
}

enum Piece {
    Text(Box<RawValue>),
    /// The members of `$defs`, in sorted order.
    Defs(Box<[Arc<Def>]>),
}

/// One member of a root's `$defs`: its name and its schema's text.
struct Def {
    name: Box<str>,
    schema: Box<RawValue>,
}

// Two members are the same when their names and texts are.
impl PartialEq for Def {
    fn eq(&self, other: &Def) -> bool {
        self.name == other.name && self.schema.get() == other.schema.get()
    }
}

impl Eq for Def {}

impl std::hash::Hash for Def {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
        self.schema.get().hash(state);
    }
}

/// The `$defs` members the schemas compiled so far hold, each kept once (see the module's
/// comment), and those found valid JSON Schema 2020-12. One set serves one compile on one
/// thread; the schemas keep what they point to.
#[derive(Default)]
pub struct SharedDefs {
    held: HashSet<Arc<Def>>,
    /// The same members by each tree they were met as, in [`encode`]'s form, name first.
    trees: HashMap<Box<[u8]>, Arc<Def>>,
    /// The members the meta-schema found valid, each as [`encode`] writes it.
    valid: HashSet<Box<[u8]>>,
    /// Where a member is written to be looked up, kept for its allocation.
    scratch: Vec<u8>,
}

impl InputSchema {
    /// The text of `schema` with every object's keys sorted.
    pub fn new(schema: &Value) -> InputSchema {
        InputSchema(Arc::new(Form::Whole(raw(schema))))
    }

    /// [`InputSchema::new`], its root's `$defs` members taken from `shared` where another
    /// schema already holds the same member, and added to it otherwise.
    pub fn shared(schema: &Value, shared: &mut SharedDefs) -> InputSchema {
        let Some(map) = schema.as_object() else {
            return InputSchema::new(schema);
        };
        if map
            .get("$defs")
            .and_then(Value::as_object)
            .is_none_or(serde_json::Map::is_empty)
        {
            return InputSchema::new(schema);
        }
        let members = sorted(map)
            .map(|(key, value)| {
                let piece = match (key.as_str(), value.as_object()) {
                    ("$defs", Some(defs)) => Piece::Defs(
                        sorted(defs)
                            .map(|(name, schema)| shared.get(name, schema))
                            .collect(),
                    ),
                    _ => Piece::Text(raw(value)),
                };
                (Box::from(key.as_str()), piece)
            })
            .collect();
        InputSchema(Arc::new(Form::Split(members)))
    }

    /// No schema (`null`): a tool kept only for its report (`compile_report`), or one step
    /// of a workflow, whose arguments the workflow's own schema checks.
    pub fn none() -> InputSchema {
        InputSchema(Arc::new(Form::Whole(RawValue::NULL.to_owned())))
    }

    pub fn is_none(&self) -> bool {
        matches!(&*self.0, Form::Whole(text) if text.get() == "null")
    }

    /// The JSON text: compact, keys sorted.
    pub fn text(&self) -> Cow<'_, str> {
        match &*self.0 {
            Form::Whole(text) => Cow::Borrowed(text.get()),
            // Writing strings and raw texts into a string cannot fail.
            Form::Split(_) => Cow::Owned(serde_json::to_string(self).unwrap_or_default()),
        }
    }

    /// Whether `needle` occurs in the text of one of the schema's pieces (a keyword, say),
    /// without writing the whole text out.
    pub fn mentions(&self, needle: &str) -> bool {
        match &*self.0 {
            Form::Whole(text) => text.get().contains(needle),
            Form::Split(members) => members.iter().any(|(key, piece)| {
                key.contains(needle)
                    || match piece {
                        Piece::Text(text) => text.get().contains(needle),
                        Piece::Defs(defs) => defs.iter().any(|def| {
                            def.name.contains(needle) || def.schema.get().contains(needle)
                        }),
                    }
            }),
        }
    }

    /// The schema as a tree, parsed from the text (its keys in sorted order).
    pub fn to_value(&self) -> Value {
        // The text was written from a `Value`, so it parses.
        serde_json::from_str(&self.text()).unwrap_or(Value::Null)
    }
}

impl SharedDefs {
    /// The member `name: schema`, as held already or newly added. A member met before as
    /// the same tree is found by [`encode`]'s form of it, which is cheaper to write than its
    /// text (nothing sorted, nothing escaped).
    fn get(&mut self, name: &str, schema: &Value) -> Arc<Def> {
        self.scratch.clear();
        encode_text(name, &mut self.scratch);
        encode(schema, &mut self.scratch);
        if let Some(held) = self.trees.get(self.scratch.as_slice()) {
            return held.clone();
        }
        let def = Def {
            name: name.into(),
            schema: raw(schema),
        };
        let def = match self.held.get(&def) {
            Some(held) => held.clone(),
            None => {
                let def = Arc::new(def);
                self.held.insert(def.clone());
                def
            }
        };
        self.trees
            .insert(self.scratch.as_slice().into(), def.clone());
        def
    }

    /// `schema` checked against the JSON Schema 2020-12 meta-schema: its root with its
    /// `$defs` emptied, and each member alone, once per set. The meta-schema checks each
    /// `$defs` member as a schema of its own (`$dynamicRef: "#meta"`), so the answer is the
    /// same; a large API's schemas carry the same members again and again, and checking every
    /// copy was a fifth of compiling a tool. A member is known again by its tree written out in
    /// [`encode`]'s form, exactly. When a part fails, the whole schema is checked again for
    /// the meta-schema's error, so the error is the one a check of the whole gives.
    pub fn meta_check<'s>(
        &mut self,
        schema: &'s mut Value,
    ) -> Result<(), jsonschema::ValidationError<'s>> {
        if self.meta_valid(schema) {
            return Ok(());
        }
        jsonschema::draft202012::meta::validate(schema)
    }

    /// Whether [`SharedDefs::meta_check`] passes, by parts, with no error made.
    fn meta_valid(&mut self, schema: &mut Value) -> bool {
        use jsonschema::draft202012::meta;
        let Some(Value::Object(defs)) = schema.get_mut("$defs") else {
            return meta::is_valid(schema);
        };
        let defs = std::mem::take(defs);
        let mut valid = meta::is_valid(schema);
        for def in defs.values() {
            if !valid {
                break;
            }
            self.scratch.clear();
            encode(def, &mut self.scratch);
            if !self.valid.contains(self.scratch.as_slice()) {
                valid = meta::is_valid(def);
                if valid {
                    self.valid.insert(self.scratch.as_slice().into());
                }
            }
        }
        if let Some(emptied) = schema.get_mut("$defs") {
            *emptied = Value::Object(defs);
        }
        valid
    }
}

/// Writes `value` into `out` so that two trees write the same bytes only when they are equal
/// with their objects' members in the same order: each value's kind first, then each text and
/// each list with its length before it. Several times cheaper than writing JSON (nothing is
/// escaped) or hashing member by member.
fn encode(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.push(0),
        Value::Bool(value) => out.push(1 + u8::from(*value)),
        Value::Number(number) => {
            let (kind, bits) = if let Some(value) = number.as_u64() {
                (3, value)
            } else if let Some(value) = number.as_i64() {
                (4, value as u64)
            } else {
                (5, number.as_f64().unwrap_or_default().to_bits())
            };
            out.push(kind);
            out.extend_from_slice(&bits.to_le_bytes());
        }
        Value::String(value) => {
            out.push(6);
            encode_text(value, out);
        }
        Value::Array(items) => {
            out.push(7);
            out.extend_from_slice(&(items.len() as u64).to_le_bytes());
            for item in items {
                encode(item, out);
            }
        }
        Value::Object(map) => {
            out.push(8);
            out.extend_from_slice(&(map.len() as u64).to_le_bytes());
            for (key, value) in map {
                encode_text(key, out);
                encode(value, out);
            }
        }
    }
}

/// A text as [`encode`] writes it: its length, then its bytes.
fn encode_text(text: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(&(text.len() as u64).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

/// The compact text of `value`, every object's keys sorted.
fn raw(value: &Value) -> Box<RawValue> {
    // Serializing a `Value` cannot fail: its keys are strings.
    serde_json::value::to_raw_value(&Sorted(value)).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

/// The members of `map` in the order [`Sorted`] writes them.
fn sorted(map: &serde_json::Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    entries.into_iter()
}

impl From<Value> for InputSchema {
    fn from(schema: Value) -> InputSchema {
        InputSchema::new(&schema)
    }
}

impl PartialEq for InputSchema {
    fn eq(&self, other: &InputSchema) -> bool {
        self.text() == other.text()
    }
}

impl Eq for InputSchema {}

/// Written as the text itself, into any serializer: JSON writers copy it, others (such as
/// `serde_json::to_value`) read it as the value it is.
impl Serialize for InputSchema {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &*self.0 {
            Form::Whole(text) => text.serialize(serializer),
            Form::Split(members) => {
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (key, piece) in members {
                    match piece {
                        Piece::Text(text) => map.serialize_entry(key, text)?,
                        Piece::Defs(defs) => map.serialize_entry(key, &DefsMap(defs))?,
                    }
                }
                map.end()
            }
        }
    }
}

/// A root's `$defs`, written member by member.
struct DefsMap<'d>(&'d [Arc<Def>]);

impl Serialize for DefsMap<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for def in self.0 {
            map.serialize_entry(&def.name, &def.schema)?;
        }
        map.end()
    }
}

impl fmt::Display for InputSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl fmt::Debug for InputSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{Form, InputSchema, MAX_NESTING, Piece, SharedDefs, too_deep};

    /// An object schema whose one property holds `levels - 1` arrays inside each other.
    fn nested(levels: usize) -> Value {
        let mut value = json!(1);
        for _ in 1..levels {
            value = Value::Array(vec![value]);
        }
        json!({ "default": value })
    }

    #[test]
    fn a_schema_is_served_as_deep_as_it_reads_back_and_no_deeper() {
        let deepest = nested(MAX_NESTING);
        assert_eq!(too_deep(&deepest), None);
        let text = InputSchema::new(&deepest);
        assert_eq!(text.to_value(), deepest, "read back whole");
        let deeper = nested(MAX_NESTING + 1);
        assert!(too_deep(&deeper).is_some_and(|why| why.contains("127")));
        let text = InputSchema::new(&deeper);
        assert!(
            serde_json::from_str::<Value>(&text.text()).is_err(),
            "what is refused could not be read back"
        );
    }

    #[test]
    fn shared_definitions_are_held_once_and_written_as_the_whole_text() {
        let pet = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let first = json!({
            "type": "object",
            "properties": {"pet": {"$ref": "#/$defs/Pet"}, "tag": {"$ref": "#/$defs/Tag"}},
            "$defs": {"Tag": {"type": "string"}, "Pet": pet.clone()},
            "additionalProperties": false,
        });
        let second = json!({
            "properties": {"pet": {"$ref": "#/$defs/Pet"}},
            "$defs": {"Pet": pet},
            "type": "object",
        });
        let mut shared = SharedDefs::default();
        let (one, two) = (
            InputSchema::shared(&first, &mut shared),
            InputSchema::shared(&second, &mut shared),
        );
        for (split, tree) in [(&one, &first), (&two, &second)] {
            let whole = InputSchema::new(tree);
            assert_eq!(split.text(), whole.text(), "the same bytes");
            assert_eq!(
                serde_json::to_vec(split).unwrap(),
                serde_json::to_vec(&whole).unwrap()
            );
            assert_eq!(split.to_value(), *tree);
            assert_eq!(
                serde_json::to_value(split).unwrap(),
                *tree,
                "read as the value it is"
            );
        }
        let pet_of = |schema: &InputSchema| match &*schema.0 {
            Form::Split(members) => members
                .iter()
                .find_map(|(_, piece)| match piece {
                    Piece::Defs(defs) => defs.iter().find(|d| &*d.name == "Pet").cloned(),
                    Piece::Text(_) => None,
                })
                .expect("Pet is held"),
            Form::Whole(_) => panic!("a schema with $defs is held in pieces"),
        };
        assert!(std::sync::Arc::ptr_eq(&pet_of(&one), &pet_of(&two)));
        assert!(one.mentions("\"name\"") && one.mentions("additionalProperties"));
        assert!(!two.mentions("Tag"));
        assert_eq!(shared.held.len(), 2, "Pet and Tag, once each");
        // Without $defs, a schema is one text.
        let plain = InputSchema::shared(&json!({"type": "object"}), &mut shared);
        assert!(matches!(*plain.0, Form::Whole(_)));
    }

    #[test]
    fn a_member_met_again_in_another_order_is_the_one_held() {
        let mut shared = SharedDefs::default();
        let one = json!({"type": "string", "minLength": 1});
        let other_order = json!({"minLength": 1, "type": "string"});
        let (first, again, reordered, renamed) = (
            shared.get("Name", &one),
            shared.get("Name", &one),
            shared.get("Name", &other_order),
            shared.get("Other", &one),
        );
        assert!(std::sync::Arc::ptr_eq(&first, &again));
        assert!(
            std::sync::Arc::ptr_eq(&first, &reordered),
            "the same text, held once"
        );
        assert!(!std::sync::Arc::ptr_eq(&first, &renamed));
        assert_eq!((shared.held.len(), shared.trees.len()), (2, 3));
    }

    #[test]
    fn a_schema_is_checked_by_its_parts_as_it_is_whole() {
        use jsonschema::draft202012::meta;
        let pet = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let cases = [
            json!({"type": "object", "$defs": {"Pet": pet.clone()}}),
            // The same member again, beside one the meta-schema refuses.
            json!({"$defs": {"Pet": pet.clone(), "Bad": {"minLength": -1}}}),
            // A root the meta-schema refuses, its member valid.
            json!({"type": 7, "$defs": {"Pet": pet.clone()}}),
            json!({"$defs": {"Pet": pet, "Also": {"type": "integer"}}, "required": ["a"]}),
            json!({"$defs": ["not", "an", "object"]}),
            json!({"type": "string", "minLength": 2}),
            json!(true),
        ];
        let mut shared = SharedDefs::default();
        for schema in cases {
            let mut checked = schema.clone();
            let said = |error: jsonschema::ValidationError<'_>| {
                format!("{error} at {}", error.instance_path())
            };
            assert_eq!(
                shared.meta_check(&mut checked).map_err(said),
                meta::validate(&schema).map_err(said),
                "{schema}"
            );
            assert_eq!(checked, schema, "given back as it came");
            let order = |value: &Value| value.as_object().map(|m| m.keys().cloned().collect());
            assert_eq!(order(&checked), order(&schema) as Option<Vec<String>>);
        }
        assert_eq!(shared.valid.len(), 2, "Pet and Also, each once");
    }
}

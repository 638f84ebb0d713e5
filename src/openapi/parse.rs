//! Text to `serde_json::Value`: JSON when the text is JSON, YAML otherwise, both under budgets
//! so that a hostile file (a YAML alias bomb, a deeply nested array) is an error, not a hang or
//! a stack overflow.
//!
//! Every array and object is allocated at its final size ([`Exact`]): grown one entry at a
//! time, as `Value`'s own reading does, a document's maps hold about as much spare room as
//! entries, and the parsed document is what a large catalog's memory is mostly made of.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use serde_saphyr::{Budget, Options};

use super::{LoadError, LoadOptions};

/// Parses JSON, or YAML when the text is not JSON, under the default budgets.
pub fn parse(text: &str, name: &str) -> Result<Value, LoadError> {
    parse_with(text, name, &LoadOptions::default())
}

/// Parses JSON, or YAML when the text is not JSON, under `options`' size and depth budgets.
///
/// Text that starts like JSON is read by serde_json (fast, and the common case for large
/// documents); if that fails it is tried as YAML, a superset that also accepts JSON with tabs
/// or comments, and when both fail the JSON error is reported since the text looked like JSON.
pub fn parse_with(text: &str, name: &str, options: &LoadOptions) -> Result<Value, LoadError> {
    if text.len() as u64 > options.max_file_bytes {
        return Err(LoadError::TooLarge {
            name: name.to_string(),
            limit: options.max_file_bytes,
        });
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let trimmed = text.trim_start();
    let json_error = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        // serde_json stops at 128 levels by itself; this scan gives a clear error for any
        // limit, before either parser starts (YAML's own budget covers YAML nesting).
        if exceeds_depth(text, options.max_depth) {
            return Err(LoadError::TooDeep {
                name: name.to_string(),
                limit: options.max_depth,
            });
        }
        match from_json(text) {
            Ok(value) => return Ok(value),
            Err(error) => Some(error),
        }
    } else {
        None
    };
    parse_yaml(text, name, options).map_err(|yaml_error| match json_error {
        Some(error) => LoadError::Syntax {
            name: name.to_string(),
            message: error.to_string(),
        },
        None => yaml_error,
    })
}

/// JSON text to a `Value`, as `serde_json::from_str` reads it (the same nesting limit, nothing
/// but whitespace after the value), with every container at its final size.
fn from_json(text: &str) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Exact::read(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// A `Value` read the way `Value`'s own `Deserialize` reads it (a repeated key keeps its
/// first place and its last value; a non-finite float is `null`), except that each object
/// and array is collected first and then allocated once, at its size. Also the seed that
/// reads each nested value the same way.
struct Exact(Value);

impl Exact {
    fn read<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(ExactVisitor)
    }
}

impl<'de> serde::Deserialize<'de> for Exact {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Exact::read(deserializer).map(Exact)
    }
}

struct ExactSeed;

impl<'de> DeserializeSeed<'de> for ExactSeed {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        Exact::read(deserializer)
    }
}

/// An object key, read as `Value` reads one (as a string).
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_str(KeySeed)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = String;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a string key")
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<String, E> {
        Ok(key.to_string())
    }

    fn visit_string<E: serde::de::Error>(self, key: String) -> Result<String, E> {
        Ok(key)
    }
}

struct ExactVisitor;

impl<'de> Visitor<'de> for ExactVisitor {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_i128<E: serde::de::Error>(self, value: i128) -> Result<Value, E> {
        serde::Deserialize::deserialize(serde::de::value::I128Deserializer::new(value))
            .map(Value::Number)
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u128<E: serde::de::Error>(self, value: u128) -> Result<Value, E> {
        serde::Deserialize::deserialize(serde::de::value::U128Deserializer::new(value))
            .map(Value::Number)
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_string()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        Exact::read(deserializer)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(ExactSeed)? {
            items.push(item);
        }
        items.shrink_to_fit();
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            entries.push((key, map.next_value_seed(ExactSeed)?));
        }
        // Collected from an iterator of known length, the map is allocated once.
        Ok(Value::Object(entries.into_iter().collect::<Map<_, _>>()))
    }
}

/// serde-saphyr's deserializer recurses once per nesting level, with frames of up to 20 KiB in
/// a debug build: a document at the depth budget would overflow a 2 MiB thread stack. So YAML
/// is parsed on a thread whose stack is sized for the budget (see [`on_deep_stack`]).
///
/// A panic in the parser (a bug, on some input nobody tried) fails this file, not ferry.
fn parse_yaml(text: &str, name: &str, options: &LoadOptions) -> Result<Value, LoadError> {
    let failed = |message: &str| LoadError::Syntax {
        name: name.to_string(),
        message: message.to_string(),
    };
    let parse = || {
        let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            serde_saphyr::from_str_with_options::<Exact>(text, yaml_options(options))
        }));
        match parsed {
            Ok(parsed) => parsed
                .map(|Exact(value)| value)
                .map_err(|error| yaml_load_error(name, &error, options)),
            Err(_) => Err(failed("the YAML parser failed on this text")),
        }
    };
    on_deep_stack(options.max_depth, parse)
        .unwrap_or_else(|_| Err(failed("no thread could be started for the YAML parser")))
}

/// Runs `f` where the stack holds YAML nested `depth` levels deep: right here when this thread
/// was started for that, otherwise on a new thread with such a stack (the memory is only
/// reserved). Loading many files runs all of them on one such thread, as starting one per
/// file costs a quarter of a millisecond each. `Err` when no thread could be started.
pub(crate) fn on_deep_stack<T: Send>(
    depth: usize,
    f: impl FnOnce() -> T + Send,
) -> Result<T, std::io::Error> {
    if STACK_DEPTH.get() >= depth {
        return Ok(f());
    }
    on_new_deep_thread(depth, f)
}

/// Runs `f` on a new thread whose stack holds YAML nested `depth` levels deep, and waits for it.
pub(crate) fn on_new_deep_thread<T: Send>(
    depth: usize,
    f: impl FnOnce() -> T + Send,
) -> Result<T, std::io::Error> {
    let stack = STACK_PER_LEVEL * depth.min(4096) + 1024 * 1024;
    std::thread::scope(|scope| {
        let thread =
            std::thread::Builder::new()
                .stack_size(stack)
                .spawn_scoped(scope, move || {
                    STACK_DEPTH.set(depth);
                    f()
                })?;
        Ok(thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    })
}

thread_local! {
    /// The YAML depth this thread's stack was sized for by [`on_deep_stack`]; 0 on others.
    static STACK_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Stack reserved per level of YAML nesting: three times what a debug build was measured to use.
const STACK_PER_LEVEL: usize = 64 * 1024;

/// The YAML budget: generous for real documents (the largest in the research set has a few
/// hundred thousand nodes per file), tight on what only attacks need (alias replay).
fn yaml_options(options: &LoadOptions) -> Options {
    let limit = usize::try_from(options.max_file_bytes).unwrap_or(usize::MAX);
    let mut budget = Budget::default();
    budget.max_reader_input_bytes = Some(limit);
    // A node needs at least two bytes of text (`a\n`), an event at most as many as a node's
    // start and end; aliases are what can make more of them than the text could.
    budget.max_nodes = limit / 2 + 1;
    budget.max_events = limit + 1;
    budget.max_total_scalar_bytes = limit;
    budget.max_depth = options.max_depth;
    budget.flow_nesting_limit = options.max_depth;
    budget.max_documents = 1;
    budget.max_recorded_anchor_events = options.max_yaml_alias_events;
    let mut yaml = Options::default();
    yaml.budget = Some(budget);
    // `~: x` is a key spelled `~`, not a null that JSON objects cannot hold as a key; null
    // values stay null.
    yaml.null_as_string = true;
    // `0755` stays the string it was written as, not a number that lost its zeros.
    yaml.leading_zero_numbers_as_strings = true;
    // YAML 1.2 booleans only (OpenAPI 3.1 requires YAML 1.2): `no` and `on` stay strings.
    yaml.strict_booleans = true;
    yaml.alias_limits.max_total_replayed_events = options.max_yaml_alias_events;
    yaml.alias_limits.max_replay_stack_depth = 16;
    yaml
}

fn yaml_load_error(name: &str, error: &serde_saphyr::Error, options: &LoadOptions) -> LoadError {
    let message = first_line(&error.to_string());
    if ["depth", "nesting", "recursion"]
        .iter()
        .any(|word| message.contains(word))
    {
        return LoadError::TooDeep {
            name: name.to_string(),
            limit: options.max_depth,
        };
    }
    if matches!(error, serde_saphyr::Error::Budget { .. })
        || message.contains("budget")
        || message.contains("alias")
    {
        return LoadError::Budget {
            name: name.to_string(),
            message,
        };
    }
    LoadError::Syntax {
        name: name.to_string(),
        message,
    }
}

/// serde-saphyr renders errors with a snippet of the input below the first line; the snippet
/// could quote a secret from a misplaced file, so only the first line is kept.
fn first_line(message: &str) -> String {
    let line = message
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or(message)
        .trim();
    yaml_words(line)
}

/// A YAML parser's message in ferry's words: where it is, then what is wrong and how to mend
/// it, without the parser's own advice (`set DuplicateKeyPolicy in Options`), which is about
/// its API and not the file; `<input>` (the parser's name for the text) becomes `name`.
pub fn yaml_message(message: &str, name: &str) -> String {
    yaml_words(message).replace("<input>", name)
}

fn yaml_words(message: &str) -> String {
    let message = message.strip_prefix("error: ").unwrap_or(message);
    let mut out = String::with_capacity(message.len());
    for (index, line) in message.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        let line = line.replace(", set DuplicateKeyPolicy in Options if acceptable", "");
        match line.find("duplicate mapping key: ") {
            Some(at) => {
                let key = line[at + "duplicate mapping key: ".len()..].trim();
                out.push_str(&line[..at]);
                out.push_str(&format!(
                    "the key {key:?} is written twice in one mapping: keep one"
                ));
            }
            None => out.push_str(&line),
        }
    }
    out
}

/// Whether `[`/`{` nesting, outside JSON-style quoted strings, goes deeper than `limit`. A
/// linear scan over bytes; YAML block nesting is left to the YAML budget.
fn exceeds_depth(text: &str, limit: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for byte in text.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

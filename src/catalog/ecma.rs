//! Patterns as the clients that check output schemas compile them.
//!
//! JSON Schema's `pattern` is an ECMA-262 regular expression, and clients compile it as one
//! in Unicode mode (the TypeScript SDK's Ajv does, with the `u` flag), which refuses what
//! browsers' legacy syntax and ferry's own validator allow: an escaped character that needs
//! no escape (`\#`, `\-` outside a class) and a brace or bracket that stands alone (`^{id}$`,
//! `a]`). One such pattern makes a client refuse the whole tool list, so an output schema's
//! patterns are written in the form both read alike: the needless backslash dropped, the lone
//! brace escaped, which match the same strings. A pattern that means something else in
//! ECMA-262 than where it was written (`\Z`, `\A`, an inline flag `(?i)`, Python's `(?P<…>`)
//! cannot be written so: the output schema is then not declared.

use serde_json::Value;

/// `schema` with each of its patterns (`pattern`, and `patternProperties`' names) written
/// so an ECMA-262 Unicode-mode compiler reads it as the document meant; `Err` names the
/// first pattern that cannot be.
pub(super) fn portable_patterns(schema: &mut Value) -> Result<(), String> {
    let Value::Object(map) = schema else {
        return Ok(());
    };
    if let Some(Value::String(pattern)) = map.get_mut("pattern") {
        *pattern = portable(pattern)?;
    }
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Value::Object(members) = value {
                    for member in members.values_mut() {
                        portable_patterns(member)?;
                    }
                }
            }
            "patternProperties" => {
                if let Value::Object(members) = value {
                    let mut written = serde_json::Map::with_capacity(members.len());
                    for (name, mut member) in std::mem::take(members) {
                        portable_patterns(&mut member)?;
                        written.insert(portable(&name)?, member);
                    }
                    *members = written;
                }
            }
            "items"
            | "additionalProperties"
            | "not"
            | "contains"
            | "propertyNames"
            | "if"
            | "then"
            | "else"
            | "unevaluatedProperties"
            | "unevaluatedItems" => {
                portable_patterns(value)?;
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                if let Value::Array(items) = value {
                    for item in items {
                        portable_patterns(item)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// `pattern` as an ECMA-262 Unicode-mode pattern matching the same strings, or why it
/// cannot be one.
pub(super) fn portable(pattern: &str) -> Result<String, String> {
    let refused = |what: &str| {
        Err(format!(
            "its response schema has the pattern {pattern:?}, whose {what} clients' ECMA-262 validators read otherwise or refuse"
        ))
    };
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len());
    let mut in_class = false;
    let mut index = 0;
    while index < chars.len() {
        let char = chars[index];
        match char {
            '\\' => {
                let Some(&next) = chars.get(index + 1) else {
                    return refused("final backslash");
                };
                index += 2;
                if "^$\\.*+?()[]{}|/".contains(next) || (next == '-' && in_class) {
                    out.push('\\');
                    out.push(next);
                } else if "dDwWsSbBfnrtv0123456789cxukpP".contains(next) {
                    // A class, a control, a code point, a back reference or a property: the
                    // same in every mode where it is well formed.
                    out.push('\\');
                    out.push(next);
                } else if next.is_ascii_punctuation() || next == ' ' {
                    // Needlessly escaped: the character itself.
                    out.push(next);
                } else {
                    return refused(&format!("escape \\{next}"));
                }
                continue;
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            ']' => {
                out.push_str("\\]");
                index += 1;
                continue;
            }
            '(' if !in_class && chars.get(index + 1) == Some(&'?') => {
                let rest: String = chars[index + 2..].iter().take(2).collect();
                let group = rest.starts_with(':')
                    || rest.starts_with('=')
                    || rest.starts_with('!')
                    || rest == "<="
                    || rest == "<!"
                    || (rest.starts_with('<') && rest[1..].chars().all(char::is_alphanumeric));
                if !group {
                    return refused("group (?…");
                }
            }
            '{' if !in_class => {
                let quantifier = chars[index + 1..]
                    .iter()
                    .position(|&c| c == '}')
                    .map(|end| &chars[index + 1..index + 1 + end])
                    .filter(|inside| {
                        let text: String = inside.iter().collect();
                        let mut parts = text.splitn(2, ',');
                        let low = parts.next().unwrap_or("");
                        !low.is_empty()
                            && low.chars().all(|c| c.is_ascii_digit())
                            && parts
                                .next()
                                .is_none_or(|high| high.chars().all(|c| c.is_ascii_digit()))
                    })
                    .filter(|_| index > 0);
                match quantifier {
                    Some(inside) => {
                        out.push('{');
                        out.extend(inside);
                        out.push('}');
                        index += inside.len() + 2;
                    }
                    None => {
                        out.push_str("\\{");
                        index += 1;
                    }
                }
                continue;
            }
            '}' if !in_class => {
                out.push_str("\\}");
                index += 1;
                continue;
            }
            _ => {}
        }
        out.push(char);
        index += 1;
    }
    Ok(out)
}

//! A document's descriptions as a model reads them best: CommonMark allows HTML in them, and
//! some documents write their prose as HTML (`<p>Retrieves a Customer object.</p>`). Such a
//! description is rendered as Markdown by an HTML parser (html5ever, through `htmd`), so
//! the words stay the document's own and only the markup changes; the curation's
//! `descriptions: as_written` keeps them raw. Text with no HTML element in it is not parsed.

use std::borrow::Cow;

use serde_json::Value;

/// The HTML elements whose presence makes a description HTML: the ones prose is written
/// with. A `<` that opens no such element (`Map<String, Value>`, `a < b`) is text, and is
/// kept as text when the rest is rendered.
const ELEMENTS: &[&str] = &[
    "a",
    "abbr",
    "b",
    "blockquote",
    "br",
    "code",
    "dd",
    "del",
    "div",
    "dl",
    "dt",
    "em",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "img",
    "kbd",
    "li",
    "ol",
    "p",
    "pre",
    "s",
    "small",
    "span",
    "strong",
    "sub",
    "sup",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "u",
    "ul",
];

/// `text` as Markdown when it holds HTML elements; as it is otherwise.
pub fn markdown(text: &str) -> Cow<'_, str> {
    if !has_elements(text) {
        return Cow::Borrowed(text);
    }
    let converter = htmd::HtmlToMarkdown::builder()
        .options(htmd::options::Options {
            ul_bullet_spacing: 1,
            ol_number_spacing: 1,
            bullet_list_marker: htmd::options::BulletListMarker::Dash,
            ..htmd::options::Options::default()
        })
        .build();
    match converter.convert(&escape_other_angles(text)) {
        Ok(rendered) if !rendered.trim().is_empty() => Cow::Owned(rendered.trim().to_string()),
        // Nothing left (or a failure, which html5ever does not have): the text as written.
        _ => Cow::Borrowed(text),
    }
}

/// Every `description` in a JSON schema, rendered by [`markdown`]; values that are data
/// (`const`, `default`, `enum`, `example`, `examples`) are not schemas and are left alone.
pub fn schema_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match (key.as_str(), value) {
                    ("const" | "default" | "enum" | "example" | "examples", _) => {}
                    ("description", Value::String(text)) => {
                        if let Cow::Owned(rendered) = markdown(text) {
                            *text = rendered;
                        }
                    }
                    // A map of names to schemas: a property may be named `description`.
                    (
                        "properties" | "patternProperties" | "$defs" | "definitions"
                        | "dependentSchemas",
                        Value::Object(schemas),
                    ) => schemas.values_mut().for_each(schema_descriptions),
                    (_, value) => schema_descriptions(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(schema_descriptions),
        _ => {}
    }
}

/// Whether `text` opens or closes one of [`ELEMENTS`].
fn has_elements(text: &str) -> bool {
    text.match_indices('<')
        .any(|(at, _)| element_at(&text[at + 1..]).is_some())
}

/// The element a tag starting just after a `<` names, when it is one of [`ELEMENTS`]:
/// `p>`, `/p>`, `br/>`, `a href=…>`.
fn element_at(after: &str) -> Option<&'static str> {
    let name_start = after.strip_prefix('/').unwrap_or(after);
    let end = name_start
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(name_start.len());
    let name = &name_start[..end];
    let follows = name_start[end..].chars().next();
    let element = ELEMENTS
        .iter()
        .find(|element| element.eq_ignore_ascii_case(name))?;
    matches!(follows, Some('>' | '/' | ' ' | '\t' | '\n')).then_some(*element)
}

/// `text` with every `<` that opens none of [`ELEMENTS`] written `&lt;`, so the parser
/// keeps it as the text it is instead of dropping an unknown element with its words.
fn escape_other_angles(text: &str) -> Cow<'_, str> {
    if text
        .match_indices('<')
        .all(|(at, _)| element_at(&text[at + 1..]).is_some())
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        if element_at(&rest[at + 1..]).is_some() {
            out.push('<');
        } else {
            out.push_str("&lt;");
        }
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

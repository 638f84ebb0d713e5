//! Reading what a step writes as text: the operation it names (`operationId`, optionally of
//! a named source, or `operationPath`), expressions embedded in a string (`{$inputs.x}`),
//! and a payload's `replacements` made in place, once, when the document is read.

use super::{ExpressionError, Piece, Target, Template, expression};

/// `getPet`, or `$sourceDescriptions.api.getPet`.
pub(super) fn operation_id(written: &str) -> Target {
    match written
        .strip_prefix("$sourceDescriptions.")
        .and_then(|rest| rest.split_once('.'))
    {
        Some((source, id)) => Target::OperationId {
            source: Some(source.to_string()),
            id: id.to_string(),
        },
        None => Target::OperationId {
            source: None,
            id: written.to_string(),
        },
    }
}

/// `{$sourceDescriptions.api.url}#/paths/~1pets/get`.
pub(super) fn operation_path(written: &str) -> Result<Target, String> {
    let parsed = written
        .strip_prefix("{$sourceDescriptions.")
        .and_then(|rest| rest.split_once(".url}#"))
        .filter(|(source, pointer)| expression::is_name(source) && pointer.starts_with("/paths/"));
    match parsed {
        Some((source, pointer)) => Ok(Target::OperationPath {
            source: source.to_string(),
            pointer: pointer.to_string(),
        }),
        None => Err(format!(
            "operationPath {written:?} is not `{{$sourceDescriptions.NAME.url}}#/paths/…/METHOD`"
        )),
    }
}

/// `text` cut into its literal pieces and the expressions written in it as `{$…}`.
pub(super) fn pieces(text: &str) -> Result<Vec<Piece>, ExpressionError> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{$") {
        if start > 0 {
            pieces.push(Piece::Literal(rest[..start].to_string()));
        }
        let inner = &rest[start + 1..];
        let Some(end) = inner.find('}') else {
            return Err(ExpressionError(format!(
                "{text:?}: an embedded expression `{{$…` has no closing `}}`"
            )));
        };
        pieces.push(Piece::Expression(expression::parse(&inner[..end])?));
        rest = &inner[end + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Literal(rest.to_string()));
    }
    Ok(pieces)
}

/// `payload` with the node at the JSON pointer `target` replaced by `value` (or added, as
/// the last token of an object's key), or why it cannot be.
pub(super) fn replace(payload: &mut Template, target: &str, value: Template) -> Result<(), String> {
    if target.is_empty() {
        *payload = value;
        return Ok(());
    }
    let Some(tokens) = target.strip_prefix('/') else {
        return Err(format!(
            "target {target:?} is not a JSON pointer (`/a/0/b`); XPath targets are not supported yet"
        ));
    };
    let tokens: Vec<String> = tokens
        .split('/')
        .map(|token| token.replace("~1", "/").replace("~0", "~"))
        .collect();
    let mut node = payload;
    for (index, token) in tokens.iter().enumerate() {
        let last = index + 1 == tokens.len();
        node = match node {
            Template::Object(entries) => match entries.iter().position(|(key, _)| key == token) {
                Some(found) => &mut entries[found].1,
                None if last => {
                    entries.push((token.clone(), value));
                    return Ok(());
                }
                None => return Err(format!("target {target:?}: the payload has no {token:?}")),
            },
            Template::Array(items) => {
                match token.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                    Some(item) => item,
                    None => {
                        return Err(format!(
                            "target {target:?}: the payload's array has no item {token:?}"
                        ));
                    }
                }
            }
            Template::Expression(_) | Template::Text(_) => {
                return Err(format!(
                    "target {target:?} lies inside a value an expression gives when the step runs: replacing inside it is not supported yet"
                ));
            }
            Template::Literal(_) => {
                return Err(format!(
                    "target {target:?}: the payload has nothing at {token:?} to replace"
                ));
            }
        };
    }
    *node = value;
    Ok(())
}

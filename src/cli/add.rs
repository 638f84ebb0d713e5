//! `ferry init --add ID DOC`: a new API, its operations listed and all off as `ferry init`
//! lists them, added to an existing curation file under `apis:`. A file of one API becomes a
//! file of two: what it says of its API moves into an entry of its own, which keeps its tool
//! names (`prefix: false`), and what it says of the whole server stays at the top. Comments
//! move with the keys they stand above. The result is read back before it is written: a file
//! that would not read as it did is never written.

use std::path::Path;

use anyhow::Context;
use ferry::curation::{self, Curation};
use serde_json::Value;

/// The text of `existing` with the API `id` added under `apis:`, its entry `entry` (the
/// starter's lines for it, unindented, without a `server:` block).
pub fn with_api(existing: &str, id: &str, entry: &str) -> anyhow::Result<String> {
    let value: Value = serde_saphyr::from_str(existing).context("reading the curation file")?;
    let map = value
        .as_object()
        .context("the curation file is not a mapping")?;
    let lines: Vec<&str> = existing.lines().collect();
    let indented = |text: &str, by: &str| {
        text.lines()
            .map(|line| {
                if line.is_empty() {
                    String::new()
                } else {
                    format!("{by}{line}")
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let new_entry = format!("  {id}:\n{}\n", indented(entry, "    "));
    if let Some(apis) = map.get("apis") {
        if apis.as_object().is_some_and(|apis| apis.contains_key(id)) {
            anyhow::bail!("the file already lists an API {id:?}: choose another id");
        }
        let start = lines
            .iter()
            .position(|line| line.split('#').next().unwrap_or("").trim_end() == "apis:")
            .context("`apis:` is written on one line (flow style): add the API by hand")?;
        // The block ends at the next line that starts at the margin: a key, or a comment
        // standing above one.
        let end = (start + 1..lines.len())
            .find(|&index| {
                let line = lines[index];
                !line.is_empty() && !line.starts_with(' ')
            })
            .unwrap_or(lines.len());
        let mut text = lines[..end].join("\n");
        text.push('\n');
        text.push_str(&new_entry);
        if end < lines.len() {
            text.push_str(&lines[end..].join("\n"));
            text.push('\n');
        }
        return Ok(text);
    }
    // A file of one API: its own keys move into an entry of their own.
    let existing_id = existing_api_id(map, id);
    let mut top = String::new();
    let mut moved = String::new();
    for block in blocks(&lines) {
        let text = block.lines.join("\n");
        if block.key.as_deref().is_none_or(curation::is_server_wide) {
            top.push_str(&text);
            top.push('\n');
        } else {
            moved.push_str(&text);
            moved.push('\n');
        }
    }
    let mut text = top;
    text.push_str("apis:\n");
    text.push_str(&format!(
        "  {existing_id}:\n    # Keeps this API's tool names as they were; remove to lead them with `{existing_id}_`.\n    prefix: false\n"
    ));
    text.push_str(&indented(&moved, "    "));
    text.push('\n');
    text.push_str(&new_entry);
    Ok(text)
}

/// One top-level key of a YAML file with what belongs to it: the comment lines right above
/// it and the indented lines below; `key` is `None` for lines before any key.
struct Block<'a> {
    key: Option<String>,
    lines: Vec<&'a str>,
}

fn blocks<'a>(lines: &[&'a str]) -> Vec<Block<'a>> {
    let mut blocks: Vec<Block<'a>> = Vec::new();
    let mut pending: Vec<&'a str> = Vec::new();
    for &line in lines {
        let at_margin = !line.is_empty() && !line.starts_with(' ');
        if at_margin && !line.starts_with('#') {
            let key = line
                .split(':')
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches('"');
            let mut block = Block {
                key: Some(key.to_string()),
                lines: std::mem::take(&mut pending),
            };
            block.lines.push(line);
            blocks.push(block);
        } else if at_margin || line.trim().is_empty() && pending.last().is_some() {
            // A comment at the margin stands above the next key; so does a blank line
            // between such comments.
            pending.push(line);
        } else {
            match blocks.last_mut() {
                Some(block) => block.lines.push(line),
                None => pending.push(line),
            }
        }
    }
    if !pending.is_empty() {
        blocks.push(Block {
            key: None,
            lines: pending,
        });
    }
    blocks
}

/// The id the one API of a file gets when a second is added: its document's file name
/// without extension, as an id may be written; `api` when that is not one or is `taken`.
fn existing_api_id(map: &serde_json::Map<String, Value>, taken: &str) -> String {
    let stem = map
        .get("openapi")
        .and_then(Value::as_str)
        .and_then(|location| Path::new(location.split(['?', '#']).next()?).file_stem())
        .and_then(|stem| stem.to_str())
        .map(|stem| {
            stem.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .take(curation::apis::MAX_ID_CHARS)
                .collect::<String>()
        })
        .filter(|stem| !stem.is_empty());
    match stem {
        Some(stem) if stem != taken => stem,
        _ if taken != "api" => "api".to_string(),
        _ => "first".to_string(),
    }
}

/// Reads `text` as the curation file `path` and fails with what it says when it has errors
/// that `before` (the file as it was) did not.
pub fn check_reads(path: &Path, before: &str, text: &str) -> anyhow::Result<Curation> {
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let name = path.display().to_string();
    let errors = |text: &str| -> anyhow::Result<(Curation, Vec<String>)> {
        let (curation, diagnostics) = curation::parse(text, &name, dir.clone())?;
        let errors = diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.is_error())
            .map(ToString::to_string)
            .collect();
        Ok((curation, errors))
    };
    let (_, known) = errors(before)?;
    let (curation, now) = errors(text)?;
    let new: Vec<&String> = now.iter().filter(|error| !known.contains(error)).collect();
    if !new.is_empty() {
        let listed: Vec<&str> = new.iter().map(|error| error.as_str()).collect();
        anyhow::bail!(
            "adding the API would make {} unreadable, so it was left as it is:\n{}",
            path.display(),
            listed.join("\n")
        );
    }
    Ok(curation)
}

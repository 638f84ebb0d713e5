//! `apis:`: a curation file that lists several APIs, each with its own document, upstream,
//! credential and rules, under an id of its own. What is the whole server's (the `server:`
//! block, inbound `auth:`, the class-wide `rate_limits`, the budgets, how confirmation
//! works) stays at the top; everything a file without `apis:` says of its one API is said
//! in each entry instead.

use serde_json::{Map, Value};

use super::{
    API_KEYS, Curation, SERVER_WIDE_KEYS, auth, bool_at, call, check_keys, confirm, limits,
    read_api_part, read_server_part, workflows,
};
use crate::diagnostic::{Diagnostic, Location};

/// The top-level key that lists the APIs.
pub const KEY: &str = "apis";
/// The keys only an entry of `apis:` has.
const ENTRY_KEYS: &[&str] = &["prefix"];
/// The longest API id: it may lead every tool name, which clients cut at 64 characters.
pub const MAX_ID_CHARS: usize = 32;

/// One API of a file with `apis:`.
#[derive(Debug, Clone, Default)]
pub struct ApiPart {
    /// Its key under `apis:`.
    pub id: String,
    /// Whether its tools' names are led by its id (`prefix:`, on by default): a server of
    /// several APIs names each tool by where it comes from.
    pub prefix: bool,
    /// What the entry says, read as a file without `apis:` would be: its document,
    /// upstream, credential, tools, tags, call settings and workflows.
    pub curation: Curation,
}

/// Reads a file with `apis:`: the whole server's keys at the top, then each API's entry.
pub(super) fn parse(
    map: &Map<String, Value>,
    curation: &mut Curation,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let server_wide = [
        SERVER_WIDE_KEYS,
        auth::SERVER_KEYS,
        limits::KEYS,
        confirm::KEYS,
    ];
    let per_api = [API_KEYS, call::KEYS, auth::API_KEYS];
    let either = |lists: &[&[&str]], key: &str| lists.iter().any(|keys| keys.contains(&key));
    for key in map.keys().filter(|key| either(&per_api, key)) {
        diagnostics.push(Diagnostic::error(
            Location::curation(key.as_str()),
            format!(
                "in a file with `apis:`, `{key}` is said of each API: move it under `apis.<id>`"
            ),
        ));
    }
    // `workflows:` is said at either place: in an entry, its workflows call that API alone;
    // at the top, their Arazzo document's sources are bound to the APIs listed here, and a
    // workflow may call several.
    let mut known = vec![&[KEY][..], workflows::KEYS];
    known.extend(server_wide);
    known.extend(per_api);
    check_keys(map, "", &known, diagnostics);
    read_server_part(map, curation, diagnostics);
    curation.workflows = workflows::parse(map, diagnostics);
    let entries = match map.get(KEY) {
        Some(Value::Object(entries)) if !entries.is_empty() => entries,
        _ => {
            diagnostics.push(Diagnostic::error(
                Location::curation(KEY),
                "`apis` must be a mapping from an API's id to its settings (`openapi:`, \
                 `upstream:`, `tools:`, ...), with at least one API",
            ));
            return;
        }
    };
    for (id, entry) in entries {
        let mut found = Vec::new();
        if let Some(problem) = id_problem(id) {
            found.push(Diagnostic::error(Location::curation(""), problem));
        }
        let mut part = ApiPart {
            id: id.clone(),
            prefix: true,
            curation: Curation {
                dir: curation.dir.clone(),
                ..Curation::default()
            },
        };
        match entry {
            Value::Object(entry) => {
                for key in entry.keys().filter(|key| super::is_server_wide(key)) {
                    found.push(Diagnostic::error(
                        Location::curation(key.as_str()),
                        format!(
                            "`{key}` is the whole server's: say it once, at the top of the file"
                        ),
                    ));
                }
                let mut known = vec![ENTRY_KEYS, workflows::KEYS];
                known.extend(per_api);
                known.extend(server_wide);
                check_keys(entry, "", &known, &mut found);
                part.prefix = bool_at(entry, "prefix", "", &mut found).unwrap_or(true);
                read_api_part(entry, &mut part.curation, &mut found);
                if part.curation.openapi.is_none() {
                    found.push(Diagnostic::error(
                        Location::curation(""),
                        "an API names its OpenAPI document: add `openapi: PATH`",
                    ));
                }
            }
            _ => found.push(Diagnostic::error(
                Location::curation(""),
                "an API's entry is a mapping of its settings (`openapi:`, `upstream:`, \
                 `tools:`, ...)",
            )),
        }
        diagnostics.extend(found.into_iter().map(|found| found.within_api(id)));
        curation.apis.push(part);
    }
}

/// Why `id` cannot name an API, if it cannot: it may lead tool names, so it is what a tool
/// name may hold.
fn id_problem(id: &str) -> Option<String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if id.is_empty() || id.chars().count() > MAX_ID_CHARS || !id.chars().all(allowed) {
        Some(format!(
            "{id:?} cannot name an API: an id is 1 to {MAX_ID_CHARS} letters, digits, `_` or \
             `-`, since it leads the names of its tools"
        ))
    } else {
        None
    }
}

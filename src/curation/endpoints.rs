//! `endpoints:`: several MCP endpoints from one process, each a chosen toolset over the same
//! APIs, with a path, a `server:` block and an inbound `auth:` of its own. Without it, one
//! endpoint (`/mcp`) serves every tool.

use serde_json::{Map, Value};

use super::{
    ServerSection, auth, bool_at, check_keys, error, parse_server, string_at, string_list,
};
use crate::diagnostic::Diagnostic;

/// The top-level key that lists the endpoints.
pub const KEY: &str = "endpoints";
const ENTRY_KEYS: &[&str] = &["path", "server", "auth", "tools"];
const TOOLSET_KEYS: &[&str] = &["apis", "names", "tags", "read_only"];

/// One entry of `endpoints:`.
#[derive(Debug, Clone, Default)]
pub struct EndpointEntry {
    /// Its key under `endpoints:`.
    pub id: String,
    /// Where it is served (`path:`); `/mcp/<id>` when not said.
    pub path: String,
    /// Who it says it is; the file's `server:` where not said.
    pub server: Option<ServerSection>,
    /// Who may call it; the file's `auth:` when not said.
    pub auth: Option<crate::access::AuthConfig>,
    /// Which tools it serves.
    pub toolset: Toolset,
}

/// Which tools an endpoint serves: those that pass every filter given (each a list of which
/// any one may match); every tool when none is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Toolset {
    /// The tools of these APIs (by id under `apis:`).
    pub apis: Option<Vec<String>>,
    /// The tools with these names.
    pub names: Option<Vec<String>>,
    /// The tools calling an operation with one of these tags.
    pub tags: Option<Vec<String>>,
    /// `true`: only the tools whose method alone makes them read-only (every request a GET,
    /// HEAD, QUERY or another safe method); `false`: only the others.
    pub read_only: Option<bool>,
}

/// Reads `endpoints:` from the file's top-level `map`; empty when it is absent.
pub(super) fn parse(
    map: &Map<String, Value>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<EndpointEntry> {
    let Some(value) = map.get(KEY) else {
        return Vec::new();
    };
    let Some(entries) = value.as_object().filter(|entries| !entries.is_empty()) else {
        diagnostics.push(error(
            KEY,
            "`endpoints` must be a mapping from an endpoint's id to its settings (`path:`, \
             `tools:`, `auth:`, `server:`), with at least one endpoint",
        ));
        return Vec::new();
    };
    let mut endpoints = Vec::with_capacity(entries.len());
    for (id, entry) in entries {
        let at = format!("{KEY}.{id}");
        if let Some(problem) = id_problem(id) {
            diagnostics.push(error(&at, problem));
        }
        let Some(entry) = entry.as_object() else {
            diagnostics.push(error(&at, "an endpoint's settings must be a mapping"));
            continue;
        };
        check_keys(entry, &at, &[ENTRY_KEYS], diagnostics);
        let path =
            string_at(entry, "path", &at, diagnostics).unwrap_or_else(|| format!("/mcp/{id}"));
        if let Some(problem) = path_problem(&path) {
            diagnostics.push(error(&format!("{at}.path"), problem));
        }
        endpoints.push(EndpointEntry {
            id: id.clone(),
            path,
            server: entry
                .get("server")
                .map(|server| parse_server(server, &format!("{at}.server"), diagnostics)),
            auth: entry
                .get("auth")
                .and_then(|auth| auth::parse_auth(auth, &format!("{at}.auth"), diagnostics)),
            toolset: entry
                .get("tools")
                .map(|tools| parse_toolset(tools, &format!("{at}.tools"), diagnostics))
                .unwrap_or_default(),
        });
    }
    let mut paths: Vec<&str> = endpoints.iter().map(|e| e.path.as_str()).collect();
    paths.sort_unstable();
    for pair in paths.windows(2).filter(|pair| pair[0] == pair[1]) {
        diagnostics.push(error(
            KEY,
            format!(
                "two endpoints are served at {}: give each a `path:` of its own",
                pair[0]
            ),
        ));
    }
    endpoints
}

fn parse_toolset(value: &Value, at: &str, diagnostics: &mut Vec<Diagnostic>) -> Toolset {
    let Some(map) = value.as_object() else {
        diagnostics.push(error(
            at,
            "an endpoint's `tools` chooses by `apis`, `names`, `tags` and `read_only`",
        ));
        return Toolset::default();
    };
    check_keys(map, at, &[TOOLSET_KEYS], diagnostics);
    let list = |key: &str, diagnostics: &mut Vec<Diagnostic>| {
        map.get(key)
            .and_then(|value| string_list(value, &format!("{at}.{key}"), diagnostics))
    };
    Toolset {
        apis: list("apis", diagnostics),
        names: list("names", diagnostics),
        tags: list("tags", diagnostics),
        read_only: bool_at(map, "read_only", at, diagnostics),
    }
}

/// Why `id` cannot name an endpoint, if it cannot: it is written in logs, metrics and
/// `--endpoint`.
fn id_problem(id: &str) -> Option<String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    (id.is_empty() || id.len() > 64 || !id.chars().all(allowed)).then(|| {
        format!("{id:?} cannot name an endpoint: an id is 1 to 64 letters, digits, `_` or `-`")
    })
}

/// Why `path` cannot be an endpoint's, if it cannot.
fn path_problem(path: &str) -> Option<String> {
    let segment = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~'))
    };
    if !path.starts_with('/') || !path[1..].split('/').all(segment) {
        return Some(format!(
            "{path:?} is not an endpoint's path: write one like `/mcp/read`, segments of letters, \
             digits, `-`, `_`, `.` or `~`"
        ));
    }
    (path.starts_with("/.well-known/") || matches!(path, "/healthz" | "/readyz" | "/metrics"))
        .then(|| format!("{path:?} is a path ferry serves something else at: choose another"))
}

//! The curation file as the user wrote it: which operations become tools, and how.
//!
//! Parsing checks every key, so a typo is an error with its path rather than a tool
//! silently exposed or hidden. What the file means is decided in [`crate::catalog`].
//! `apis` reads `apis:` (several APIs, each with its document, upstream, credential and
//! rules), `endpoints` reads `endpoints:` (several MCP endpoints, each a chosen toolset),
//! `discovery` an API's `discovery:`.
//!
//! Every part of the file reads its values with the readers here (`string_at`, `bool_at`,
//! `non_empty_string`, `env_var`, `env_reference`, `string_list`), so one mistake is worded
//! the same wherever it is made.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::diagnostic::{Diagnostic, Location};

pub mod apis;
pub mod auth;
pub mod call;
pub mod confirm;
pub mod discovery;
pub mod endpoints;
pub mod limits;
pub mod long_running;
mod tools;
pub mod workflows;

pub use apis::ApiPart;
pub use call::{CallOptions, UpstreamAuth};
pub use confirm::{ConfirmOptions, Confirmation, LegacyConfirm};
pub use discovery::Discovery;
pub use limits::RateLimits;
pub use tools::{AnnotationOverrides, EXTENSION_KEYS, ToolEntry, parse_annotations};
pub use workflows::{WorkflowEntry, Workflows};

/// The curation, as written (after flags that stand in for it are applied).
#[derive(Debug, Clone, Default)]
pub struct Curation {
    /// Directory that relative paths in the file are resolved against.
    pub dir: PathBuf,
    /// The OpenAPI document: a path relative to `dir`, or an `http(s)://` URL.
    pub openapi: Option<String>,
    /// The upstream base URL; default: the document's first `servers` entry.
    pub upstream: Option<String>,
    pub server: ServerSection,
    /// Honour `x-mcp` extensions written in the document itself.
    pub document_extensions: bool,
    /// The budget for one tool's definition, in estimated tokens (`max_tool_tokens`); `None`:
    /// [`crate::catalog::trim::DEFAULT_MAX_TOOL_TOKENS`].
    pub max_tool_tokens: Option<u64>,
    /// The budget for the whole tool list, in estimated tokens (`max_catalog_tokens`); `None`:
    /// [`crate::catalog::trim::DEFAULT_MAX_CATALOG_TOKENS`].
    pub max_catalog_tokens: Option<u64>,
    /// How a tool's name is made when its entry gives none (`naming:`).
    pub naming: Naming,
    /// Keep the document's descriptions as written (`descriptions: as_written`), HTML
    /// included, rather than rendering HTML in them as Markdown (`markdown`, the default).
    pub descriptions_as_written: bool,
    /// The most tools to serve before warning (`max_tools`); `None`:
    /// [`crate::catalog::trim::DEFAULT_MAX_TOOLS`].
    pub max_tools: Option<u64>,
    /// Spread a body whose root has `allOf`, `anyOf`, `oneOf` or `not` into the arguments,
    /// lifting those keywords onto the input schema's root (`lift_composition: true`). Off
    /// by default: some major clients refuse a tool list holding such a schema.
    pub lift_composition: bool,
    /// Choose every operation (the `--all` flag).
    pub all: bool,
    /// `tools:` entries, in file order.
    pub tools: Vec<ToolEntry>,
    /// `tags:` entries, in file order.
    pub tags: Vec<TagEntry>,
    /// Parameter names that carry credentials; `None` means [`DEFAULT_CREDENTIAL_PARAMETERS`].
    pub credential_parameters: Option<Vec<String>>,
    /// Defaults for every tool's upstream call.
    pub call: CallOptions,
    /// ferry's own credentials for the upstream.
    pub upstream_auth: Option<UpstreamAuth>,
    /// Who may use ferry (`auth:`); `None`: nobody is asked, loopback only.
    pub auth: Option<crate::access::AuthConfig>,
    /// The header that names the caller upstream (`upstream_identity:`).
    pub upstream_identity: Option<http::HeaderName>,
    /// Each safety class's limit per caller (`rate_limits:`).
    pub rate_limits: RateLimits,
    /// How confirming tools ask (`confirm_ttl`, `confirm_key`, `confirm_legacy`).
    pub confirm: ConfirmOptions,
    /// The Arazzo document and the workflows chosen from it (`workflows:`).
    pub workflows: Option<Workflows>,
    /// Whether the API's chosen operations are served through the discovery tools
    /// (`discovery:`), and which of them stay listed as themselves.
    pub discovery: Option<Discovery>,
    /// The APIs of a file with `apis:`, in the order written, each with what the file says
    /// of it alone; empty for a file without `apis:`, which says it all at the top.
    pub apis: Vec<ApiPart>,
    /// The MCP endpoints served (`endpoints:`); empty: one, `/mcp`, serving every tool.
    pub endpoints: Vec<endpoints::EndpointEntry>,
    /// The API this curation compiles, by its id: set by [`Curation::api_curations`] for
    /// each API of a file with `apis:`; empty otherwise.
    pub api_id: String,
    /// What leads each tool name that the curation does not give (`<id>_`): set by
    /// [`Curation::api_curations`] for each API of a file with more than one, unless it
    /// says `prefix: false`.
    pub name_prefix: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerSection {
    pub name: Option<String>,
    pub title: Option<String>,
    pub instructions: Option<String>,
}

/// One `tags:` entry: `store: {}` chooses every operation tagged `store`; `admin: false`
/// excludes them, even when chosen otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagEntry {
    pub tag: String,
    pub enabled: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum CurationError {
    #[error("cannot read {path}: {error}")]
    Read {
        path: String,
        error: crate::file::FileError,
    },
    #[error("{name} is not valid YAML: {message}")]
    Syntax { name: String, message: String },
}

/// How a tool's name is made when the curation gives none (`naming:`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Naming {
    /// The operationId as written when every client accepts it; otherwise each character no
    /// client accepts becomes `_` (the default, so that names and locks written before
    /// `naming:` existed do not change).
    #[default]
    AsWritten,
    /// Lowercase words joined by `_`: `repos/get-content` and `reposGetContent` both become
    /// `repos_get_content`. What `ferry init` writes into a new curation file.
    SnakeCase,
}

impl Naming {
    /// The word the curation writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Naming::AsWritten => "as_written",
            Naming::SnakeCase => "snake_case",
        }
    }
}

/// The keys that say something of one API (at the top of a file without `apis:`, or in
/// each entry of `apis:`), besides those of [`call::KEYS`], [`auth::API_KEYS`] and
/// [`workflows::KEYS`].
const API_KEYS: &[&str] = &[
    "openapi",
    "upstream",
    "document_extensions",
    "lift_composition",
    "naming",
    "descriptions",
    "credential_parameters",
    "tools",
    "tags",
    discovery::KEY,
];
/// The keys that say something of the whole server, always at the top of the file, besides
/// those of [`auth::SERVER_KEYS`], [`limits::KEYS`] and [`confirm::KEYS`].
const SERVER_WIDE_KEYS: &[&str] = &[
    "server",
    endpoints::KEY,
    "max_tool_tokens",
    "max_catalog_tokens",
    "max_tools",
];
const SERVER_KEYS: &[&str] = &["name", "title", "instructions"];

/// Whether the top-level `key` is said of the whole server, in a file with `apis:` as in one
/// without (the `server:` block, inbound `auth:`, rate limits, budgets, confirmation,
/// `endpoints:`), rather than of one API.
pub fn is_server_wide(key: &str) -> bool {
    [
        SERVER_WIDE_KEYS,
        auth::SERVER_KEYS,
        limits::KEYS,
        confirm::KEYS,
    ]
    .iter()
    .any(|keys| keys.contains(&key))
}
/// Parameter names taken for credentials when the curation names none: never tool
/// arguments, filled by ferry's own upstream credentials.
pub const DEFAULT_CREDENTIAL_PARAMETERS: &[&str] = &[
    "token",
    "access_token",
    "api_key",
    "apikey",
    "api-key",
    "x-api-key",
];

/// Parses a curation file's text. Problems with keys and values are diagnostics, all of
/// them; only text that is not YAML at all is an error.
pub fn parse(
    text: &str,
    name: &str,
    dir: PathBuf,
) -> Result<(Curation, Vec<Diagnostic>), CurationError> {
    let value: Value = if text.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        serde_saphyr::from_str_with_options(text, serde_saphyr::options! { strict_booleans: true })
            .map_err(|error| CurationError::Syntax {
                name: name.to_string(),
                message: crate::openapi::yaml_message(&error.to_string(), name),
            })?
    };
    let mut diagnostics = Vec::new();
    let curation = from_value(&value, dir, &mut diagnostics);
    Ok((curation, diagnostics))
}

/// The largest curation file read: far more than any hand-written file needs.
pub const MAX_CURATION_BYTES: u64 = 16 * 1024 * 1024;

/// Reads a curation file from disk: a regular file of at most [`MAX_CURATION_BYTES`].
pub fn read(path: &Path) -> Result<(Curation, Vec<Diagnostic>), CurationError> {
    let display = path.display().to_string();
    let text =
        crate::file::read_text(path, MAX_CURATION_BYTES).map_err(|error| CurationError::Read {
            path: display.clone(),
            error,
        })?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    parse(&text, &display, dir)
}

impl Curation {
    /// Each API's part of the file, by id: its entry of `apis:`, or for a file without
    /// `apis:` the file itself (with an empty id).
    pub fn parts(&self) -> Vec<(&str, &Curation)> {
        if self.apis.is_empty() {
            return vec![("", self)];
        }
        self.apis
            .iter()
            .map(|api| (api.id.as_str(), &api.curation))
            .collect()
    }

    /// What each API is compiled from, in order: its part of the file with the whole
    /// server's settings beside it, its id and its tools' name prefix. The file itself for a
    /// file without `apis:`.
    pub fn api_curations(&self) -> Vec<Curation> {
        if self.apis.is_empty() {
            return vec![self.clone()];
        }
        let several = self.apis.len() > 1;
        self.apis
            .iter()
            .map(|api| self.for_api(api, several))
            .collect()
    }

    fn for_api(&self, api: &ApiPart, several: bool) -> Curation {
        Curation {
            api_id: api.id.clone(),
            name_prefix: (several && api.prefix).then(|| api.id.clone()),
            dir: self.dir.clone(),
            server: self.server.clone(),
            max_tool_tokens: self.max_tool_tokens,
            max_catalog_tokens: self.max_catalog_tokens,
            max_tools: self.max_tools,
            auth: self.auth.clone(),
            rate_limits: self.rate_limits,
            confirm: self.confirm.clone(),
            all: self.all,
            apis: Vec::new(),
            ..api.curation.clone()
        }
    }

    /// The parameter names taken for credentials (case-insensitive).
    pub fn credential_parameters(&self) -> Vec<String> {
        match &self.credential_parameters {
            Some(names) => names.iter().map(|n| n.to_ascii_lowercase()).collect(),
            None => DEFAULT_CREDENTIAL_PARAMETERS
                .iter()
                .map(|n| n.to_string())
                .collect(),
        }
    }
}

fn from_value(value: &Value, dir: PathBuf, diagnostics: &mut Vec<Diagnostic>) -> Curation {
    let mut curation = Curation {
        dir,
        ..Curation::default()
    };
    let Some(map) = value.as_object() else {
        diagnostics.push(Diagnostic::error(
            Location::curation(""),
            "the curation file must be a mapping of keys",
        ));
        return curation;
    };
    if map.contains_key(apis::KEY) {
        apis::parse(map, &mut curation, diagnostics);
    } else {
        check_keys(
            map,
            "",
            &[
                API_KEYS,
                SERVER_WIDE_KEYS,
                call::KEYS,
                auth::API_KEYS,
                auth::SERVER_KEYS,
                limits::KEYS,
                confirm::KEYS,
                workflows::KEYS,
            ],
            diagnostics,
        );
        read_server_part(map, &mut curation, diagnostics);
        read_api_part(map, &mut curation, diagnostics);
    }
    check_across(&curation, diagnostics);
    curation
}

/// Reads what `map` says of the whole server into `curation`.
fn read_server_part(
    map: &Map<String, Value>,
    curation: &mut Curation,
    diagnostics: &mut Vec<Diagnostic>,
) {
    curation.confirm = confirm::parse_options(map, diagnostics);
    if let Some(value) = map.get("max_tool_tokens") {
        curation.max_tool_tokens = call::positive_integer(value, "max_tool_tokens", diagnostics);
    }
    if let Some(value) = map.get("max_catalog_tokens") {
        curation.max_catalog_tokens =
            call::positive_integer(value, "max_catalog_tokens", diagnostics);
    }
    if let Some(value) = map.get("max_tools") {
        curation.max_tools = call::positive_integer(value, "max_tools", diagnostics);
    }
    if let Some(server) = map.get("server") {
        curation.server = parse_server(server, "server", diagnostics);
    }
    curation.rate_limits = limits::parse_rate_limits(map, diagnostics);
    if let Some(value) = map.get("auth") {
        curation.auth = auth::parse_auth(value, "auth", diagnostics);
    }
    curation.endpoints = endpoints::parse(map, diagnostics);
}

/// Reads what `map` says of one API into `curation`. Every path in a diagnostic is written
/// from `map`'s root.
fn read_api_part(
    map: &Map<String, Value>,
    curation: &mut Curation,
    diagnostics: &mut Vec<Diagnostic>,
) {
    curation.workflows = workflows::parse(map, diagnostics);
    curation.discovery = discovery::parse(map, diagnostics);
    curation.openapi = string_at(map, "openapi", "", diagnostics);
    curation.upstream = string_at(map, "upstream", "", diagnostics);
    curation.document_extensions =
        bool_at(map, "document_extensions", "", diagnostics).unwrap_or(false);
    curation.lift_composition = bool_at(map, "lift_composition", "", diagnostics).unwrap_or(false);
    match string_at(map, "descriptions", "", diagnostics).as_deref() {
        None | Some("markdown") => {}
        Some("as_written") => curation.descriptions_as_written = true,
        Some(other) => diagnostics.push(Diagnostic::error(
            Location::curation("descriptions"),
            format!(
                "`descriptions` is {other:?}; it is `markdown` (the default: HTML in them rendered as Markdown) or `as_written`"
            ),
        )),
    }
    match string_at(map, "naming", "", diagnostics).as_deref() {
        None | Some("as_written") => {}
        Some("snake_case") => curation.naming = Naming::SnakeCase,
        Some(other) => diagnostics.push(Diagnostic::error(
            Location::curation("naming"),
            format!("`naming` is {other:?}; it is `as_written` (the default) or `snake_case`"),
        )),
    }
    if let Some(names) = map.get("credential_parameters") {
        curation.credential_parameters = Some(match names {
            Value::Null => Vec::new(),
            names => string_list(names, "credential_parameters", diagnostics).unwrap_or_default(),
        });
    }
    curation.call = call::parse_call_options(map, "", diagnostics);
    if let Some(auth) = map.get("upstream_auth") {
        curation.upstream_auth = call::parse_upstream_auth(auth, "upstream_auth", diagnostics);
    }
    if let Some(value) = map.get("upstream_identity") {
        curation.upstream_identity =
            auth::parse_upstream_identity(value, "upstream_identity", diagnostics);
    }
    match map.get("tools") {
        None | Some(Value::Null) => {}
        Some(Value::Object(tools)) => {
            for (selector, entry) in tools {
                let path = format!("tools.{selector}");
                curation
                    .tools
                    .push(tools::parse_tool(selector, entry, &path, diagnostics));
            }
        }
        Some(_) => diagnostics.push(Diagnostic::error(
            Location::curation("tools"),
            "`tools` must be a mapping from operationId or `METHOD /path` to settings",
        )),
    }
    match map.get("tags") {
        None | Some(Value::Null) => {}
        Some(Value::Object(tags)) => {
            for (tag, entry) in tags {
                let path = format!("tags.{tag}");
                let enabled = match entry {
                    Value::Null | Value::Bool(true) => true,
                    Value::Bool(false) => false,
                    Value::Object(settings) if settings.is_empty() => true,
                    Value::Object(settings) => {
                        check_keys(settings, &path, &[&["enabled"]], diagnostics);
                        bool_at(settings, "enabled", &path, diagnostics).unwrap_or(true)
                    }
                    _ => {
                        diagnostics.push(Diagnostic::error(
                            Location::curation(&path),
                            "a tag entry is `{}` (choose its operations) or `false` (never expose them)",
                        ));
                        continue;
                    }
                };
                curation.tags.push(TagEntry {
                    tag: tag.clone(),
                    enabled,
                });
            }
        }
        Some(_) => diagnostics.push(Diagnostic::error(
            Location::curation("tags"),
            "`tags` must be a mapping from tag name to `{}` or `false`",
        )),
    }
}

/// What can only be judged once the whole file is read: what an API's part asks of the
/// server-wide part.
fn check_across(curation: &Curation, diagnostics: &mut Vec<Diagnostic>) {
    let oauth = matches!(
        curation.auth.as_ref().map(|auth| &auth.mode),
        Some(crate::access::AuthMode::OAuth(_))
    );
    for (id, part) in curation.parts() {
        let exchanges = matches!(
            part.upstream_auth,
            Some(UpstreamAuth::Obtained(
                crate::access::OutboundCredential::TokenExchange(_)
            ))
        );
        if exchanges && !oauth {
            diagnostics.push(
                Diagnostic::error(
                    Location::curation("upstream_auth.token_exchange"),
                    "token exchange trades the caller's OAuth access token: it needs `auth: {oauth: ...}`",
                )
                .within_api(id),
            );
        }
        if curation.auth.is_none()
            && let Some(entry) = part.tools.iter().find(|entry| entry.scopes.is_some())
        {
            diagnostics.push(
                Diagnostic::warning(
                    Location::curation(format!("tools.{}.scopes", entry.selector)),
                    "scopes have no effect without an `auth:` section: every caller reaches every tool",
                )
                .within_api(id),
            );
        }
    }
}

fn parse_server(value: &Value, path: &str, diagnostics: &mut Vec<Diagnostic>) -> ServerSection {
    let Some(map) = value.as_object() else {
        diagnostics.push(error(path, format!("`{path}` must be a mapping")));
        return ServerSection::default();
    };
    check_keys(map, path, &[SERVER_KEYS], diagnostics);
    ServerSection {
        name: string_at(map, "name", path, diagnostics),
        title: string_at(map, "title", path, diagnostics),
        instructions: string_at(map, "instructions", path, diagnostics),
    }
}

/// Pushes an error for every key of `map` not in one of `known`: with the likely meant key
/// when one is close, or else the keys that are expected there.
pub fn check_keys(
    map: &Map<String, Value>,
    path: &str,
    known: &[&[&str]],
    diagnostics: &mut Vec<Diagnostic>,
) {
    let all = || known.iter().flat_map(|keys| keys.iter().copied());
    for key in map.keys() {
        if all().any(|k| k == key) {
            continue;
        }
        let message = match all().find(|k| similar(k, key)) {
            Some(close) => format!("unknown key `{key}`; did you mean `{close}`?"),
            None => format!(
                "unknown key `{key}` (expected one of: {})",
                all().collect::<Vec<_>>().join(", ")
            ),
        };
        diagnostics.push(Diagnostic::error(
            Location::curation(join(path, key)),
            message,
        ));
    }
}

/// The dotted path of `key` under `path`.
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

pub fn string_at(
    map: &Map<String, Value>,
    key: &str,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<String> {
    typed_at(
        map,
        key,
        path,
        diagnostics,
        |v| v.as_str().map(str::to_string),
        "a string",
    )
}

pub fn bool_at(
    map: &Map<String, Value>,
    key: &str,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<bool> {
    typed_at(map, key, path, diagnostics, Value::as_bool, "true or false")
}

/// The value of `key` read by `read`; `None` when absent or null, and an error naming
/// what was `expected` when it is of another kind.
fn typed_at<T>(
    map: &Map<String, Value>,
    key: &str,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
    read: impl Fn(&Value) -> Option<T>,
    expected: &str,
) -> Option<T> {
    let value = map.get(key).filter(|v| !v.is_null())?;
    let read = read(value);
    if read.is_none() {
        diagnostics.push(error(
            &join(path, key),
            format!("`{key}` must be {expected}"),
        ));
    }
    read
}

/// An error at the curation key path `path`.
pub fn error(path: &str, message: impl Into<String>) -> Diagnostic {
    Diagnostic::error(Location::curation(path), message)
}

/// `value` (found at `path`) as a string that is not empty.
pub fn non_empty_string(
    value: &Value,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<String> {
    let text = value.as_str().filter(|text| !text.is_empty());
    expected(text, path, "expected a non-empty string", diagnostics)
}

/// `value` (found at `path`) as the name of an environment variable: a non-empty string
/// without `=` or NUL.
pub fn env_var(value: &Value, path: &str, diagnostics: &mut Vec<Diagnostic>) -> Option<String> {
    let name = value.as_str().filter(|name| is_env_var(name));
    let message = "expected the name of an environment variable (not empty, no `=`)";
    expected(name, path, message, diagnostics)
}

/// `value` (found at `path`) as `{env: NAME}`, the way a secret is named: the variable's
/// name.
pub fn env_reference(
    value: &Value,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<String> {
    let name = env_reference_name(value);
    expected(name, path, "expected `{env: VARIABLE_NAME}`", diagnostics)
}

/// The variable a `{env: NAME}` value names, when it is one: for a key that words its own
/// error.
pub fn env_reference_name(value: &Value) -> Option<&str> {
    value
        .as_object()
        .filter(|map| map.len() == 1)
        .and_then(|map| map.get("env"))
        .and_then(Value::as_str)
        .filter(|name| is_env_var(name))
}

/// `value` (found at `path`) as a list of strings: `None` when it is not a list; otherwise
/// its strings, with an error at each item that is not one.
pub fn string_list(
    value: &Value,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Vec<String>> {
    let Some(items) = value.as_array() else {
        diagnostics.push(error(path, "expected a list of strings"));
        return None;
    };
    let mut strings = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        match item.as_str() {
            Some(text) => strings.push(text.to_string()),
            None => diagnostics.push(error(&format!("{path}.{index}"), "expected a string")),
        }
    }
    Some(strings)
}

/// `read` as an owned string, or an error at `path` saying what was `expected`.
fn expected(
    read: Option<&str>,
    path: &str,
    expected: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<String> {
    if read.is_none() {
        diagnostics.push(error(path, expected));
    }
    read.map(str::to_string)
}

fn is_env_var(name: &str) -> bool {
    !name.is_empty() && !name.contains(['=', '\0'])
}

/// Whether `a` and `b` differ by case, or by at most two edits: a likely typo.
/// Whether `a` and `b` are the same but for case, or at most two characters apart: what a
/// typo makes of a name.
pub fn similar(a: &str, b: &str) -> bool {
    if a.eq_ignore_ascii_case(b) {
        return true;
    }
    let (a, b): (Vec<char>, Vec<char>) = (
        a.to_lowercase().chars().collect(),
        b.to_lowercase().chars().collect(),
    );
    if a.len().abs_diff(b.len()) > 2 {
        return false;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            current.push(
                (previous[j] + cost)
                    .min(previous[j + 1] + 1)
                    .min(current[j] + 1),
            );
        }
        previous = current;
    }
    previous[b.len()] <= 2
}

#[cfg(test)]
mod tests;

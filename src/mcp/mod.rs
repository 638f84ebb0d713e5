//! The MCP protocol layer: one dispatcher, [`Server::handle`], that both transports call.
//!
//! It speaks two eras on one endpoint. A request is *modern* (2026-07-28, stateless, version
//! and capabilities in every request's `_meta`) when its `MCP-Protocol-Version` header names a
//! version that is not a known legacy one, or when its `_meta` carries
//! `io.modelcontextprotocol/protocolVersion`; anything else is *legacy* (2025-11-25, the
//! `initialize` handshake, answered without minting a session).
//!
//! `server/discover`, `initialize` and both eras' `tools/list` are serialized once per catalog;
//! answering them splices the request's `id` between a fixed prefix and suffix.
//!
//! The layer is ours rather than the official Rust SDK's (`rmcp`): rmcp's Streamable HTTP
//! service was measured at 30 to 50 µs of extra server CPU per call (a spawn and a channel
//! per request, a whole-message re-serialization for header checks), its defaults fight a
//! gateway (415 for parse errors, Origin checks off), and its majors follow spec revisions.
//! ferry serves a handful of methods, so a small module of its own costs little: it reads
//! only the envelope and the `params` keys it needs (`envelope`, borrowed `RawValue`s) and
//! owns its error contract (`failure`). `rmcp` stays a dev-dependency: an independent
//! client that drives ferry at both revisions in the tests, beside validation of every
//! answer against the revision's JSON schema.
//!
//! A request's principal, the facts its audit record is made of and its trace travel the
//! dispatcher together as one `Scope`. A `tools/call` is `call`'s: it finds the
//! `ServedTool` by one lookup in the server's name map, and the ending it comes to is
//! written by `result`, the one writer of tool results, and recorded for `observe` in the
//! same `match`. `tasks/get` and `tasks/cancel` are `task`'s, served where a tool is
//! long-running.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::auth::{Authenticator, Challenge, Principal};
use crate::catalog::{Catalog, Tool};
use crate::observe::{CallFacts, CallRecord, Observer};
use crate::trace;
use crate::upstream::Upstream;
use call::CallTarget;
use envelope::{
    MetaString, Params, Request, cancelled_request_id, check_no_cursor, header_str, parse_request,
};
use failure::Failure;
use listing::{ID_PREFIX, Listing, Prepared, respond_value};
use served::ServedTool;

mod call;
pub mod confirm;
mod discovery;
pub(crate) mod envelope;
mod failure;
pub(crate) mod headers;
pub mod limit;
mod listing;
mod progress;
pub(crate) mod result;
mod served;
mod serving;
mod span;
pub mod task;
mod validate;

pub use crate::auth::CacheScope;
pub use envelope::{error_without_id, request_id, timed_out};
pub use headers::{MirroredHeader, mirrored_headers};
pub use progress::Notify;
pub use result::{HTTP_META, LEGACY_WRAP_KEY, RATE_LIMIT_META, RESULT_META, ToolResult};
pub use serving::Serving;
pub use validate::{output_validator, validator};

/// The revision served to stateless clients.
pub const MODERN_VERSION: &str = "2026-07-28";
/// The revision served to clients that use the `initialize` handshake.
pub const LEGACY_VERSION: &str = "2025-11-25";
/// What `server/discover` lists and what a -32022 error names as supported.
pub const SUPPORTED_VERSIONS: [&str; 2] = [MODERN_VERSION, LEGACY_VERSION];
/// Versions that mark a request as legacy when they appear in `MCP-Protocol-Version`. Any
/// other value there is a modern marker (and, unless served, a -32022).
const LEGACY_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// JSON-RPC and MCP error codes ferry emits.
pub mod code {
    pub const PARSE_ERROR: i32 = -32700;
    pub const INVALID_REQUEST: i32 = -32600;
    pub const METHOD_NOT_FOUND: i32 = -32601;
    pub const INVALID_PARAMS: i32 = -32602;
    pub const INTERNAL_ERROR: i32 = -32603;
    pub const HEADER_MISMATCH: i32 = -32020;
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i32 = -32021;
    pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;
}

/// What the protocol layer is told beyond the catalog.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Freshness hint on `server/discover` and `tools/list` results.
    pub ttl_ms: u64,
    /// `cacheScope` on those results; `private` whatever this says when the authenticator
    /// makes the tool list depend on the caller.
    pub cache_scope: CacheScope,
    /// Who may list and call which tool; [`Authenticator::none`] lets everyone reach all.
    pub authenticator: Authenticator,
    /// Where each `tools/call` and refused request is recorded; `None` records nothing.
    pub observer: Option<Observer>,
    /// The key that seals confirmation state; `None`: one generated for this server, so
    /// only it can verify the state it gave.
    pub confirm_key: Option<confirm::ConfirmKey>,
    /// The confirmation nonces already answered: one set for every server a process
    /// builds, start-up's and each reload's, so that no state is answered twice.
    pub confirm_nonces: Arc<confirm::Nonces>,
    /// Where each request's span goes (`--otlp-endpoint`); `None` exports nothing.
    pub traces: Option<trace::Exporter>,
    /// Every caller's rate-limit budgets: one limiter for every server a process builds, so
    /// that a reload gives nobody a new budget.
    pub limiter: Arc<limit::Limiter>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        // The catalog changes only when ferry restarts or reloads; five minutes bounds how
        // long a client that does not listen for `list_changed` keeps a list after that.
        ServerOptions {
            ttl_ms: 300_000,
            cache_scope: CacheScope::Public,
            authenticator: Authenticator::none(),
            observer: None,
            confirm_key: None,
            confirm_nonces: Arc::default(),
            traces: None,
            limiter: Arc::default(),
        }
    }
}

/// A catalog ready to be served: tools indexed by name, fixed answers serialized.
#[derive(Debug)]
pub struct Server {
    tools: Vec<ServedTool>,
    by_name: HashMap<String, usize>,
    upstream: Option<Upstream>,
    /// `serverInfo`, as the JSON text results carry.
    server_info: Box<RawValue>,
    discover: Prepared,
    initialize: Prepared,
    ping: Prepared,
    tools_list_modern: Prepared,
    tools_list_legacy: Prepared,
    authenticator: Authenticator,
    /// The tool list differs between callers (some tool needs a scope): it is built per
    /// request from `listing` instead of served prepared.
    listing_varies: bool,
    /// Each tool's definition as written, in `tools` order, when `listing_varies` (empty
    /// otherwise).
    listing: Listing,
    /// The definitions 2025-11-25 clients are given, where some differ from `listing`'s (an
    /// output schema wrapped for that revision); kept as `listing` is.
    legacy_listing: Option<Listing>,
    /// Scoped lists already written, modern then legacy, by granted scopes: the list is a
    /// function of the scopes, and most callers hold one of a few sets.
    scoped_lists: [Mutex<HashMap<Vec<String>, Arc<Prepared>>>; 2],
    ttl_ms: u64,
    /// Every caller's rate-limit budgets, shared by the worker threads and kept across a
    /// reload.
    limiter: Arc<limit::Limiter>,
    observer: Option<Observer>,
    /// Asks for, and checks, the user's confirmation of a confirming tool's calls.
    confirmer: confirm::Confirmer,
    traces: Option<trace::Exporter>,
    /// Some tool is long-running: the Tasks extension is served (see [`task`]).
    tasks: bool,
}

/// What a request carries through the dispatcher beside its message: who sent it (`None`
/// where nobody is asked), the facts its audit record is made of, and its trace.
struct Scope<'r, 's> {
    principal: Option<&'r Principal>,
    facts: &'r mut CallFacts,
    trace: &'r span::Traced<'s>,
    /// Where the call's progress goes, when the request asked for it and its transport can
    /// carry it.
    progress: Option<&'r dyn crate::upstream::Progress>,
}

/// One message in, as a transport received it.
#[derive(Debug, Clone, Copy)]
pub struct Incoming<'a> {
    pub body: &'a [u8],
    /// The HTTP request's headers; `None` on stdio, where metadata travels only in `_meta`.
    pub headers: Option<&'a HeaderMap>,
    /// Who sent it, as the transport authenticated them; `None` where nobody is asked
    /// (stdio), which reaches every tool.
    pub principal: Option<&'a Principal>,
    /// Where notifications about this request go before its answer (`notifications/progress`
    /// when it carries a progress token); `None` where the transport cannot carry them.
    pub notify: Option<&'a Notify>,
}

/// What to send back.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    /// The HTTP status; stdio ignores it.
    pub status: StatusCode,
    /// One JSON-RPC message (empty for [`Kind::Accepted`]).
    pub body: Bytes,
    pub kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// `body` is one JSON-RPC response.
    Json,
    /// A notification was received: nothing to answer (HTTP 202, no line on stdio).
    Accepted {
        /// For `notifications/cancelled`: the raw JSON id of the request to cancel.
        cancels: Option<String>,
    },
    /// `subscriptions/listen`: `body` is the acknowledgement, the stream's first message;
    /// the stream stays open until the client leaves or ferry shuts down, when `end` is sent
    /// as the stream's final response. `tools_list_changed`, when the client asked for it, is
    /// the notification to send each time a reload changes the tool list
    /// ([`Serving::tool_list_changes`]).
    Subscription {
        end: Bytes,
        tools_list_changed: Option<Bytes>,
    },
    /// The caller lacks a scope the tool needs: `body` is a JSON-RPC error, and HTTP adds
    /// the challenge's `WWW-Authenticate` so the client can step up.
    Refused(Challenge),
}

/// Every listed tool of `catalog` in the order `tools/list` serves them. The catalog
/// promises sorted tools; sorting again keeps the listing deterministic even for a catalog
/// built by hand.
fn listed(catalog: &Catalog) -> Vec<&Tool> {
    let mut sorted: Vec<&Tool> = catalog.tools.iter().filter(|tool| tool.listed).collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    sorted
}

/// The `tools` array of `tools/list` for `catalog`, the bytes every caller who may reach
/// every tool is served: what `ferry tools` prints.
pub fn tools_array(catalog: &Catalog) -> Vec<u8> {
    Listing::new(listed(catalog).iter().map(|tool| tool.sorted_definition())).into_array()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Era {
    Modern,
    Legacy,
}

impl Server {
    /// Prepares `catalog` for serving. `upstream` is `None` only where calls are not wanted
    /// (tests of the protocol itself); a call then ends in an internal error.
    pub fn new(catalog: &Catalog, upstream: Option<Upstream>, options: ServerOptions) -> Server {
        let mut server_info = Map::new();
        server_info.insert("name".into(), Value::String(catalog.server.name.clone()));
        if let Some(title) = &catalog.server.title {
            server_info.insert("title".into(), Value::String(title.clone()));
        }
        server_info.insert(
            "version".into(),
            Value::String(catalog.server.version.clone()),
        );
        let server_info = Value::Object(server_info);
        // Written once: every modern result carries it.
        let server_info_text =
            serde_json::value::to_raw_value(&server_info).expect("a map of strings is JSON");

        let mut sorted = listed(catalog);
        // Each tool is written out once, one at a time, and served from its text: the
        // catalog's trees are never copied whole.
        let listing = Listing::new(sorted.iter().map(|tool| tool.sorted_definition()));
        let legacy_listing = sorted
            .iter()
            .any(|tool| tool.legacy_differs())
            .then(|| Listing::new(sorted.iter().map(|tool| tool.sorted_definition_for(true))));
        // The operations reached only through discovery are served after the listed tools,
        // so that a listed tool's place is its place in the listing.
        sorted.extend(catalog.tools.iter().filter(|tool| !tool.listed));
        let observer = options.observer.as_ref();
        let limiter = &options.limiter;
        let tools: Vec<ServedTool> = sorted
            .iter()
            .map(|tool| ServedTool::new(tool, &sorted, limiter, upstream.as_ref(), observer))
            .collect();
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(index, served)| (served.tool.name.clone(), index))
            .collect();

        let listing_varies = options.authenticator.cache_scope() == CacheScope::Private;
        let cache_scope = if listing_varies {
            CacheScope::Private
        } else {
            options.cache_scope
        };
        let cache_scope = cache_scope.as_str();
        // Modern clients hear of a changed tool list on a `subscriptions/listen` stream;
        // legacy ones would need the GET stream ferry does not serve.
        let mut discover = json!({
            "resultType": "complete",
            "supportedVersions": SUPPORTED_VERSIONS,
            "capabilities": {"tools": {"listChanged": true}},
        });
        // The Tasks extension is declared where a tool can answer a task.
        let tasks = catalog
            .tools
            .iter()
            .filter_map(crate::catalog::Tool::operation)
            .any(|operation| operation.long_running.is_some());
        if tasks {
            discover["capabilities"]["extensions"] = json!({ task::EXTENSION: {} });
        }
        if let Some(instructions) = &catalog.server.instructions {
            discover["instructions"] = Value::String(instructions.clone());
        }
        discover["ttlMs"] = json!(options.ttl_ms);
        discover["cacheScope"] = json!(cache_scope);
        discover["_meta"] = json!({ META_SERVER_INFO: server_info });

        let mut initialize = json!({
            "protocolVersion": LEGACY_VERSION,
            "capabilities": {"tools": {}},
            "serverInfo": server_info,
        });
        if let Some(instructions) = &catalog.server.instructions {
            initialize["instructions"] = Value::String(instructions.clone());
        }

        let ttl_ms = options.ttl_ms;
        // The listings are kept only where lists are written per caller; otherwise each
        // era's result takes its listing's text, which is not copied.
        let (tools_list_modern, tools_list_legacy, listing, legacy_listing) = if listing_varies {
            let result = |listing: &Listing, era| {
                Listing::result(listing.array(), era, ttl_ms, cache_scope, &server_info_text)
            };
            (
                result(&listing, Era::Modern),
                result(legacy_listing.as_ref().unwrap_or(&listing), Era::Legacy),
                listing,
                legacy_listing,
            )
        } else {
            let legacy = match legacy_listing {
                Some(legacy) => {
                    legacy.into_result(Era::Legacy, ttl_ms, cache_scope, &server_info_text)
                }
                None => Listing::result(
                    listing.array(),
                    Era::Legacy,
                    ttl_ms,
                    cache_scope,
                    &server_info_text,
                ),
            };
            let modern = listing.into_result(Era::Modern, ttl_ms, cache_scope, &server_info_text);
            (modern, legacy, Listing::default(), None)
        };
        let confirmer = confirm::Confirmer::new(
            options
                .confirm_key
                .unwrap_or_else(confirm::ConfirmKey::generate),
            &catalog.confirm,
            options.confirm_nonces,
        );

        Server {
            tools,
            by_name,
            upstream,
            discover: Prepared::result(&discover),
            initialize: Prepared::result(&initialize),
            ping: Prepared::result(&json!({})),
            tools_list_modern,
            tools_list_legacy,
            server_info: server_info_text,
            authenticator: options.authenticator,
            listing_varies,
            listing,
            legacy_listing,
            scoped_lists: Default::default(),
            ttl_ms,
            limiter: options.limiter,
            observer: options.observer,
            confirmer,
            traces: options.traces,
            tasks,
        }
    }

    /// Who may list and call which tool: the transport checks a request's token with it
    /// before reading the body.
    pub fn authenticator(&self) -> &Authenticator {
        &self.authenticator
    }

    /// Answers one JSON-RPC message. Never fails: every problem is a JSON-RPC error or a tool
    /// result with `isError: true`. Dropping the future cancels the upstream call in flight.
    /// Made out of line, so that a caller that boxes it has it written in the box
    /// ([`crate::boxed`]).
    #[inline(never)]
    pub async fn handle(&self, incoming: Incoming<'_>) -> Outgoing {
        let mut request = match parse_request(incoming.body) {
            Ok(request) => request,
            Err(failure) => return failure.into_outgoing(None),
        };
        let Some(id) = request.id else {
            let cancels = (request.method.as_ref() == "notifications/cancelled")
                .then(|| cancelled_request_id(request.params.as_ref()))
                .flatten();
            return Outgoing {
                status: StatusCode::ACCEPTED,
                body: Bytes::new(),
                kind: Kind::Accepted { cancels },
            };
        };
        let started = self.observer.as_ref().map(|_| std::time::Instant::now());
        let in_flight = match &self.observer {
            Some(observer) if request.method == "tools/call" => Some(observer.in_flight()),
            _ => None,
        };
        let mut facts = CallFacts::default();
        let params = Params::parse(request.params.take());
        let trace = span::Traced::new(
            span::context(incoming.headers, params.as_ref().ok()),
            self.traces.as_ref(),
            incoming.headers.is_some(),
        );
        let reporter = progress::Reporter::asked(params.as_ref().ok(), incoming.notify);
        let dispatched = {
            // Pinned where it stands: moved into the progress timer's future, the large
            // future of a request's handling would be copied on every request.
            let dispatching = std::pin::pin!(self.dispatch(
                &request,
                id,
                params,
                incoming.headers,
                Scope {
                    principal: incoming.principal,
                    facts: &mut facts,
                    trace: &trace,
                    progress: reporter.as_ref().map(|reporter| reporter as _),
                },
            ));
            progress::alongside(reporter.as_ref(), dispatching).await
        };
        let code = match &dispatched {
            Ok(Outgoing {
                kind: Kind::Refused(_),
                ..
            }) => Some(code::INVALID_REQUEST),
            Ok(_) => None,
            Err(failure) => Some(failure.0.code),
        };
        trace.finish(&request.method, id, code);
        let outgoing = match dispatched {
            Ok(outgoing) => outgoing,
            Err(failure) => {
                tracing::debug!(
                    method = %request.method,
                    code = failure.0.code,
                    message = %failure.0.message,
                    "request refused"
                );
                facts.error_code = Some(failure.0.code);
                failure.into_outgoing(Some(id))
            }
        };
        drop(in_flight);
        if let Some(started) = started {
            self.observe(started, &request, &incoming, &outgoing, facts);
        }
        outgoing
    }

    /// Records what a `tools/call`, or a request refused for its headers, came to.
    fn observe(
        &self,
        started: std::time::Instant,
        request: &Request<'_>,
        incoming: &Incoming<'_>,
        outgoing: &Outgoing,
        facts: CallFacts,
    ) {
        use crate::observe::{Outcome, Reason};
        let Some(observer) = &self.observer else {
            return;
        };
        let outcome = match (facts.outcome, facts.error_code) {
            (Some(outcome), _) => outcome,
            (None, Some(code::HEADER_MISMATCH)) => Outcome::Refused(Reason::HeaderMismatch),
            (None, Some(_)) if request.method == "tools/call" => Outcome::ProtocolError,
            _ => {
                // A task's look that went on unchecked has no record, but is counted.
                if let Some(failure) = facts.state_failure {
                    observer.state_failed(failure);
                }
                return;
            }
        };
        // A task's look is no call of its tool: its record names the tool, and the tool's
        // call metrics leave it out.
        let look = task::LOOKS
            .iter()
            .copied()
            .find(|&look| look == request.method.as_ref());
        let meter = facts
            .tool
            .and_then(|index| self.tools.get(index))
            .and_then(|served| served.meter.as_ref());
        let record = CallRecord {
            time: std::time::SystemTime::now(),
            request_id: observer.request_id(),
            jsonrpc_id: request.id.map(ToOwned::to_owned),
            method: look,
            tool: meter.map(|meter| Arc::clone(meter.facts())),
            subject: incoming
                .principal
                .map(|principal| principal.subject.clone()),
            client: facts.client,
            outcome,
            upstream_status: facts.upstream_status,
            attempts: facts.stats.attempts,
            retries: facts.stats.attempts.saturating_sub(facts.stats.calls),
            duration: started.elapsed(),
            upstream_duration: facts.stats.upstream,
            bytes_in: incoming.body.len() as u64,
            bytes_out: outgoing.body.len() as u64,
            error_code: facts.error_code,
            confirmation: facts.confirmation,
            state_failure: facts.state_failure,
            operation: facts.operation,
        };
        observer.record(record, meter.filter(|_| look.is_none()));
    }

    async fn dispatch<'s>(
        &'s self,
        request: &Request<'_>,
        id: &RawValue,
        params: Result<Params<'_>, ()>,
        headers: Option<&HeaderMap>,
        scope: Scope<'_, 's>,
    ) -> Result<Outgoing, Failure> {
        let header_version = header_version(headers)?;
        let header_is_modern =
            header_version.is_some_and(|version| !LEGACY_VERSIONS.contains(&version));
        let meta_is_modern = params
            .as_ref()
            .is_ok_and(|params| params.meta_version.is_some());
        let method = request.method.as_ref();

        if !(header_is_modern || meta_is_modern) {
            return self
                .dispatch_legacy(method, id, params, header_version, scope)
                .await;
        }

        // (1) A version header naming a version ferry does not serve.
        if let Some(version) = header_version
            && !SUPPORTED_VERSIONS.contains(&version)
        {
            return Err(Failure::unsupported_version(version));
        }
        // (2) Required `_meta` keys.
        let params = params.map_err(|_| Failure::missing_meta("params is not an object"))?;
        let meta_version = required_meta(&params)?;
        // Arguments are needed by the header check of `tools/call`, so they are read once here.
        let call = (method == "tools/call").then(|| self.call_target(&params));
        // (3) Headers must be present and agree with the body (HTTP only).
        if let Some(headers) = headers {
            self.check_headers(
                headers,
                header_version,
                method,
                meta_version,
                &params,
                call.as_ref(),
            )?;
        }
        // (4) The `_meta` version must be the one served statelessly.
        if meta_version != MODERN_VERSION {
            return Err(Failure::unsupported_version(meta_version));
        }
        // (5) Methods.
        match method {
            "server/discover" => Ok(self.discover.respond(id)),
            "tools/list" => {
                check_no_cursor(&params)?;
                match scope.principal.filter(|_| self.listing_varies) {
                    Some(principal) => Ok(self.tools_list_for(id, principal, Era::Modern)),
                    None => Ok(self.tools_list_modern.respond(id)),
                }
            }
            "tools/call" => {
                let target = call.unwrap_or_else(|| self.call_target(&params))?;
                self.call(id, target, Era::Modern, &params.round, scope)
                    .await
            }
            "subscriptions/listen" => Ok(self.listen(id, params.tools_list_changed)),
            "tasks/get" | "tasks/cancel" | "tasks/update" if self.tasks => {
                self.task_request(id, method, &params, scope).await
            }
            _ => Err(Failure::new(
                StatusCode::NOT_FOUND,
                code::METHOD_NOT_FOUND,
                "method not found",
            )
            .with_data(json!({ "method": method }))),
        }
    }

    async fn dispatch_legacy<'s>(
        &'s self,
        method: &str,
        id: &RawValue,
        params: Result<Params<'_>, ()>,
        header_version: Option<&str>,
        scope: Scope<'_, 's>,
    ) -> Result<Outgoing, Failure> {
        if method == "initialize" {
            // Only 2025-11-25 is served to legacy clients, so it is the answer whatever was
            // asked: a client that cannot speak it disconnects, as the handshake intends.
            return Ok(self.initialize.respond(id));
        }
        if let Some(version) = header_version
            && version != LEGACY_VERSION
        {
            return Err(Failure::unsupported_version(version));
        }
        let legacy = |failure: Failure| failure.legacy();
        match method {
            "ping" => Ok(self.ping.respond(id)),
            "tools/list" => {
                let params = params
                    .map_err(|_| legacy(Failure::invalid_params("params is not an object")))?;
                check_no_cursor(&params).map_err(legacy)?;
                match scope.principal.filter(|_| self.listing_varies) {
                    Some(principal) => Ok(self.tools_list_for(id, principal, Era::Legacy)),
                    None => Ok(self.tools_list_legacy.respond(id)),
                }
            }
            "tools/call" => {
                let params = params
                    .map_err(|_| legacy(Failure::invalid_params("params is not an object")))?;
                let target = self.call_target(&params).map_err(legacy)?;
                self.call(id, target, Era::Legacy, &params.round, scope)
                    .await
                    .map_err(legacy)
            }
            _ => Err(
                Failure::new(StatusCode::OK, code::METHOD_NOT_FOUND, "method not found")
                    .with_data(json!({ "method": method })),
            ),
        }
    }

    /// `header_version` is `headers`' `MCP-Protocol-Version`, already read by the caller.
    fn check_headers(
        &self,
        headers: &HeaderMap,
        header_version: Option<&str>,
        method: &str,
        meta_version: &str,
        params: &Params<'_>,
        call: Option<&Result<CallTarget<'_, '_>, Failure>>,
    ) -> Result<(), Failure> {
        match header_version {
            Some(version) if version == meta_version => {}
            Some(version) => {
                return Err(Failure::header_mismatch(format!(
                    "MCP-Protocol-Version header value '{version}' does not match _meta value '{meta_version}'"
                )));
            }
            None => {
                return Err(Failure::header_mismatch(
                    "missing MCP-Protocol-Version header".into(),
                ));
            }
        }
        match header_str(headers, headers::MCP_METHOD) {
            Ok(Some(value)) if value == method => {}
            Ok(Some(value)) => {
                return Err(Failure::header_mismatch(format!(
                    "Mcp-Method header value '{value}' does not match body value '{method}'"
                )));
            }
            Ok(None) => return Err(Failure::header_mismatch("missing Mcp-Method header".into())),
            Err(problem) => {
                return Err(Failure::header_mismatch(format!(
                    "Mcp-Method header {problem}"
                )));
            }
        }
        // The Tasks extension's requests name their task; the header is not required of them.
        let (name_source, required) = match method {
            "tools/call" | "prompts/get" => (Some(&params.name), true),
            "resources/read" => (Some(&params.uri), true),
            "tasks/get" | "tasks/cancel" | "tasks/update" => (Some(&params.task_id), false),
            _ => (None, false),
        };
        if let Some(source) = name_source {
            let body = match source {
                Some(MetaString::Text(value)) => Some(value.as_ref()),
                _ => None,
            };
            match (headers::decoded(headers, headers::MCP_NAME), body) {
                (Ok(Some(header)), Some(body)) if header == body => {}
                (Ok(Some(header)), Some(body)) => {
                    return Err(Failure::header_mismatch(format!(
                        "Mcp-Name header value '{header}' does not match body value '{body}'"
                    )));
                }
                // The body has no name: the request's own shape is wrong, reported as -32602.
                (Ok(_), None) => {}
                (Ok(None), Some(_)) if required => {
                    return Err(Failure::header_mismatch("missing Mcp-Name header".into()));
                }
                (Ok(None), Some(_)) => {}
                (Err(problem), _) => {
                    return Err(Failure::header_mismatch(format!(
                        "Mcp-Name header {problem}"
                    )));
                }
            }
        }
        if let Some(Ok(target)) = call {
            for mirrored in &target.served.headers {
                headers::check_param(headers, mirrored, target.arguments.as_map())
                    .map_err(Failure::header_mismatch)?;
            }
        }
        // Any other `Mcp-Param-*` given twice: an intermediary may read either line.
        if let Some(name) = headers::repeated_param(headers) {
            return Err(Failure::header_mismatch(format!(
                "Mcp-Param-{name} header {}",
                headers::REPEATED
            )));
        }
        Ok(())
    }
}

/// The `MCP-Protocol-Version` header of an HTTP request, when it has one; a header that
/// cannot be read is a header mismatch.
fn header_version(headers: Option<&HeaderMap>) -> Result<Option<&str>, Failure> {
    match headers.map(|headers| header_str(headers, headers::MCP_PROTOCOL_VERSION)) {
        Some(Err(problem)) => Err(Failure::header_mismatch(format!(
            "MCP-Protocol-Version header {problem}"
        ))),
        Some(Ok(value)) => Ok(value),
        None => Ok(None),
    }
}

/// The `_meta` keys every modern request must carry: the protocol version (returned) and
/// the client's capabilities, an object.
fn required_meta<'p>(params: &'p Params<'_>) -> Result<&'p str, Failure> {
    let meta_version = match &params.meta_version {
        Some(MetaString::Text(version)) => version.as_ref(),
        Some(MetaString::NotText) => {
            return Err(Failure::missing_meta(&format!(
                "_meta \"{META_PROTOCOL_VERSION}\" is not a string"
            )));
        }
        None => {
            return Err(Failure::missing_meta(&format!(
                "missing _meta \"{META_PROTOCOL_VERSION}\""
            )));
        }
    };
    match params.meta_capabilities {
        Some(true) => Ok(meta_version),
        Some(false) => Err(Failure::missing_meta(&format!(
            "_meta \"{META_CLIENT_CAPABILITIES}\" is not an object"
        ))),
        None => Err(Failure::missing_meta(&format!(
            "missing _meta \"{META_CLIENT_CAPABILITIES}\""
        ))),
    }
}

#[cfg(test)]
mod tests;

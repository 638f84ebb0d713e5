//! The compiled catalog: what ferry serves, derived once at start-up from a document and a
//! curation, by the pure function [`compile`].
//!
//! [`compile`] builds every operation, so `ferry check` can say why an unchosen one could not
//! be a tool; [`compile_chosen`], which serving uses, builds only the chosen ones (the same
//! tools and errors; a test holds the two together on every research document), and
//! [`compile_report`] drops each tool's input schema once measured. A file with `apis:` is
//! compiled one API at a time, each part with its own document, and [`join`] makes the parts
//! one catalog; [`add_workflows`] adds composite tools; [`endpoints::resolve`] decides each
//! MCP endpoint's tools. [`Catalog::new`], [`Tool::new`], [`RequestPlan::new`] and
//! [`ParameterPlan::new`] build one by hand. A file per pass: `notes`, `operation`, `choose`
//! (default deny), `build`, `body`, `schema`, `input` (the input schema and `RequestPlan`),
//! `naming`, `annotations`, `call`, `confirm`, `long_running`, `stream`, `shape`, `output`,
//! `trim` (token cost), `workflow`, `step`, `apis`, `endpoints`, `discovery`.
//!
//! A [`Tool`] is one type whatever it runs ([`Runs`]): everything that lists, limits,
//! confirms, digests or reports a tool reads the shared part, and its definition has one
//! writer, [`Tool::sorted_definition`]. Every tool says where it comes from: an operation's
//! tool in `_meta["dev.ferry/operation"]` ([`OPERATION_META_KEY`]: the method, path,
//! operationId and, in a file with `apis:`, API of the operation it calls), a composite one
//! in `_meta["dev.ferry/workflow"]` ([`WORKFLOW_META_KEY`]).

use serde::Serialize;
use serde_json::Value;

use crate::curation::{Curation, UpstreamAuth};
use crate::diagnostic::Diagnostic;
use crate::openapi::Document;

pub mod annotations;
mod apis;
mod arguments;
mod body;
mod build;
pub mod call;
mod choose;
mod compile;
pub mod confirm;
pub mod discovery;
mod ecma;
pub mod endpoints;
mod input;
pub mod long_running;
pub mod naming;
mod notes;
mod operation;
pub mod output;
mod plan;
mod prose;
mod report;
mod schema;
pub mod shape;
pub mod step;
pub mod stream;
#[cfg(test)]
mod tests;
pub mod trim;
pub mod workflow;

pub use crate::parameter::{ParameterLocation, ParameterStyle};
pub use crate::rate::{Period, Rate};
pub use apis::join;
pub use call::{CallSettings, NextPage};
pub use confirm::{Confirm, ConfirmSettings, MessagePart};
pub use discovery::{CallClass, DiscoveryKind, DiscoveryTool, add_discovery};
pub use endpoints::Endpoint;
pub use input::InputSchema;
pub use long_running::LongRunning;
pub use output::OutputSchema;
pub use plan::{
    BodyEncoding, BodyPlacement, BodyPlan, CredentialKind, CredentialSlot, FieldEncoding,
    ParameterPlan, RequestPlan,
};
pub use report::{OperationReport, OperationStatus};
pub use step::StepPlan;
pub use stream::{ItemSchema, Sequence};
pub use workflow::{
    StepOperation, WORKFLOW_META_KEY, WorkflowPlan, WorkflowSource, add_workflows,
    add_workflows_over,
};

/// Every tool ferry serves, and who it says it is.
#[derive(Debug, Clone)]
pub struct Catalog {
    pub server: ServerInfo,
    /// Every API the tools call, each with where its calls go and what ferry presents there;
    /// an [`OperationPlan`] names its API by its id. One for a curation file without
    /// `apis:`.
    pub apis: Vec<Api>,
    /// Who may call ferry (`auth:`); `None`: nobody is asked, which only a loopback listen
    /// address allows.
    pub auth: Option<crate::access::AuthConfig>,
    /// How confirming tools ask: the time-to-live, the key's source, the legacy policy.
    pub confirm: ConfirmSettings,
    /// Every tool served, an operation's or a composite one, sorted by name.
    pub tools: Vec<Tool>,
    /// Every operation of the document and what became of it, in document order; from
    /// [`compile_chosen`], only the chosen operations.
    pub operations: Vec<OperationReport>,
    /// The MCP endpoints served, each a chosen toolset (`endpoints:`); empty: one endpoint
    /// serving every tool.
    pub endpoints: Vec<Endpoint>,
}

impl Catalog {
    /// What the endpoint with id `id` serves, as a catalog of its own: its tools, server and
    /// authorization, every API and setting as the whole catalog has them. `None` when no
    /// endpoint has that id.
    pub fn endpoint(&self, id: &str) -> Option<Catalog> {
        let endpoint = self.endpoints.iter().find(|endpoint| endpoint.id == id)?;
        Some(Catalog {
            server: endpoint.server.clone(),
            apis: self.apis.clone(),
            auth: endpoint.auth.clone(),
            confirm: self.confirm.clone(),
            tools: self
                .tools
                .iter()
                .filter(|tool| endpoint.tools.binary_search(&tool.name).is_ok())
                .cloned()
                .collect(),
            operations: Vec::new(),
            endpoints: Vec::new(),
        })
    }

    /// A catalog of `tools` served as `server` and calling `upstream`, every other setting at
    /// its default: one built by hand, by a program that embeds ferry or by a test
    /// ([`compile`] builds one from a document and a curation).
    pub fn new(server: ServerInfo, upstream: Option<String>, mut tools: Vec<Tool>) -> Catalog {
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        Catalog {
            server,
            apis: vec![Api::new(upstream)],
            auth: None,
            confirm: ConfirmSettings::default(),
            tools,
            operations: Vec::new(),
            endpoints: Vec::new(),
        }
    }

    /// How many tools `tools/list` serves: the operations', the composite ones and the
    /// discovery tools; not the operations reached only through discovery.
    pub fn served_tools(&self) -> usize {
        self.tools.iter().filter(|tool| tool.listed).count()
    }

    /// The estimated tokens of every served tool's definition: the operations' as their
    /// reports measured them, and each composite tool's.
    pub fn served_tokens(&self) -> usize {
        let unlisted = self.unlisted();
        let operations: usize = self
            .operations
            .iter()
            .filter(|report| !unlisted.contains(report.tool.as_str()))
            .filter_map(|report| report.tokens)
            .sum();
        // A composite tool and a discovery tool have no report of their own: they are
        // measured here.
        let workflows: usize = self
            .tools
            .iter()
            .filter(|tool| tool.operation().is_none())
            .map(trim::tool_tokens)
            .sum();
        operations + workflows
    }

    /// The names of the tools `tools/list` does not list: the operations reached only
    /// through discovery.
    pub fn unlisted(&self) -> std::collections::HashSet<&str> {
        self.tools
            .iter()
            .filter(|tool| !tool.listed)
            .map(|tool| tool.name.as_str())
            .collect()
    }
}

/// One API a catalog calls: where its calls go, and what ferry presents there.
#[derive(Debug, Clone)]
pub struct Api {
    /// Its id: the key under the curation's `apis:`, or empty for the one API of a file
    /// without `apis:`.
    pub id: String,
    /// Base URL every call goes to; `None` when neither the curation, a flag nor the
    /// document's `servers` name one (then the catalog can be checked but not served).
    pub upstream: Option<String>,
    /// ferry's own credential for the upstream (`upstream_auth:`), as the curation names it;
    /// the secrets are read from the environment when the client is built.
    pub upstream_auth: Option<UpstreamAuth>,
    /// The header that names the caller upstream (`upstream_identity:`); `None` sends none.
    pub identity_header: Option<http::HeaderName>,
    /// The API's connect timeout in milliseconds (every default applied): what the token
    /// endpoint of an obtained credential is reached with.
    pub connect_timeout_ms: u64,
}

impl Api {
    /// An API without an id calling `upstream`, presenting nothing there.
    pub fn new(upstream: Option<String>) -> Api {
        Api {
            id: String::new(),
            upstream,
            upstream_auth: None,
            identity_header: None,
            connect_timeout_ms: call::defaults::CONNECT_TIMEOUT_MS,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInfo {
    pub name: String,
    pub title: Option<String>,
    pub version: String,
    pub instructions: Option<String>,
}

/// One MCP tool: what is listed and checked of it, the same for every kind, and what a call
/// of it runs ([`Runs`]). Only the runner and the result writer look at what it runs.
#[derive(Debug, Clone)]
pub struct Tool {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    /// A JSON Schema 2020-12 object schema with `additionalProperties: false`.
    pub input_schema: InputSchema,
    /// What its 2xx JSON answers are declared to be, as served ([`output`]); every such
    /// answer is checked against it. `None`: nothing is declared, nothing checked.
    pub output_schema: Option<OutputSchema>,
    pub annotations: Annotations,
    /// How each annotation was decided, for `ferry check`.
    pub basis: AnnotationBasis,
    /// The patterns of `input_schema` (`pattern`, `patternProperties`) that the linear-time
    /// regex engine cannot compile: served as written, left out of argument validation.
    pub unchecked_patterns: Vec<String>,
    /// Scopes a caller needs to see and call this tool, as the curation names them;
    /// `None`: the `auth:` section's default applies (for a composite tool, every scope each
    /// step's operation would need).
    pub scopes: Option<Vec<String>>,
    /// The rate limits a call of this tool must pass, per caller.
    pub limits: ToolLimits,
    /// Whether (and how) the user confirms each call before anything is sent upstream.
    pub confirm: Option<Confirm>,
    /// Whether `tools/list` lists it and a call may name it: false for an operation served
    /// only through the discovery tools (`discovery:`, [`discovery`]).
    pub listed: bool,
    /// What a call runs.
    pub runs: Runs,
}

/// What a tool runs, named as a reviewer reads it: its operation's `METHOD /path` (led by
/// `<api id>: ` for an API of a file with `apis:`), or its workflow's id. Serialized as one member, `{"operation": "GET /pets"}` or
/// `{"workflow": "adopt"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Source {
    Operation(String),
    Workflow(String),
    /// A discovery tool, by what it does (`search`, `describe`, `call`).
    Discovery(String),
}

impl Source {
    /// Which kind of thing it names, as its member is called: `operation` or `workflow`.
    pub fn kind(&self) -> &'static str {
        match self {
            Source::Operation(_) => "operation",
            Source::Workflow(_) => "workflow",
            Source::Discovery(_) => "discovery",
        }
    }

    /// The operation's `METHOD /path`, or the workflow's id.
    pub fn name(&self) -> &str {
        match self {
            Source::Operation(name) | Source::Workflow(name) | Source::Discovery(name) => name,
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Operation(operation) => f.write_str(operation),
            Source::Workflow(id) => write!(f, "workflow {id}"),
            Source::Discovery(kind) => write!(f, "discovery {kind}"),
        }
    }
}

/// What a call of a tool runs: one operation's request, or a workflow of them.
#[derive(Debug, Clone)]
// Held inline: almost every tool calls one operation, and a composite tool's few hundred
// unused bytes cost less than an allocation and an indirection for every other tool.
#[allow(clippy::large_enum_variant)]
pub enum Runs {
    Operation(OperationPlan),
    /// Shared: a workflow's plan is read by every call, and never changed.
    Workflow(std::sync::Arc<WorkflowPlan>),
    /// A discovery tool: it searches, describes or calls the operations behind it.
    Discovery(DiscoveryTool),
}

/// What decides the scopes one request needs: the curation's `scopes:` for its tool, and the
/// scopes the operation's security requirements name.
#[derive(Debug, Clone, Copy)]
pub struct ScopeSource<'t> {
    pub scopes: Option<&'t [String]>,
    pub document_scopes: &'t [Vec<String>],
}

/// One operation's request, as a tool or a workflow's step sends it.
#[derive(Clone)]
pub struct OperationPlan {
    /// The API it is sent to, by its id in [`Catalog::apis`] (empty for the one API of a
    /// file without `apis:`).
    pub api: String,
    /// What logs and spans name the call by: the tool's name, or for a step,
    /// `<composite tool>.<stepId>`.
    pub name: String,
    pub plan: RequestPlan,
    /// How it calls the upstream: the curation's call options for this tool, over its
    /// file-wide ones, every default applied.
    pub call: CallSettings,
    /// The operationId of the operation it calls, when the document gives one.
    pub operation_id: Option<String>,
    /// The operation's tags, as the document writes them.
    pub tags: Vec<String>,
    /// The OAuth 2 / OpenID Connect scopes the operation's security requirements ask for,
    /// one list per alternative (any one of them, each whole), for
    /// `auth.scopes_from_document`; empty when the document asks for none.
    pub document_scopes: Vec<Vec<String>>,
    /// How a call follows the operation past a `202 Accepted`, when it is long-running.
    pub long_running: Option<Box<LongRunning>>,
    /// The schemas a streamed answer's items are checked against, by media type.
    pub items: Vec<ItemSchema>,
}

impl std::fmt::Debug for OperationPlan {
    /// Every field, `long_running` and `items` only when there are some: the lock digests a
    /// workflow by this text, which an operation without them leaves as it always was.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut plan = f.debug_struct("OperationPlan");
        plan.field("api", &self.api)
            .field("name", &self.name)
            .field("plan", &self.plan)
            .field("call", &self.call)
            .field("operation_id", &self.operation_id)
            .field("tags", &self.tags)
            .field("document_scopes", &self.document_scopes);
        if let Some(long_running) = &self.long_running {
            plan.field("long_running", long_running);
        }
        if !self.items.is_empty() {
            plan.field("items", &self.items);
        }
        plan.finish()
    }
}

/// A tool's rate limits, resolved from the curation: each is a budget per caller (subject),
/// and a call must fit every one that is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolLimits {
    /// The tool's safety class, from its method alone.
    pub class: SafetyClass,
    /// The tool's own limit (`rate_limit:` on its entry), a budget for this tool alone.
    pub tool: Option<Rate>,
    /// Its class's limit (`rate_limits.reads` or `.writes`), one budget shared by every tool
    /// of the class.
    pub class_limit: Option<Rate>,
}

/// Which class's budget a call spends: reads are the tools whose method justifies
/// read-only (GET, HEAD, QUERY, registered safe methods: [`annotations::justified`]),
/// whatever the curation claims; writes are the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SafetyClass {
    Reads,
    Writes,
}

impl SafetyClass {
    /// The class of a tool calling `method`, as sent.
    pub fn of(method: &str) -> SafetyClass {
        if annotations::justified(method).contains(&annotations::Guarantee::ReadOnly) {
            SafetyClass::Reads
        } else {
            SafetyClass::Writes
        }
    }

    /// The key that names it under `rate_limits:`.
    pub fn as_str(self) -> &'static str {
        match self {
            SafetyClass::Reads => "reads",
            SafetyClass::Writes => "writes",
        }
    }
}

impl ToolLimits {
    /// No limits, for a tool calling `method`.
    pub fn none(method: &http::Method) -> ToolLimits {
        ToolLimits {
            class: SafetyClass::of(method.as_str()),
            tool: None,
            class_limit: None,
        }
    }

    /// Whether any limit applies.
    pub fn any(&self) -> bool {
        self.tool.is_some() || self.class_limit.is_some()
    }
}

/// The `_meta` key under which a served tool says which operation it calls.
pub const OPERATION_META_KEY: &str = "dev.ferry/operation";
/// The `_meta` key that marks a tool whose calls the user confirms: `true`.
pub const CONFIRM_META_KEY: &str = "dev.ferry/confirm";

/// MCP tool annotations; `None` means the hint is absent (MCP's default applies).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// Whether a tool's annotations are what its method justifies, or a claim of the curation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnnotationBasis {
    /// Derived from the HTTP method alone.
    Method,
    /// Changed by the curation, and still sound for the method.
    CurationSound,
    /// Asserted by the curation (with `because:`), not justified by the method.
    CurationAsserted,
}

/// Compiles a document and a curation into a catalog. Pure: reads nothing, awaits nothing.
/// Every problem found is returned; tools that compiled are kept even when others failed.
pub fn compile(document: &Document, curation: &Curation) -> (Catalog, Vec<Diagnostic>) {
    compile::compile(document, curation, compile::Scope::Every)
}

/// [`compile`] for serving: builds only the chosen operations, so start-up does not pay for
/// tools nobody serves. The tools and the errors are the same as [`compile`]'s; what is left
/// out is the report and the warnings about unchosen operations (`ferry check`'s business).
pub fn compile_chosen(document: &Document, curation: &Curation) -> (Catalog, Vec<Diagnostic>) {
    compile::compile(document, curation, compile::Scope::Chosen)
}

/// [`compile_chosen`] on the calling thread alone: for a reload, which compiles while the
/// server goes on serving, and takes no more than one core from it.
pub fn compile_chosen_alone(
    document: &Document,
    curation: &Curation,
) -> (Catalog, Vec<Diagnostic>) {
    compile::compile_on(document, curation, compile::Scope::Chosen, 1)
}

/// [`compile`] for `ferry check`'s report: the same report, diagnostics and tools, except
/// that each tool's `input_schema` is [`InputSchema::none`], dropped once its size was measured, so
/// the catalog of a large document never holds every schema at once. Not for serving, nor
/// for a lock (whose digests are of the schemas).
pub fn compile_report(document: &Document, curation: &Curation) -> (Catalog, Vec<Diagnostic>) {
    compile::compile(document, curation, compile::Scope::Report)
}

/// The `tools` array exactly as `tools/list` serves it: canonical JSON, keys sorted.
pub fn tools_json(catalog: &Catalog) -> Value {
    Value::Array(catalog.tools.iter().map(Tool::to_json).collect())
}

impl Tool {
    /// A tool that calls `plan`, taking arguments by `input_schema`, with nothing else said:
    /// no title, description, annotations, scopes or call options of its own. For catalogs
    /// built by hand (tests, embedders); the compiler fills every field itself.
    pub fn new(name: impl Into<String>, input_schema: Value, plan: RequestPlan) -> Tool {
        let name = name.into();
        Tool {
            limits: ToolLimits::none(&plan.method),
            title: None,
            description: None,
            input_schema: InputSchema::new(&input_schema),
            output_schema: None,
            annotations: Annotations::default(),
            basis: AnnotationBasis::Method,
            unchecked_patterns: Vec::new(),
            scopes: None,
            confirm: None,
            listed: true,
            runs: Runs::Operation(OperationPlan {
                api: String::new(),
                name: name.clone(),
                plan,
                call: CallSettings::default(),
                operation_id: None,
                tags: Vec::new(),
                document_scopes: Vec::new(),
                long_running: None,
                items: Vec::new(),
            }),
            name,
        }
    }

    /// The operation a call sends, for an operation's tool.
    pub fn operation(&self) -> Option<&OperationPlan> {
        match &self.runs {
            Runs::Operation(operation) => Some(operation),
            Runs::Workflow(_) | Runs::Discovery(_) => None,
        }
    }

    /// What the tool runs, by name.
    pub fn source(&self) -> Source {
        match &self.runs {
            Runs::Operation(operation) => Source::Operation(match operation.api.as_str() {
                "" => format!("{} {}", operation.plan.method, operation.plan.path),
                api => format!("{api}: {} {}", operation.plan.method, operation.plan.path),
            }),
            Runs::Workflow(workflow) => Source::Workflow(workflow.workflow.id.clone()),
            Runs::Discovery(discovery) => Source::Discovery(discovery.kind.as_str().to_string()),
        }
    }

    /// [`Tool::operation`], to change (a catalog built by hand).
    pub fn operation_mut(&mut self) -> Option<&mut OperationPlan> {
        match &mut self.runs {
            Runs::Operation(operation) => Some(operation),
            Runs::Workflow(_) | Runs::Discovery(_) => None,
        }
    }

    /// What decides the scopes a caller needs, one source per request a call sends: the
    /// tool's own for an operation, each step's for a composite tool.
    pub fn scope_sources(&self) -> Vec<ScopeSource<'_>> {
        match &self.runs {
            Runs::Operation(operation) => vec![ScopeSource {
                scopes: self.scopes.as_deref(),
                document_scopes: &operation.document_scopes,
            }],
            Runs::Workflow(workflow) => workflow
                .plans
                .iter()
                .map(|plan| ScopeSource {
                    scopes: plan.scopes.as_deref(),
                    document_scopes: &plan.operation.document_scopes,
                })
                .collect(),
            // It sends nothing itself: each operation it reaches is checked as its own tool.
            Runs::Discovery(_) => vec![ScopeSource {
                scopes: self.scopes.as_deref(),
                document_scopes: &[],
            }],
        }
    }

    /// Each request a call sends, in order: the operation's, or each step's.
    pub fn requests(&self) -> Vec<&OperationPlan> {
        match &self.runs {
            Runs::Operation(operation) => vec![operation],
            Runs::Workflow(workflow) => workflow.plans.iter().map(|plan| &plan.operation).collect(),
            Runs::Discovery(_) => Vec::new(),
        }
    }

    /// The method and path template the audit log, metrics and traces name a call by: the
    /// operation's, or for a composite tool no method and `arazzo:<workflowId>`.
    pub fn origin(&self) -> (&str, std::borrow::Cow<'_, str>) {
        match &self.runs {
            Runs::Operation(operation) => (
                operation.plan.method.as_str(),
                std::borrow::Cow::Borrowed(operation.plan.path.as_str()),
            ),
            Runs::Workflow(workflow) => (
                "",
                std::borrow::Cow::Owned(format!("arazzo:{}", workflow.workflow.id)),
            ),
            Runs::Discovery(discovery) => (
                "",
                std::borrow::Cow::Owned(format!("discovery:{}", discovery.kind.as_str())),
            ),
        }
    }

    /// What a call sends, in words, each part written by `part` (which may escape or cut
    /// it): `DELETE /pets/{petId}`, or `workflow adopt: GET /pets, then POST /adoptions`.
    pub fn sends(&self, part: impl Fn(&str) -> String) -> String {
        match &self.runs {
            Runs::Operation(operation) => {
                format!("{} {}", operation.plan.method, part(&operation.plan.path))
            }
            Runs::Workflow(workflow) => {
                let steps: Vec<String> = workflow
                    .steps
                    .iter()
                    .map(|step| part(&step.label()))
                    .collect();
                format!(
                    "workflow {}: {}",
                    part(&workflow.workflow.id),
                    steps.join(", then ")
                )
            }
            Runs::Discovery(discovery) => format!("discovery {}", discovery.kind.as_str()),
        }
    }

    /// The workflow a call runs, for a composite tool.
    pub fn workflow(&self) -> Option<&WorkflowPlan> {
        match &self.runs {
            Runs::Workflow(workflow) => Some(workflow),
            Runs::Operation(_) | Runs::Discovery(_) => None,
        }
    }

    /// The tool's definition as `tools/list` serves it, every object's keys sorted, written
    /// from the tool's own values: the schema is never copied into a new tree. The one
    /// writer of a definition: `tools/list`, `ferry tools`, the lock's digests and the token
    /// estimate all read it.
    pub fn sorted_definition(&self) -> impl Serialize + '_ {
        self.sorted_definition_for(false)
    }

    /// [`Tool::sorted_definition`] as a 2025-11-25 client is given it (`legacy`): the same
    /// but for an output schema whose root that revision wants wrapped.
    pub fn sorted_definition_for(&self, legacy: bool) -> impl Serialize + '_ {
        struct SortedDefinition<'t>(Vec<(&'static str, Member<'t>)>);
        impl Serialize for SortedDefinition<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut map = serializer.serialize_map(Some(self.0.len()))?;
                for (key, member) in &self.0 {
                    map.serialize_entry(key, member)?;
                }
                map.end()
            }
        }
        SortedDefinition(self.sorted_members_for(legacy))
    }

    /// Whether a 2025-11-25 client is given another definition than a 2026-07-28 one.
    pub fn legacy_differs(&self) -> bool {
        self.output_schema
            .as_ref()
            .is_some_and(|output| output.legacy.is_some())
    }

    /// The members of a tool's definition, in sorted order, each to be serialized as its
    /// value there is.
    pub(crate) fn sorted_members(&self) -> Vec<(&'static str, Member<'_>)> {
        self.sorted_members_for(false)
    }

    fn sorted_members_for(&self, legacy: bool) -> Vec<(&'static str, Member<'_>)> {
        let mut members = vec![("_meta", Member::Owned(self.meta()))];
        if self.annotations != Annotations::default() {
            let annotations = serde_json::to_value(&self.annotations).unwrap_or_default();
            members.push(("annotations", Member::Owned(annotations)));
        }
        if let Some(description) = &self.description {
            members.push(("description", Member::Text(description)));
        }
        members.push(("inputSchema", Member::Schema(&self.input_schema)));
        members.push(("name", Member::Text(&self.name)));
        if let Some(output) = &self.output_schema {
            members.push(("outputSchema", Member::Schema(output.for_legacy(legacy))));
        }
        if let Some(title) = &self.title {
            members.push(("title", Member::Text(title)));
        }
        members
    }

    /// The MCP `Tool` object as a tree, keys sorted: [`Tool::sorted_definition`] read back.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.sorted_definition()).unwrap_or_default()
    }

    /// The tool's `_meta`: where it comes from, so that a client, an audit log and a person
    /// can trace it to its operation (or its workflow and each step's operation), and whether
    /// its calls are confirmed.
    fn meta(&self) -> Value {
        let mut meta = serde_json::Map::new();
        if self.confirm.is_some() {
            meta.insert(CONFIRM_META_KEY.to_string(), Value::Bool(true));
        }
        match &self.runs {
            Runs::Operation(operation) => {
                let mut written = serde_json::Map::new();
                written.insert(
                    "method".to_string(),
                    Value::from(operation.plan.method.as_str()),
                );
                written.insert(
                    "path".to_string(),
                    Value::from(operation.plan.path.as_str()),
                );
                if let Some(id) = &operation.operation_id {
                    written.insert("operationId".to_string(), Value::from(id.as_str()));
                }
                if !operation.api.is_empty() {
                    written.insert("api".to_string(), Value::from(operation.api.as_str()));
                }
                meta.insert(OPERATION_META_KEY.to_string(), Value::Object(written));
            }
            Runs::Workflow(workflow) => {
                meta.insert(WORKFLOW_META_KEY.to_string(), workflow.meta());
            }
            Runs::Discovery(discovery) => {
                meta.insert(discovery::DISCOVERY_META_KEY.to_string(), discovery.meta());
            }
        }
        Value::Object(meta)
    }
}

/// `value` with every object's keys in sorted order, so its text is the same on every run.
pub fn canonical(mut value: Value) -> Value {
    sort_keys(&mut value);
    value
}

/// One member of a tool's definition as it is written: its input schema's text, a string, or
/// a small value made for the occasion, written with every object's keys sorted.
pub(crate) enum Member<'t> {
    Schema(&'t InputSchema),
    Text(&'t str),
    Owned(Value),
}

impl Serialize for Member<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Member::Schema(schema) => schema.serialize(serializer),
            Member::Text(text) => serializer.serialize_str(text),
            Member::Owned(value) => Sorted(value).serialize(serializer),
        }
    }
}

/// A value serialized as [`canonical`] would make it serialize (every object's keys in
/// order), without making the sorted copy.
pub(crate) struct Sorted<'v>(pub &'v Value);

impl Serialize for Sorted<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                let mut out = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    out.serialize_entry(key, &Sorted(value))?;
                }
                out.end()
            }
            Value::Array(items) => {
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    out.serialize_element(&Sorted(item))?;
                }
                out.end()
            }
            other => other.serialize(serializer),
        }
    }
}

/// Sorts every object's keys in place: no copy of the tree is made.
fn sort_keys(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.sort_keys();
            map.values_mut().for_each(sort_keys);
        }
        Value::Array(items) => items.iter_mut().for_each(sort_keys),
        _ => {}
    }
}

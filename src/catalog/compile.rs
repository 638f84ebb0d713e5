//! The compiler's main pass: choose operations, build each into a tool, name it, judge its
//! annotations, and collect every problem on the way.
//!
//! The passes, in order: list the operations, choose, compile each chosen one
//! (`compile_operation`: its report line, build, name, judge its annotations, finish its
//! arguments, check its patterns, its budget), drop name collisions, then the server's
//! identity and upstream. Operations compile alone, so when `PARALLEL_FROM` (512) or more
//! are to be built they are compiled on every core in consecutive runs, joined in order: the
//! output is what one thread gives (a test holds them together). A reload compiles on one thread
//! ([`super::compile_chosen_alone`]), so that serving keeps the other cores.
//!
//! A problem in a chosen operation, a name collision, an unknown curation key or an entry
//! that matches nothing is an error; a problem in an operation nobody chose is a warning. One
//! broken operation never stops the others from compiling. Two tools with one name is an
//! error naming both operations, and neither is served: never a silent rename. What a
//! document says that ferry does not serve yet (an OpenAPI 3.2 `itemSchema`, a
//! `jsonSchemaDialect` it reads as 2020-12) is a warning at its place, never dropped in
//! silence; the kinds programs may act on carry a stable code (`Diagnostic::with_code`),
//! listed in the book's `ferry check --format json` reference.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::curation::Curation;
use crate::diagnostic::{Diagnostic, Location, Severity};
use crate::openapi::{Document, SpecVersion};

use super::arguments;
use super::choose::{Choice, choose};
use super::input::SharedDefs;
use super::operation::{self, Operation};
use super::schema::Translations;
use super::{
    Api, CallSettings, Catalog, ConfirmSettings, InputSchema, OperationPlan, OperationReport,
    OperationStatus, Runs, SafetyClass, ServerInfo, Tool, ToolLimits, annotations, build, confirm,
    long_running, naming, output, prose, trim,
};

/// [`Diagnostic::code`] of a confirming tool that 2025-11-25 clients list but cannot call.
pub const LEGACY_CANNOT_CONFIRM: &str = "confirm-refused-to-legacy-clients";

/// Compiled regexes are bounded so a hostile pattern cannot exhaust memory either.
pub(super) const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// Which operations a compile builds into tools (or judges ineligible).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every operation of the document, so `ferry check` can say why an unchosen one could
    /// not be a tool.
    Every,
    /// Only the chosen ones: what serving needs. Listing and choosing still see every
    /// operation, since selectors, tags and duplicate choices are judged against all of them.
    Chosen,
    /// Every operation, as [`Scope::Every`], each tool kept without its input schema once it
    /// is measured: what `ferry check` reports needs none, and a large document's schemas are
    /// most of what its catalog holds (Microsoft Graph beta's `ferry check` peaks at 2.1 GB
    /// with them, 0.4 GB without).
    Report,
}

pub fn compile(
    document: &Document,
    curation: &Curation,
    scope: Scope,
) -> (Catalog, Vec<Diagnostic>) {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    compile_on(document, curation, scope, threads)
}

/// [`compile`] on at most `threads` threads (see [`compile_operations`]).
pub(super) fn compile_on(
    document: &Document,
    curation: &Curation,
    scope: Scope,
    threads: usize,
) -> (Catalog, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    super::notes::document_notes(document, &mut diagnostics);
    let operations = list_operations(document, &mut diagnostics);
    let choices = choose(document, &operations, curation, &mut diagnostics);
    // An unchosen operation only ever yields warnings and a report line, never a tool nor
    // an error, so skipping it changes neither what is served nor whether it is.
    let work: Vec<(&Operation<'_>, &Choice)> = operations
        .iter()
        .zip(&choices)
        .filter(|(_, choice)| scope != Scope::Chosen || choice.chosen)
        .collect();
    let Compiled {
        tools,
        mut reports,
        report_of_tool,
    } = compile_operations(document, curation, &work, scope, threads, &mut diagnostics);
    let tools = drop_collisions(tools, &mut reports, &report_of_tool, &mut diagnostics);
    if curation.upstream_auth.is_some() && curation.upstream.is_none() {
        diagnostics.push(Diagnostic::error(
            Location::curation("upstream_auth"),
            "credentials are configured, so name the upstream with `upstream:` or --upstream: \
             ferry never sends credentials to a document's `servers` entry by default",
        ));
    }
    diagnostics.sort_by_key(|d| d.severity);
    (
        Catalog {
            server: server_info(document, curation),
            apis: vec![Api {
                id: curation.api_id.clone(),
                upstream: curation
                    .upstream
                    .clone()
                    .or_else(|| document_server(document)),
                upstream_auth: curation.upstream_auth.clone(),
                identity_header: curation.upstream_identity.clone(),
                connect_timeout_ms: CallSettings::resolve(&curation.call).connect_timeout_ms,
            }],
            auth: curation.auth.clone(),
            confirm: ConfirmSettings::resolve(&curation.confirm),
            tools,
            operations: reports,
            endpoints: Vec::new(),
        },
        diagnostics,
    )
}

/// Every operation of the document; an operation that cannot be read is a warning at its
/// pointer in the root file.
fn list_operations<'d>(
    document: &'d Document,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Operation<'d>> {
    let mut problems = Vec::new();
    let operations = operation::list(document, &mut problems);
    let root = document.file(crate::openapi::FileId(0)).name.clone();
    for (pointer, message) in problems {
        diagnostics.push(Diagnostic::warning(
            Location::document(&root, pointer),
            message,
        ));
    }
    operations
}

/// Below this many operations, a compile runs on the calling thread alone.
pub(super) const PARALLEL_FROM: usize = 512;

/// What compiling operations made: a report line for each, and the tools.
struct Compiled {
    reports: Vec<OperationReport>,
    tools: Vec<Tool>,
    /// For each tool, the index of its operation's report.
    report_of_tool: Vec<usize>,
}

impl Compiled {
    /// Room for `operations` reports and tools: a tool is large, and a vector grown by
    /// doubling holds up to as many again unused.
    fn with_capacity(operations: usize) -> Compiled {
        Compiled {
            reports: Vec::with_capacity(operations),
            tools: Vec::with_capacity(operations),
            report_of_tool: Vec::with_capacity(operations),
        }
    }

    fn push(&mut self, report: OperationReport, tool: Option<Tool>) {
        self.reports.push(report);
        if let Some(tool) = tool {
            self.report_of_tool.push(self.reports.len() - 1);
            self.tools.push(tool);
        }
    }

    /// `later`'s operations after these.
    fn append(&mut self, later: Compiled) {
        let offset = self.reports.len();
        self.reports.extend(later.reports);
        self.tools.extend(later.tools);
        self.report_of_tool
            .extend(later.report_of_tool.into_iter().map(|index| index + offset));
    }
}

/// Each of `work`'s operations compiled, in order, with its diagnostics in order after
/// those already in `diagnostics`. A large document's operations are split into as many
/// consecutive runs as there are cores, each compiled on a thread of its own: every
/// operation compiles alone (what runs share is only read, or a cache of pure results), so
/// the output is what one thread would give.
fn compile_operations(
    document: &Document,
    curation: &Curation,
    work: &[(&Operation<'_>, &Choice)],
    scope: Scope,
    threads: usize,
    diagnostics: &mut Vec<Diagnostic>,
) -> Compiled {
    let credential_names = curation.credential_parameters();
    let run = |part: &[(&Operation<'_>, &Choice)],
               into: &mut Compiled,
               diagnostics: &mut Vec<Diagnostic>| {
        let mut shared = Shared {
            document,
            curation,
            credential_names: &credential_names,
            max_tool_tokens: curation
                .max_tool_tokens
                .unwrap_or(trim::DEFAULT_MAX_TOOL_TOKENS),
            pattern_ok: HashMap::new(),
            defs: SharedDefs::default(),
            translations: Translations::default(),
        };
        for (operation, choice) in part {
            let (report, mut tool) = compile_operation(&mut shared, operation, choice, diagnostics);
            if let (Some(tool), Scope::Report) = (&mut tool, scope) {
                tool.input_schema = InputSchema::none();
                tool.output_schema = None;
            }
            into.push(report, tool);
        }
    };
    // The first run's results, this thread's own, are the whole's: the others are appended.
    let mut compiled = Compiled::with_capacity(work.len());
    if threads < 2 || work.len() < PARALLEL_FROM {
        run(work, &mut compiled, diagnostics);
        return compiled;
    }
    let mut parts = work.chunks(work.len().div_ceil(threads));
    let first = parts.next().unwrap_or_default();
    let rest: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .map(|part| {
                scope.spawn(move || {
                    let (mut compiled, mut diagnostics) =
                        (Compiled::with_capacity(part.len()), Vec::new());
                    run(part, &mut compiled, &mut diagnostics);
                    (compiled, diagnostics)
                })
            })
            .collect();
        run(first, &mut compiled, diagnostics);
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    for (part, part_diagnostics) in rest {
        compiled.append(part);
        diagnostics.extend(part_diagnostics);
    }
    compiled
}

/// What every operation of one compile reads, and what it caches.
struct Shared<'a> {
    document: &'a Document,
    curation: &'a Curation,
    /// Parameter names that are credentials, never arguments.
    credential_names: &'a [String],
    max_tool_tokens: u64,
    /// Whether each pattern compiles, by its text: documents repeat their patterns.
    pattern_ok: HashMap<String, bool>,
    /// The `$defs` members of the input schemas built so far, each held once.
    defs: SharedDefs,
    /// The copies of referenced schemas the tools built so far made, for the next to take.
    translations: Translations,
}

/// One operation: its report line, and its tool when it is chosen and can be one. Its
/// diagnostics go to `diagnostics` (errors only when it is chosen).
fn compile_operation(
    shared: &mut Shared<'_>,
    operation: &Operation<'_>,
    choice: &Choice,
    diagnostics: &mut Vec<Diagnostic>,
) -> (OperationReport, Option<Tool>) {
    let (document, curation) = (shared.document, shared.curation);
    let label = operation.label();
    let severity = if choice.chosen {
        Severity::Error
    } else {
        Severity::Warning
    };
    let name = choice.settings.name.clone().unwrap_or_else(|| {
        let derived = naming::derive(
            curation.naming,
            operation.operation_id,
            &operation.method.to_ascii_lowercase(),
            operation.path,
        );
        naming::prefixed(curation.name_prefix.as_deref(), derived)
    });
    let mut report = new_report(operation, choice, &name, &curation.api_id);
    let mut failed = Vec::new();
    if let Some(given) = &choice.settings.name
        && !naming::is_valid(given)
    {
        failed.push(Diagnostic::error(
            choice.location(),
            format!("tool name {given:?} must match ^[A-Za-z0-9_-]{{1,64}}$"),
        ));
    }
    let mut built = build_operation(shared, operation, &label, &mut failed, diagnostics);
    let decision = annotations::decide(operation.method, &choice.settings.annotations);
    if !decision.unjustified.is_empty() && choice.settings.because.is_none() {
        let claims: Vec<&str> = decision.unjustified.iter().map(|g| g.hint()).collect();
        failed.push(Diagnostic::error(
            choice.location(),
            format!(
                "{} is not justified by the method {}: add `because:` with the evidence, or drop the claim",
                claims.join(", "),
                report.method
            ),
        ));
    }
    // What the curation adds to a chosen tool's arguments must fit them, too.
    let options = curation.call.overlay(&choice.settings.call);
    let mut call = CallSettings::resolve(&options);
    let long_running = long_running::plan(
        choice,
        long_running::shown(document, operation),
        &mut call,
        (&name, &label),
        &mut failed,
        diagnostics,
    );
    if let (Some(built), true) = (&mut built, choice.chosen) {
        let location = Location::document(
            &document.file(operation.file).name,
            operation.pointer.clone(),
        );
        failed.extend(arguments::finish(
            &mut built.input_schema,
            &mut shared.defs,
            choice,
            (&options, &call),
            location,
            &mut report,
        ));
    }
    if let Some(built) = &built
        && let Some(why) = super::input::too_deep(&built.input_schema)
    {
        failed.push(Diagnostic::error(
            Location::document(
                &document.file(operation.file).name,
                operation.pointer.clone(),
            ),
            why,
        ));
    }
    let confirm = match &built {
        Some(built) if choice.chosen => {
            match confirm::resolve(choice.settings.confirm.as_ref(), &built.input_schema) {
                Ok(confirm) => confirm,
                Err(problems) => {
                    let origin = choice.origin.clone().unwrap_or_default();
                    failed.extend(problems.into_iter().map(|(key, message)| {
                        Diagnostic::error(
                            Location::curation(format!("{origin}.confirm.{key}")),
                            message,
                        )
                    }));
                    None
                }
            }
        }
        _ => None,
    };
    if confirm.is_some() && !ConfirmSettings::resolve(&curation.confirm).allow_legacy {
        diagnostics.push(
            Diagnostic::warning(
                Location::curation(format!(
                    "{}.confirm",
                    choice.origin.clone().unwrap_or_default()
                )),
                format!(
                    "tool {name:?} asks the user to confirm each call: clients of MCP 2025-11-25, which cannot be asked, see the tool but every call of theirs is refused (`confirm_legacy: refuse`, the default); `confirm_legacy: allow` lets their calls through unconfirmed"
                ),
            )
            .with_operation(label.clone())
            .with_code(LEGACY_CANNOT_CONFIRM),
        );
    }
    if let Some(diagnostic) = failed.first() {
        report.ineligible = Some(diagnostic.message.clone());
        if choice.chosen {
            report.status = OperationStatus::Ineligible;
            report.reason = report.ineligible.clone();
        }
        for mut diagnostic in failed {
            diagnostic.severity = severity;
            diagnostics.push(diagnostic.with_operation(label.clone()));
        }
        return (report, None);
    }
    let (Some(mut built), true) = (built, choice.chosen) else {
        return (report, None);
    };
    let unchecked_patterns =
        unchecked_patterns(shared, operation, &built.patterns, &label, diagnostics);
    if let Some(warning) = arguments::client_refusal(&built.input_schema) {
        diagnostics.push(
            Diagnostic::warning(choice.location(), format!("tool {name:?}: {warning}"))
                .with_operation(label.clone()),
        );
    }
    // The document's prose as Markdown, unless the curation keeps it as written; the
    // curation's own description is the operator's words and is taken as it is.
    let as_written = curation.descriptions_as_written;
    if !as_written {
        prose::schema_descriptions(&mut built.input_schema);
    }
    // A long-running tool's result is its operation's final answer, from a status resource
    // the document does not type as this operation's: nothing is declared that the answers
    // could not keep to. An operation served only through discovery is called through a
    // calling tool, which declares no output schema: none is built for it.
    let listed = super::discovery::listed_as_itself(
        curation.discovery.as_ref(),
        &name,
        operation.operation_id,
        operation.method,
        operation.path,
    );
    // A tool that may answer with a stream serves the items it reads, not the document's
    // JSON answer: it declares none either.
    let pattern_ok = &mut shared.pattern_ok;
    let mut compiles_cached = |pattern: &str| compiles_once(pattern_ok, pattern);
    let streams = super::stream::documented(
        shared.document,
        operation,
        &call.shape,
        &mut compiles_cached,
        &mut shared.defs,
        &label,
        diagnostics,
    );
    let output_schema = match (&long_running, listed, streams.any) {
        (None, true, false) => {
            output_schema(shared, operation, &options, &call, &label, diagnostics)
        }
        _ => None,
    };
    let tool = Tool {
        runs: Runs::Operation(OperationPlan {
            api: curation.api_id.clone(),
            name: name.clone(),
            plan: built.plan,
            call,
            operation_id: operation.operation_id.map(str::to_string),
            tags: operation.tags.iter().map(|tag| tag.to_string()).collect(),
            document_scopes: operation::security_scopes(document, operation),
            long_running,
            items: streams.items,
        }),
        name,
        title: choice.settings.title.clone(),
        description: choice.settings.description.clone().or_else(|| {
            let described = describe(operation)?;
            Some(if as_written {
                described
            } else {
                prose::markdown(&described).into_owned()
            })
        }),
        // The tree goes with `built`: from here on the schema is the text served.
        input_schema: InputSchema::shared(&built.input_schema, &mut shared.defs),
        output_schema,
        annotations: decision.annotations,
        basis: decision.basis,
        unchecked_patterns,
        scopes: choice.settings.scopes.clone(),
        limits: limits(operation.method, choice.settings.rate_limit, curation),
        confirm,
        listed: true,
    };
    let tokens = trim::tool_tokens(&tool);
    report.tokens = Some(tokens);
    report.output_schema_bytes = tool
        .output_schema
        .as_ref()
        .map(|output| output.served.text().len());
    check_budget(shared, choice, &tool, tokens, &label, diagnostics);
    (report, Some(tool))
}

/// The output schema a chosen tool declares ([`output::declare`]), unless `output_schema:
/// false` turns it off; one that cannot be declared is a warning, and the tool is served
/// without it.
fn output_schema(
    shared: &mut Shared<'_>,
    operation: &Operation<'_>,
    options: &crate::curation::CallOptions,
    call: &CallSettings,
    label: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<output::OutputSchema> {
    if options.output_schema == Some(false) {
        return None;
    }
    let pattern_ok = &mut shared.pattern_ok;
    let mut compiles_cached = |pattern: &str| compiles_once(pattern_ok, pattern);
    let declared = output::declare(
        shared.document,
        operation,
        &call.shape,
        &mut compiles_cached,
        &mut shared.defs,
        &mut shared.translations,
    );
    declared
        .map_err(|why| {
            diagnostics.push(output::undeclared(shared.document, operation, &why, label))
        })
        .ok()
        .flatten()
}

/// The report line of `operation`, before it is built: what was chosen, and why.
fn new_report(
    operation: &Operation<'_>,
    choice: &Choice,
    name: &str,
    api: &str,
) -> OperationReport {
    OperationReport {
        method: operation.method.to_string(),
        path: operation.path.to_string(),
        operation_id: operation.operation_id.map(str::to_string),
        summary: operation.summary().map(str::to_string),
        chosen: choice.chosen,
        choice: choice.reason.clone(),
        tool: name.to_string(),
        api: (!api.is_empty()).then(|| api.to_string()),
        status: choice.status,
        reason: (!choice.chosen).then(|| choice.reason.clone()),
        ineligible: None,
        omitted: Vec::new(),
        tokens_saved: None,
        tokens: None,
        output_schema_bytes: None,
    }
}

/// The operation's input schema and request plan; the builder's warnings go to
/// `diagnostics`, and why it could not be built to `failed`.
fn build_operation(
    shared: &mut Shared<'_>,
    operation: &Operation<'_>,
    label: &str,
    failed: &mut Vec<Diagnostic>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<build::Built> {
    match build::build(
        shared.document,
        operation,
        shared.credential_names,
        shared.curation.lift_composition,
        Some(&mut shared.translations),
    ) {
        Ok(built) => {
            for problem in &built.warnings {
                let file = shared.document.file(problem.file).name.clone();
                let mut warning = Diagnostic::warning(
                    Location::document(&file, problem.pointer.clone()),
                    problem.message.clone(),
                )
                .with_operation(label.to_string());
                warning.code = problem.code;
                diagnostics.push(warning);
            }
            Some(built)
        }
        Err(problems) => {
            for problem in problems {
                let file = shared.document.file(problem.file).name.clone();
                let mut error =
                    Diagnostic::error(Location::document(&file, problem.pointer), problem.message);
                error.code = problem.code;
                failed.push(error);
            }
            None
        }
    }
}

/// The tool's `pattern`s that the linear-time regex engine cannot compile: served as
/// written, unchecked, each with a warning.
fn unchecked_patterns(
    shared: &mut Shared<'_>,
    operation: &Operation<'_>,
    patterns: &[String],
    label: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<String> {
    let mut unchecked_patterns = Vec::new();
    for pattern in patterns {
        if !compiles_once(&mut shared.pattern_ok, pattern) {
            diagnostics.push(
                Diagnostic::warning(
                    Location::document(&shared.document.file(operation.file).name, operation.pointer.clone()),
                    format!("pattern {pattern:?} is not supported by the linear-time regex engine; it is served but not checked"),
                )
                .with_operation(label.to_string()),
            );
            unchecked_patterns.push(pattern.clone());
        }
    }
    unchecked_patterns
}

/// Whether the linear-time regex engine compiles `pattern`, within the size bound.
pub(super) fn compiles(pattern: &str) -> bool {
    regex::RegexBuilder::new(pattern)
        .size_limit(PATTERN_SIZE_LIMIT)
        .build()
        .is_ok()
}

/// The `patterns` the linear-time regex engine cannot compile.
pub(super) fn unchecked(patterns: &[String]) -> impl Iterator<Item = &String> {
    patterns.iter().filter(|pattern| !compiles(pattern))
}

/// A warning when `tool`'s definition, at `tokens`, is over the budget.
fn check_budget(
    shared: &Shared<'_>,
    choice: &Choice,
    tool: &Tool,
    tokens: usize,
    label: &str,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let max_tool_tokens = shared.max_tool_tokens;
    if tokens as u64 > max_tool_tokens {
        diagnostics.push(
            Diagnostic::warning(
                choice.location(),
                format!(
                    "tool {:?} costs about {tokens} tokens of context, over the budget of \
                     {max_tool_tokens} (`max_tool_tokens`): leave optional arguments out with \
                     `arguments: {{omit: [/properties/NAME]}}`, or raise the budget",
                    tool.name
                ),
            )
            .with_operation(label.to_string()),
        );
    }
}

/// Two tools with one name: an error naming both, and neither is served. The rest, sorted
/// by name.
fn drop_collisions(
    tools: Vec<Tool>,
    reports: &mut [OperationReport],
    report_of_tool: &[usize],
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Tool> {
    let mut by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (index, tool) in tools.iter().enumerate() {
        by_name.entry(tool.name.clone()).or_default().push(index);
    }
    let mut dropped = Vec::new();
    for (name, indexes) in &by_name {
        if indexes.len() > 1 {
            let message = format!(
                "tool name {name:?} is given to {} operations; rename one with `name:`",
                indexes.len()
            );
            let mut diagnostic = Diagnostic::error(Location::curation("tools"), message.clone());
            for &index in indexes {
                let report = &mut reports[report_of_tool[index]];
                diagnostic =
                    diagnostic.with_operation(format!("{} {}", report.method, report.path));
                report.status = OperationStatus::Collision;
                report.reason = Some(message.clone());
                report.tokens = None;
            }
            diagnostics.push(diagnostic);
            dropped.extend(indexes.iter().copied());
        }
    }
    let mut tools: Vec<Tool> = tools
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !dropped.contains(i))
        .map(|(_, t)| t)
        .collect();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    tools
}

/// Who the server says it is: the curation's words, else the document's `info`.
fn server_info(document: &Document, curation: &Curation) -> ServerInfo {
    let info = document.root().get("info");
    let info_text = |key: &str| {
        info.and_then(|i| i.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    ServerInfo {
        name: curation
            .server
            .name
            .clone()
            .or_else(|| info_text("title"))
            .unwrap_or_else(|| "ferry".to_string()),
        // A server the curation names is titled as it says, or not at all (clients then show
        // its name); the document's title is taken only with its name.
        title: match (&curation.server.title, &curation.server.name) {
            (Some(title), _) => Some(title.clone()),
            (None, Some(_)) => None,
            (None, None) => info_text("title"),
        },
        version: info_text("version").unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_string()),
        instructions: curation.server.instructions.clone(),
    }
}

/// A tool's rate limits: its own, and its class's, the class read from the method alone (a
/// curation's `readOnlyHint` claim never moves a tool into the reads budget).
fn limits(method: &str, own: Option<crate::rate::Rate>, curation: &Curation) -> ToolLimits {
    let class = SafetyClass::of(method);
    ToolLimits {
        class,
        tool: own,
        class_limit: match class {
            SafetyClass::Reads => curation.rate_limits.reads,
            SafetyClass::Writes => curation.rate_limits.writes,
        },
    }
}

/// The operation's own words: its summary, then its description when that says more.
fn describe(operation: &Operation) -> Option<String> {
    match (operation.summary(), operation.description()) {
        (Some(summary), Some(description))
            if description.trim_start().starts_with(summary.trim()) =>
        {
            Some(description.trim().to_string())
        }
        (Some(summary), Some(description)) => {
            Some(format!("{}\n\n{}", summary.trim(), description.trim()))
        }
        (Some(text), None) | (None, Some(text)) => Some(text.trim().to_string()),
        (None, None) => None,
    }
}

/// The document's first server as an absolute URL, with server variables at their defaults.
fn document_server(document: &Document) -> Option<String> {
    let root = document.root();
    if document.version == SpecVersion::Swagger2 {
        let host = root.get("host")?.as_str()?;
        let scheme = root
            .get("schemes")
            .and_then(Value::as_array)
            .and_then(|s| {
                s.iter()
                    .filter_map(Value::as_str)
                    .find(|s| *s == "https")
                    .or(s.first()?.as_str())
            })
            .unwrap_or("https");
        let base = root.get("basePath").and_then(Value::as_str).unwrap_or("");
        return Some(format!("{scheme}://{host}{base}"));
    }
    let server = root.get("servers")?.as_array()?.first()?;
    let mut url = server.get("url")?.as_str()?.to_string();
    if let Some(variables) = server.get("variables").and_then(Value::as_object) {
        for (name, variable) in variables {
            if let Some(default) = variable.get("default").and_then(Value::as_str) {
                url = url.replace(&format!("{{{name}}}"), default);
            }
        }
    }
    (url.starts_with("http://") || url.starts_with("https://")).then_some(url)
}

/// Whether the validator compiles `pattern`, asked once per text: documents repeat their
/// patterns.
fn compiles_once(known: &mut HashMap<String, bool>, pattern: &str) -> bool {
    if let Some(&compiles) = known.get(pattern) {
        return compiles;
    }
    let compiled = compiles(pattern);
    known.insert(pattern.to_string(), compiled);
    compiled
}

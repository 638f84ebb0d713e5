//! `ferry check` and `ferry tools`: what a document and curation compile to, for people and
//! for programs.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

use ferry::catalog::{self, AnnotationBasis, Catalog, OperationReport, OperationStatus};
use ferry::diagnostic::{Diagnostic, Severity};
use serde_json::{Value, json};

use ferry::load::{config_path, load_catalog, load_chosen, load_report, lockfile};

use super::{CheckArgs, Format, Operations, ToolsArgs};

/// The version of `ferry check --format json`'s shape; bumped only on a breaking change.
/// 2: every operation has a `status` (and a `reason` when not served); a diagnostic names
/// its operations in an `operations` list, where 1 had one `operation`.
const CHECK_FORMAT_VERSION: u32 = 2;

pub fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    // Drift is judged on every tool's whole definition, so only a check against a lock keeps
    // the input schemas; the report alone needs none, and they are most of a large catalog.
    let lock = lockfile::path_for(config_path(&args.source).as_deref());
    let against_lock = args.locked || lock.exists();
    let mut loaded = if against_lock {
        load_catalog(&args.source)?
    } else {
        load_report(&args.source)?
    };
    let (drift, drifted) = if against_lock {
        lockfile::check(
            &loaded.catalog,
            &loaded.documents,
            loaded.config.as_deref(),
            args.locked,
        )?
    } else {
        (Vec::new(), false)
    };
    loaded.diagnostics.extend(drift);
    loaded.diagnostics.sort_by_key(|d| d.severity);
    // The report needs only the catalog: the document goes first, since it can be larger.
    loaded.documents = Vec::new();
    let asserted: Vec<&catalog::Tool> = loaded
        .catalog
        .tools
        .iter()
        .filter(|t| t.basis == AnnotationBasis::CurationAsserted)
        .collect();
    let over_budget = loaded.diagnostics.iter().any(|diagnostic| {
        matches!(
            diagnostic.code,
            Some(catalog::trim::OVER_MAX_TOOLS | catalog::trim::OVER_MAX_CATALOG_TOKENS)
        )
    });
    let failed = loaded.has_errors()
        || (args.strict && (!asserted.is_empty() || over_budget))
        || (args.locked && drifted);
    let text = match args.format {
        Format::Json => {
            let mut text =
                serde_json::to_string_pretty(&check_json(&loaded.catalog, &loaded.diagnostics))?;
            text.push('\n');
            text
        }
        Format::Text => check_text(
            &loaded.catalog,
            &loaded.diagnostics,
            &asserted,
            args.strict,
            args.operations,
        ),
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

pub fn tools(args: &ToolsArgs) -> anyhow::Result<ExitCode> {
    // Only errors are shown here, and those are the same either way.
    let mut loaded = load_chosen(&args.source)?;
    // Printing needs only the catalog: the document goes first, since it can be larger.
    loaded.documents = Vec::new();
    for diagnostic in &loaded.diagnostics {
        if diagnostic.is_error() {
            eprintln!("{diagnostic}");
        }
    }
    // The bytes `tools/list` serves, from the same writer; pretty-printed unless asked for as
    // they are, which keeps the members' order and every value.
    let chosen = match &args.endpoint {
        Some(id) => Some(loaded.catalog.endpoint(id).ok_or_else(|| {
            let ids: Vec<&str> = loaded
                .catalog
                .endpoints
                .iter()
                .map(|e| e.id.as_str())
                .collect();
            anyhow::anyhow!(
                "no endpoint {id:?}: the curation lists [{}]",
                ids.join(", ")
            )
        })?),
        None => None,
    };
    let array = ferry::mcp::tools_array(chosen.as_ref().unwrap_or(&loaded.catalog));
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.compact {
        out.write_all(&array)?;
    } else {
        ferry::json::write_pretty(&array, &mut out)?;
    }
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(if loaded.has_errors() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn check_json(catalog: &Catalog, diagnostics: &[Diagnostic]) -> Value {
    let served = tools_by_operation(catalog);
    let callers = super::discovery::callers(catalog);
    let operations: Vec<Value> = catalog
        .operations
        .iter()
        .map(|report| {
            let mut entry = serde_json::to_value(report).unwrap_or_default();
            if let (Some(tool), Value::Object(map)) = (find_tool(&served, report), &mut entry) {
                map.insert(
                    "annotations".to_string(),
                    serde_json::to_value(&tool.annotations).unwrap_or_default(),
                );
                map.insert(
                    "basis".to_string(),
                    serde_json::to_value(tool.basis).unwrap_or_default(),
                );
                map.insert("tokens".to_string(), json!(report.tokens));
                if let Some((caller, listed)) = callers.get(tool.name.as_str()) {
                    map.insert(
                        "discovery".to_string(),
                        json!({"callWith": caller, "listed": listed}),
                    );
                }
                let limits = &tool.limits;
                map.insert(
                    "rateLimits".to_string(),
                    json!({
                        "class": limits.class.as_str(),
                        "tool": limits.tool.map(|rate| rate.to_string()),
                        "classLimit": limits.class_limit.map(|rate| rate.to_string()),
                    }),
                );
                if let Some(confirm) = &tool.confirm {
                    map.insert(
                        "confirm".to_string(),
                        json!({ "typeToConfirm": confirm.type_to_confirm }),
                    );
                }
                if let Some(long_running) = tool.operation().and_then(|op| op.long_running.as_ref())
                {
                    map.insert("longRunning".to_string(), long_running_json(long_running));
                }
            }
            entry
        })
        .collect();
    let workflows: Vec<Value> = composite(catalog)
        .map(|(tool, plan)| {
            let steps: Vec<Value> = plan
                .steps
                .iter()
                .map(|step| json!({"step": step.step, "operation": step.label()}))
                .collect();
            json!({
                "tool": tool.name,
                "workflowId": plan.workflow.id,
                "steps": steps,
                "annotations": tool.annotations,
                "basis": tool.basis,
                "served": true,
                "max_steps": plan.max_steps,
                "timeout_ms": plan.timeout.as_millis() as u64,
            })
        })
        .collect();
    let count = |severity| {
        diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    };
    let mut report = json!({
        "version": CHECK_FORMAT_VERSION,
        "summary": {
            "operations": catalog.operations.len(),
            "tools": catalog.served_tools(),
            "errors": count(Severity::Error),
            "warnings": count(Severity::Warning),
            "asserted": catalog.tools.iter().filter(|t| t.basis == AnnotationBasis::CurationAsserted).count(),
            "tokens": catalog.served_tokens(),
            "confirming": catalog.tools.iter().filter(|t| t.confirm.is_some()).count(),
            "workflows": composite(catalog).count(),
        },
        "diagnostics": diagnostics,
        "operations": operations,
        "workflows": workflows,
        "discovery": super::discovery::json(catalog),
    });
    if !catalog.endpoints.is_empty() {
        let endpoints: Vec<Value> = catalog
            .endpoints
            .iter()
            .map(|endpoint| {
                json!({
                    "id": endpoint.id,
                    "path": endpoint.path,
                    "server": endpoint.server.name,
                    "auth": auth_kind(endpoint.auth.as_ref()),
                    "tools": endpoint.tools,
                })
            })
            .collect();
        report["endpoints"] = Value::Array(endpoints);
    }
    report
}

/// Who an endpoint asks, in a word: `oauth`, `api_keys` or `none`.
/// What `check --format json` says of a long-running tool: where its status is and whether
/// the document alone made it so.
fn long_running_json(plan: &catalog::LongRunning) -> Value {
    use catalog::long_running::{ResultAt, UrlAt};
    let at = |place: &UrlAt| match place {
        UrlAt::Header(name) => json!({"header": name.as_str()}),
        UrlAt::Body(pointer) => json!({"body": pointer}),
    };
    json!({
        "inferred": plan.inferred,
        "status": at(&plan.status),
        "state": plan.state.as_ref().map(|state| &state.pointer),
        "result": match &plan.result {
            ResultAt::Status => json!("status"),
            ResultAt::Field(pointer) => json!({"field": pointer}),
            ResultAt::Fetch(place) => json!({"fetch": at(place)}),
        },
        "cancel": plan.cancel.as_ref().map(http::Method::as_str),
    })
}

fn auth_kind(auth: Option<&ferry::access::AuthConfig>) -> &'static str {
    match auth.map(|auth| &auth.mode) {
        Some(ferry::access::AuthMode::OAuth(_)) => "oauth",
        Some(ferry::access::AuthMode::ApiKeys(_)) => "api_keys",
        None => "none",
    }
}

fn check_text(
    catalog: &Catalog,
    diagnostics: &[Diagnostic],
    asserted: &[&catalog::Tool],
    strict: bool,
    shown: Option<Operations>,
) -> String {
    let mut out = String::new();
    for diagnostic in diagnostics {
        let _ = writeln!(out, "{diagnostic}");
    }
    if !diagnostics.is_empty() {
        out.push('\n');
    }
    let served = tools_by_operation(catalog);
    let callers = super::discovery::callers(catalog);
    let off = |report: &&OperationReport| {
        matches!(
            report.status,
            OperationStatus::Off | OperationStatus::Excluded | OperationStatus::NotChosen
        )
    };
    // By default the served tools and those that could not be, and a count of the rest.
    let listed = |report: &&OperationReport| match shown {
        Some(Operations::All) => true,
        Some(Operations::Served) => report.status == OperationStatus::Served,
        Some(Operations::Off) => off(report),
        Some(Operations::Problems) => !off(report) && report.status != OperationStatus::Served,
        None => !off(report),
    };
    let rows: Vec<[String; 7]> = catalog
        .operations
        .iter()
        .filter(listed)
        .map(|report| {
            let tool = find_tool(&served, report);
            // The choice in brackets when it says more than the status does.
            let status = match report.status {
                OperationStatus::NotChosen => report.status.as_str().to_string(),
                status => format!("{} ({})", status.as_str(), report.choice),
            };
            let (hints, basis, cost) = match tool {
                Some(tool) => {
                    let cost = report.tokens.unwrap_or_default();
                    (hints(tool), basis(tool.basis).to_string(), cost.to_string())
                }
                None => (String::new(), String::new(), String::new()),
            };
            // The output schema's size in bytes, counted in the tokens beside it.
            let output = match report.output_schema_bytes {
                Some(bytes) => bytes.to_string(),
                None if tool.is_some() => "-".to_string(),
                None => String::new(),
            };
            // An operation behind discovery is named with the tool that calls it.
            let name = match tool.and_then(|tool| callers.get(tool.name.as_str())) {
                Some((caller, _)) => format!("{} via {caller}", report.tool),
                None => report.tool.clone(),
            };
            [report.label(), status, name, hints, basis, cost, output]
        })
        .collect();
    let header = [
        "OPERATION",
        "STATUS",
        "TOOL",
        "ANNOTATIONS",
        "BASIS",
        "TOKENS",
        "OUTPUT",
    ]
    .map(str::to_string);
    let mut widths = header.clone().map(|h| h.len());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count()).min(60);
        }
    }
    if !rows.is_empty() {
        for row in std::iter::once(&header).chain(&rows) {
            let mut line = String::new();
            for (cell, width) in row.iter().zip(widths) {
                let _ = write!(line, "{cell:<width$}  ");
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
    let unlisted = catalog.operations.len() - rows.len();
    if unlisted > 0 && shown.is_none() {
        let _ = writeln!(
            out,
            "\n{} {} off (not chosen, or switched off); `--operations all` lists {}",
            thousands(unlisted),
            if unlisted == 1 {
                "operation is"
            } else {
                "operations are"
            },
            if unlisted == 1 { "it" } else { "them" },
        );
    }
    if !asserted.is_empty() {
        let _ = writeln!(out, "\nasserted by curation, not justified by the method:");
        for tool in asserted {
            let _ = writeln!(out, "  {} ({}): {}", tool.name, calls(tool), hints(tool));
        }
        if strict {
            let _ = writeln!(out, "  --strict: these fail the check");
        }
    }
    let trimmed: Vec<&OperationReport> = catalog
        .operations
        .iter()
        .filter(|r| !r.omitted.is_empty())
        .collect();
    if !trimmed.is_empty() {
        let _ = writeln!(out, "\narguments left out by curation (declared losses):");
        for report in trimmed {
            let _ = writeln!(
                out,
                "  {} ({} {}): {} (saves about {} tokens)",
                report.tool,
                report.method,
                report.path,
                report.omitted.join(", "),
                report.tokens_saved.unwrap_or_default()
            );
        }
    }
    if catalog.tools.iter().any(|tool| tool.limits.any()) {
        let _ = writeln!(
            out,
            "\nrate limits per caller, in this process (a call must fit each):"
        );
        for tool in &catalog.tools {
            let limits = &tool.limits;
            let class = limits.class.as_str();
            let mut parts = Vec::new();
            if let Some(rate) = limits.tool {
                parts.push(format!("{rate} for this tool"));
            }
            if let Some(rate) = limits.class_limit {
                parts.push(format!("{rate} for all {class} together"));
            }
            if parts.is_empty() {
                parts.push("none".to_string());
            }
            let _ = writeln!(out, "  {} ({class}): {}", tool.name, parts.join(", "));
        }
    }
    let confirming: Vec<&catalog::Tool> = catalog
        .tools
        .iter()
        .filter(|tool| tool.confirm.is_some())
        .collect();
    if !confirming.is_empty() {
        let _ = writeln!(
            out,
            "\nthe user confirms each call before it is sent (confirm):"
        );
        for tool in confirming {
            let typed = match tool
                .confirm
                .as_ref()
                .and_then(|c| c.type_to_confirm.as_ref())
            {
                Some(argument) => format!(", typing back {argument}"),
                None => String::new(),
            };
            let _ = writeln!(out, "  {} ({}){typed}", tool.name, calls(tool));
        }
    }
    if composite(catalog).next().is_some() {
        let _ = writeln!(out, "\ncomposite tools from Arazzo workflows:");
        for (tool, plan) in composite(catalog) {
            let steps: Vec<String> = plan
                .steps
                .iter()
                .map(|step| format!("{} = {}", step.step, step.label()))
                .collect();
            let _ = writeln!(
                out,
                "  {} (workflow {}): {} [{}]\n    steps: {}\n    bounds: at most {} steps run, {} ms",
                tool.name,
                plan.workflow.id,
                hints(tool),
                basis(tool.basis),
                steps.join(", "),
                plan.max_steps,
                plan.timeout.as_millis()
            );
        }
    }
    if !catalog.endpoints.is_empty() {
        let _ = writeln!(out, "\nendpoints:");
        for endpoint in &catalog.endpoints {
            let _ = writeln!(
                out,
                "  {} at {} ({}, {}): {}",
                endpoint.id,
                endpoint.path,
                endpoint.server.name,
                auth_kind(endpoint.auth.as_ref()),
                match endpoint.tools.len() {
                    0 => "no tool".to_string(),
                    _ => endpoint.tools.join(", "),
                }
            );
        }
    }
    out.push_str(&super::discovery::text(catalog));
    let largest = catalog::trim::largest_tools(catalog, 5);
    if largest.len() > 1 {
        let named: Vec<String> = largest
            .iter()
            .map(|(name, tokens)| format!("{name} ({tokens})"))
            .collect();
        let _ = writeln!(out, "\nlargest tools, in tokens: {}", named.join(", "));
    }
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    let tools = catalog.served_tools();
    let _ = writeln!(
        out,
        "\n{} operations, {} {} (about {} tokens of tool definitions), {errors} {}, {warnings} {}",
        thousands(catalog.operations.len()),
        thousands(tools),
        if tools == 1 { "tool" } else { "tools" },
        thousands(catalog.served_tokens()),
        if errors == 1 { "error" } else { "errors" },
        if warnings == 1 { "warning" } else { "warnings" },
    );
    out
}

/// `n` with a comma between each group of three digits: 1,214.
pub(super) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The served tools by the operation they call; composite tools call none of their own.
fn tools_by_operation(catalog: &Catalog) -> HashMap<(&str, &str), &catalog::Tool> {
    catalog
        .tools
        .iter()
        .filter_map(|tool| {
            let plan = &tool.operation()?.plan;
            Some(((plan.method.as_str(), plan.path.as_str()), tool))
        })
        .collect()
}

/// The composite tools, each with its workflow.
fn composite(catalog: &Catalog) -> impl Iterator<Item = (&catalog::Tool, &catalog::WorkflowPlan)> {
    catalog
        .tools
        .iter()
        .filter_map(|tool| Some((tool, tool.workflow()?)))
}

/// What a tool calls, in a report: `GET /pets`, or `workflow adopt`.
fn calls(tool: &catalog::Tool) -> String {
    match &tool.runs {
        catalog::Runs::Operation(operation) => {
            format!("{} {}", operation.plan.method, operation.plan.path)
        }
        catalog::Runs::Workflow(plan) => format!("workflow {}", plan.workflow.id),
        catalog::Runs::Discovery(discovery) => format!("discovery {}", discovery.kind.as_str()),
    }
}

fn find_tool<'a>(
    served: &HashMap<(&str, &str), &'a catalog::Tool>,
    report: &OperationReport,
) -> Option<&'a catalog::Tool> {
    served
        .get(&(report.method.as_str(), report.path.as_str()))
        .copied()
}

fn hints(tool: &catalog::Tool) -> String {
    annotation_hints(&tool.annotations)
}

pub(super) fn annotation_hints(a: &catalog::Annotations) -> String {
    let mut parts = Vec::new();
    for (name, value) in [
        ("readOnly", a.read_only_hint),
        ("destructive", a.destructive_hint),
        ("idempotent", a.idempotent_hint),
        ("openWorld", a.open_world_hint),
    ] {
        if let Some(value) = value {
            parts.push(format!("{name}={value}"));
        }
    }
    if parts.is_empty() {
        "-".to_string()
    } else {
        parts.join(" ")
    }
}

fn basis(basis: AnnotationBasis) -> &'static str {
    match basis {
        AnnotationBasis::Method => "method",
        AnnotationBasis::CurationSound => "curation",
        AnnotationBasis::CurationAsserted => "asserted",
    }
}

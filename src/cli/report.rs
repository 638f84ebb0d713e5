//! `ferry check`, `ferry tools` and `ferry init`: what a document and curation compile to,
//! for people and for programs, and a starter curation listing a document's operations (and
//! an Arazzo document's workflows) all off.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context;
use ferry::catalog::{self, AnnotationBasis, Catalog, OperationReport, OperationStatus};
use ferry::curation::Curation;
use ferry::diagnostic::{Diagnostic, Location, Severity};
use ferry::openapi;
use serde_json::{Value, json};

use super::{
    CheckArgs, Format, InitArgs, Operations, ToolsArgs, load_catalog, load_chosen, load_report,
};

/// The version of `ferry check --format json`'s shape; bumped only on a breaking change.
/// 2: every operation has a `status` (and a `reason` when not served); a diagnostic names
/// its operations in an `operations` list, where 1 had one `operation`.
const CHECK_FORMAT_VERSION: u32 = 2;

pub fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    // Drift is judged on every tool's whole definition, so only a check against a lock keeps
    // the input schemas; the report alone needs none, and they are most of a large catalog.
    let lock = super::lock::path_for(super::config_path(&args.source).as_deref());
    let against_lock = args.locked || lock.exists();
    let mut loaded = if against_lock {
        load_catalog(&args.source)?
    } else {
        load_report(&args.source)?
    };
    let (drift, drifted) = if against_lock {
        super::lock::check(
            &loaded.catalog,
            loaded.document.as_ref(),
            loaded.config.as_deref(),
            args.locked,
        )?
    } else {
        (Vec::new(), false)
    };
    loaded.diagnostics.extend(drift);
    loaded.diagnostics.sort_by_key(|d| d.severity);
    // The report needs only the catalog: the document goes first, since it can be larger.
    loaded.document = None;
    let asserted: Vec<&catalog::Tool> = loaded
        .catalog
        .tools
        .iter()
        .filter(|t| t.basis == AnnotationBasis::CurationAsserted)
        .collect();
    let asserted_workflows = loaded
        .catalog
        .workflows
        .iter()
        .any(|t| t.basis == AnnotationBasis::CurationAsserted);
    let over_budget = loaded.diagnostics.iter().any(|diagnostic| {
        matches!(
            diagnostic.code,
            Some(catalog::trim::OVER_MAX_TOOLS | catalog::trim::OVER_MAX_CATALOG_TOKENS)
        )
    });
    let failed = loaded.has_errors()
        || (args.strict && (!asserted.is_empty() || asserted_workflows || over_budget))
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
    loaded.document = None;
    for diagnostic in &loaded.diagnostics {
        if diagnostic.is_error() {
            eprintln!("{diagnostic}");
        }
    }
    // The bytes `tools/list` serves, from the same writer; pretty-printed unless asked for as
    // they are, which keeps the members' order and every value.
    let array = ferry::mcp::tools_array(&loaded.catalog);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.compact {
        out.write_all(&array)?;
    } else {
        let tools: serde_json::Value = serde_json::from_slice(&array)?;
        serde_json::to_writer_pretty(&mut out, &tools)?;
    }
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(if loaded.has_errors() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

pub fn init(args: &InitArgs) -> anyhow::Result<ExitCode> {
    let path = std::path::Path::new(&args.openapi);
    let document = openapi::load(path)
        .with_context(|| format!("loading OpenAPI document {}", args.openapi))?;
    // Every operation built, so each comment can say what its tool would cost; named as the
    // file will name them.
    let measured = Curation {
        all: true,
        naming: ferry::curation::Naming::SnakeCase,
        ..Curation::default()
    };
    let (catalog, _) = catalog::compile(&document, &measured);
    let relative = relative_to(&args.output, path);
    let mut text = starter(&catalog, &document, &relative);
    let mut workflows = 0;
    if let Some(arazzo) = &args.arazzo {
        let file = openapi::load_file(arazzo, &openapi::LoadOptions::default())
            .with_context(|| format!("loading Arazzo document {}", arazzo.display()))?;
        let (read, diagnostics) = ferry::arazzo::parse(&file.name, &file.value);
        for diagnostic in &diagnostics {
            eprintln!("{diagnostic}");
        }
        workflows = read.workflows.len();
        text.push_str(&starter_workflows(
            &read,
            &diagnostics,
            &relative_to(&args.output, arazzo),
        ));
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&args.output)
        .with_context(|| {
            format!(
                "writing {} (ferry init never overwrites a file)",
                args.output.display()
            )
        })?;
    file.write_all(text.as_bytes())?;
    let listed = match args.arazzo {
        Some(_) => format!(
            "{} operations and {workflows} workflows",
            thousands(catalog.operations.len())
        ),
        None => format!("{} operations", thousands(catalog.operations.len())),
    };
    let all_tokens: usize = catalog.operations.iter().filter_map(|r| r.tokens).sum();
    eprintln!(
        "wrote {} with {listed}, all off: 0 tools switched on (0 tokens; all of them would cost about {} tokens of context).\n\
         Switch on the ones to serve (each comment says what its tool costs), set `upstream_auth` if the API needs a credential, then run `ferry check`",
        args.output.display(),
        thousands(all_tokens),
    );
    Ok(ExitCode::SUCCESS)
}

fn check_json(catalog: &Catalog, diagnostics: &[Diagnostic]) -> Value {
    let served = tools_by_operation(catalog);
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
            }
            entry
        })
        .collect();
    let workflows: Vec<Value> = catalog
        .workflows
        .iter()
        .map(|tool| {
            let steps: Vec<Value> = tool
                .steps
                .iter()
                .map(|step| json!({"step": step.step, "operation": step.label()}))
                .collect();
            json!({
                "tool": tool.name,
                "workflowId": tool.workflow.id,
                "steps": steps,
                "annotations": tool.annotations,
                "basis": tool.basis,
                "served": true,
                "max_steps": tool.max_steps,
                "timeout_ms": tool.timeout.as_millis() as u64,
            })
        })
        .collect();
    let count = |severity| {
        diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    };
    json!({
        "version": CHECK_FORMAT_VERSION,
        "summary": {
            "operations": catalog.operations.len(),
            "tools": catalog.served_tools(),
            "errors": count(Severity::Error),
            "warnings": count(Severity::Warning),
            "asserted": catalog.tools.iter().filter(|t| t.basis == AnnotationBasis::CurationAsserted).count()
                + catalog.workflows.iter().filter(|t| t.basis == AnnotationBasis::CurationAsserted).count(),
            "tokens": catalog.served_tokens(),
            "confirming": catalog.tools.iter().filter(|t| t.confirm.is_some()).count(),
            "workflows": catalog.workflows.len(),
        },
        "diagnostics": diagnostics,
        "operations": operations,
        "workflows": workflows,
    })
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
    let rows: Vec<[String; 6]> = catalog
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
            [
                format!("{} {}", report.method, report.path),
                status,
                report.tool.clone(),
                hints,
                basis,
                cost,
            ]
        })
        .collect();
    let header = [
        "OPERATION",
        "STATUS",
        "TOOL",
        "ANNOTATIONS",
        "BASIS",
        "TOKENS",
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
            let _ = writeln!(
                out,
                "  {} ({} {}): {}",
                tool.name,
                tool.plan.method,
                tool.plan.path,
                hints(tool)
            );
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
            let _ = writeln!(
                out,
                "  {} ({} {}){typed}",
                tool.name, tool.plan.method, tool.plan.path
            );
        }
    }
    if !catalog.workflows.is_empty() {
        let _ = writeln!(out, "\ncomposite tools from Arazzo workflows:");
        for tool in &catalog.workflows {
            let steps: Vec<String> = tool
                .steps
                .iter()
                .map(|step| format!("{} = {}", step.step, step.label()))
                .collect();
            let _ = writeln!(
                out,
                "  {} (workflow {}): {} [{}]\n    steps: {}\n    bounds: at most {} steps run, {} ms",
                tool.name,
                tool.workflow.id,
                annotation_hints(&tool.annotations),
                basis(tool.basis),
                steps.join(", "),
                tool.max_steps,
                tool.timeout.as_millis()
            );
        }
    }
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
fn thousands(n: usize) -> String {
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

/// The served tools by the operation they call.
fn tools_by_operation(catalog: &Catalog) -> HashMap<(&str, &str), &catalog::Tool> {
    catalog
        .tools
        .iter()
        .map(|t| ((t.plan.method.as_str(), t.plan.path.as_str()), t))
        .collect()
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

fn annotation_hints(a: &catalog::Annotations) -> String {
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

/// `document` as a path relative to the directory `output` is written in, when both are
/// relative; otherwise as given.
fn relative_to(output: &std::path::Path, document: &std::path::Path) -> String {
    let output_dir = output.parent().filter(|p| !p.as_os_str().is_empty());
    match output_dir {
        None => document.display().to_string(),
        Some(dir) => match (std::path::absolute(dir), std::path::absolute(document)) {
            (Ok(dir), Ok(document)) => match document.strip_prefix(&dir) {
                Ok(rest) => format!("./{}", rest.display()),
                Err(_) => document.display().to_string(),
            },
            _ => document.display().to_string(),
        },
    }
}

fn starter(catalog: &Catalog, document: &openapi::Document, openapi_path: &str) -> String {
    let mut out = String::new();
    let title = document
        .root()
        .pointer("/info/title")
        .and_then(Value::as_str)
        .unwrap_or("this API");
    let _ = writeln!(out, "# ferry curation for {}.", one_line(title));
    let _ = writeln!(
        out,
        "# Nothing is served until chosen: switch an operation on by replacing `false` with `{{}}`"
    );
    let _ = writeln!(
        out,
        "# (or with settings: name, title, description, annotations, because). Then `ferry check`."
    );
    let _ = writeln!(out, "openapi: {}", quote(openapi_path));
    let _ = writeln!(
        out,
        "# Tool names: lowercase words joined by `_` (`as_written` keeps the document's ids)."
    );
    let _ = writeln!(out, "naming: snake_case");
    match &catalog.upstream {
        Some(upstream) => {
            let _ = writeln!(
                out,
                "# upstream: {upstream}   # default: the document's first server"
            );
        }
        None => {
            let _ = writeln!(
                out,
                "upstream: null   # the document names no absolute server URL: set one to serve"
            );
        }
    }
    let slug = slug(title);
    let _ = writeln!(out, "server:\n  name: {}", quote(&slug));
    out.push_str(&credential_stub(
        document,
        &env_prefix(catalog.upstream.as_deref(), &slug),
    ));
    let _ = writeln!(out, "tools:");
    for report in &catalog.operations {
        let summary = report.summary.as_deref().map(one_line).unwrap_or_default();
        let cost = match report.tokens {
            Some(tokens) => format!(", about {tokens} tokens"),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "  # {} {}: {} (tool {}{cost})",
            report.method, report.path, summary, report.tool
        );
        if let Some(reason) = &report.ineligible {
            let _ = writeln!(out, "  #   cannot be a tool as it is: {}", one_line(reason));
        }
        let key = match &report.operation_id {
            Some(id) => id.clone(),
            None => format!("{} {}", report.method, report.path),
        };
        if report.method == "DELETE" {
            let _ = writeln!(
                out,
                "  #   to serve it, consider having the user confirm each call: {}: {{confirm: true}}",
                quote(&key)
            );
            let _ = writeln!(
                out,
                "  #   (clients of MCP 2025-11-25 cannot be asked: they then see the tool but every call is refused, unless `confirm_legacy: allow`)"
            );
        }
        let _ = writeln!(out, "  {}: false", quote(&key));
    }
    out
}

/// The starter's `workflows:` section: the Arazzo document at `arazzo_path` and each of its
/// workflows, off, under a comment with its summary and steps (and why it cannot be a tool
/// as it is, when its document says so).
fn starter_workflows(
    arazzo: &ferry::arazzo::Arazzo,
    diagnostics: &[Diagnostic],
    arazzo_path: &str,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Composite tools from the Arazzo document's workflows, switched on the same way."
    );
    let _ = writeln!(out, "workflows:\n  document: {}", quote(arazzo_path));
    if arazzo.workflows.is_empty() {
        let _ = writeln!(out, "  tools: {{}}   # the document has no workflows");
        return out;
    }
    let _ = writeln!(out, "  tools:");
    for workflow in &arazzo.workflows {
        let words = workflow
            .summary
            .as_deref()
            .or(workflow.description.as_deref());
        let steps: Vec<&str> = workflow.steps.iter().map(|step| step.id.as_str()).collect();
        let _ = writeln!(
            out,
            "    # {}: {} (steps: {})",
            workflow.id,
            words.map(one_line).unwrap_or_default(),
            steps.join(", ")
        );
        let problem = diagnostics.iter().find(|diagnostic| {
            diagnostic.is_error()
                && matches!(&diagnostic.location, Location::Document { pointer, .. }
                    if pointer == &workflow.pointer
                        || pointer.starts_with(&format!("{}/", workflow.pointer)))
        });
        if let Some(problem) = problem {
            let _ = writeln!(
                out,
                "    #   cannot be a tool as it is: {}",
                one_line(&problem.message)
            );
        }
        let _ = writeln!(out, "    {}: false", quote(&workflow.id));
    }
    out
}

/// `title` as a server name: lowercase letters and digits, words joined by `-`
/// (`GitHub v3 REST API` is `github-v3-rest-api`); `api` when nothing is left.
fn slug(title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') && c != '\'' {
            slug.push('-');
        }
    }
    while slug.ends_with('-') {
        slug.pop();
    }
    if slug.is_empty() {
        slug.push_str("api");
    }
    slug
}

/// The start of the environment variables a starter names: the upstream's name without its
/// `api.`/`www.` and top-level domain (`https://api.github.com` gives `GITHUB`), else the
/// server's slug, in capitals.
fn env_prefix(upstream: Option<&str>, slug: &str) -> String {
    let host = upstream
        .and_then(|upstream| url::Url::parse(upstream).ok())
        .and_then(|url| url.host_str().map(str::to_string))
        .filter(|host| host.parse::<std::net::IpAddr>().is_err() && host.contains('.'));
    let name = match &host {
        Some(host) => {
            let labels: Vec<&str> = host.split('.').collect();
            labels[labels.len().saturating_sub(2)].to_string()
        }
        None => slug.to_string(),
    };
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// A commented `upstream_auth` for each security scheme the document declares that ferry
/// can send as its own credential, naming the environment variable to set; a bearer token's
/// when the document declares none.
fn credential_stub(document: &openapi::Document, prefix: &str) -> String {
    let root = document.root();
    let schemes = root
        .pointer("/components/securitySchemes")
        .or_else(|| root.get("securityDefinitions"))
        .and_then(Value::as_object)
        .filter(|schemes| !schemes.is_empty());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# ferry's own credential for the API, read from the environment at start (never a caller's):"
    );
    let Some(schemes) = schemes else {
        let _ = writeln!(
            out,
            "# upstream_auth: {{bearer: {{env: {prefix}_TOKEN}}}}   # the document declares no scheme; set one if the API needs it"
        );
        return out;
    };
    for (name, scheme) in schemes {
        let kind = scheme
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let http = scheme
            .get("scheme")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let line = match (kind, http.to_ascii_lowercase().as_str()) {
            ("http", "bearer") | ("oauth2" | "openIdConnect", _) => {
                format!("upstream_auth: {{bearer: {{env: {prefix}_TOKEN}}}}")
            }
            ("http", "basic") | ("basic", _) => format!(
                "upstream_auth: {{basic: {{username: {{env: {prefix}_USERNAME}}, password: {{env: {prefix}_PASSWORD}}}}}}"
            ),
            ("apiKey", _) => {
                let location = scheme.get("in").and_then(Value::as_str).unwrap_or("header");
                let parameter = scheme
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("api_key");
                format!(
                    "upstream_auth: {{api_key: {{in: {location}, name: {}, env: {prefix}_API_KEY}}}}",
                    quote(parameter)
                )
            }
            _ => continue,
        };
        let _ = writeln!(
            out,
            "# {line}   # the document's {} scheme",
            quote(&one_line(name))
        );
    }
    out
}

fn one_line(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > 100 {
        format!("{}…", line.chars().take(99).collect::<String>())
    } else {
        line
    }
}

/// A YAML scalar for `text`: plain when that is unambiguous, a JSON string otherwise.
fn quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))
        && !text.starts_with(['-', '.'])
        && !["true", "false", "null", "yes", "no", "on", "off"]
            .contains(&text.to_ascii_lowercase().as_str());
    if plain {
        text.to_string()
    } else {
        serde_json::to_string(text).unwrap_or_default()
    }
}

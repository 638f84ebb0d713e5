//! `ferry init`: a starter curation listing a document's operations (and an Arazzo
//! document's workflows) all off, each with the tool it would be and what it would cost, a
//! slug for the server's name and a commented credential for each security scheme the
//! document declares.

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context;
use ferry::catalog::{self, Catalog};
use ferry::curation::Curation;
use ferry::diagnostic::{Diagnostic, Location};
use ferry::openapi;
use serde_json::Value;

use super::InitArgs;
use super::report::thousands;

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
    if let Some(id) = &args.add {
        return add_api(args, id, &text, catalog.operations.len());
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

/// `ferry init --add ID`: the starter `text` for the document, as API `id` of the existing
/// file `args.output`.
fn add_api(args: &InitArgs, id: &str, text: &str, operations: usize) -> anyhow::Result<ExitCode> {
    let existing = std::fs::read_to_string(&args.output).with_context(|| {
        format!(
            "reading {} to add the API to (without --add, ferry init writes a new file)",
            args.output.display()
        )
    })?;
    // The server is the file's: the entry has no `server:` block of its own.
    let mut entry = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line == "server:" {
            while lines.peek().is_some_and(|next| next.starts_with(' ')) {
                lines.next();
            }
            continue;
        }
        entry.push_str(line);
        entry.push('\n');
    }
    let written = super::add::with_api(&existing, id, &entry)?;
    let curation = super::add::check_reads(&args.output, &existing, &written)?;
    let temporary = args.output.with_extension("yaml.adding");
    std::fs::write(&temporary, &written)
        .and_then(|()| std::fs::rename(&temporary, &args.output))
        .with_context(|| format!("writing {}", args.output.display()))?;
    eprintln!(
        "added API {id} to {} with {} operations, all off; it lists {} APIs now.\n\
         Switch on the ones to serve under `apis.{id}.tools`, set its `upstream` and `upstream_auth`, then run `ferry check`",
        args.output.display(),
        thousands(operations),
        curation.apis.len(),
    );
    Ok(ExitCode::SUCCESS)
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
    let upstream = catalog.apis.first().and_then(|api| api.upstream.as_deref());
    match upstream {
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
    out.push_str(&credential_stub(document, &env_prefix(upstream, &slug)));
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

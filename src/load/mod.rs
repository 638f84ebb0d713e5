//! Reading what a command works from: the curation file and the documents it names, each
//! API compiled with its part of the curation, joined into one catalog with its composite
//! tools, discovery tools and endpoints; and the lock beside the curation file
//! ([`lockfile`]). `ferry check`, `tools`, `lock`, `diff`, `serve` and every reload load the
//! same way.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args as ClapArgs;

use crate::catalog::{self, Catalog};
use crate::curation::{self, Curation};
use crate::diagnostic::{Diagnostic, Location};
use crate::openapi::{self, Document};

pub mod lockfile;

/// Where the document and curation come from; shared by every command that compiles.
#[derive(Debug, Clone, ClapArgs)]
pub struct SourceArgs {
    /// The curation file (default: ferry.yaml, when it exists).
    #[arg(long, short = 'c', env = "FERRY_CONFIG")]
    pub config: Option<PathBuf>,
    /// The OpenAPI document (path or http(s) URL); replaces the one the curation names.
    #[arg(long, env = "FERRY_OPENAPI")]
    pub openapi: Option<String>,
    /// The upstream base URL; replaces the curation's and the document's.
    #[arg(long, env = "FERRY_UPSTREAM")]
    pub upstream: Option<String>,
    /// Choose every operation of the document.
    #[arg(long)]
    pub all: bool,
    /// Follow the document's http(s) `$ref`s (and a fetched document's relative ones).
    #[arg(long, env = "FERRY_ALLOW_REMOTE_REFS")]
    pub allow_remote_refs: bool,
    /// The directory local `$ref`s may reach (default: the document's own directory).
    #[arg(long, env = "FERRY_REF_ROOT")]
    pub ref_root: Option<PathBuf>,
}

/// What a compiling command works from: the compiled catalog and every problem found.
pub struct Loaded {
    pub catalog: Catalog,
    pub diagnostics: Vec<Diagnostic>,
    /// The curation as read, flags applied: serving needs its upstream settings.
    pub curation: Curation,
    /// The documents it was compiled from, each beside its API's id (empty for the one API
    /// of a file without `apis:`), for the lock (which records their files); a command that
    /// does not need them empties the list as soon as it can, since they can be larger than
    /// the catalog.
    pub documents: Vec<(String, Document)>,
    /// The curation file read, when there was one.
    pub config: Option<PathBuf>,
}

impl Loaded {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Reads the curation and the document the arguments name, and compiles them, judging every
/// operation (for `ferry check`).
pub fn load_catalog(source: &SourceArgs) -> anyhow::Result<Loaded> {
    load(source, catalog::compile)
}

/// [`load_catalog`] for `ferry check`'s report, without a lock to compare with: every
/// tool's input schema is dropped as soon as it is measured (see [`catalog::compile_report`]).
pub fn load_report(source: &SourceArgs) -> anyhow::Result<Loaded> {
    load(source, catalog::compile_report)
}

/// [`load_catalog`] building only the chosen operations: the same tools and errors, faster,
/// for the commands that serve or print what is served.
pub fn load_chosen(source: &SourceArgs) -> anyhow::Result<Loaded> {
    load(source, catalog::compile_chosen)
}

/// [`load_chosen`], compiling on the calling thread alone (see
/// [`catalog::compile_chosen_alone`]).
pub fn load_chosen_alone(source: &SourceArgs) -> anyhow::Result<Loaded> {
    load(source, catalog::compile_chosen_alone)
}

/// The signature of [`catalog::compile`], [`catalog::compile_chosen`] (and `_alone`) and
/// [`catalog::compile_report`].
type Compile = fn(&Document, &Curation) -> (Catalog, Vec<Diagnostic>);

/// The curation file the arguments name: `--config`, else ferry.yaml when there is one and
/// no `--openapi` was given.
pub fn config_path(source: &SourceArgs) -> Option<PathBuf> {
    match &source.config {
        Some(path) => Some(path.clone()),
        None if source.openapi.is_none() && Path::new(DEFAULT_CONFIG).exists() => {
            Some(PathBuf::from(DEFAULT_CONFIG))
        }
        None => None,
    }
}

fn load(source: &SourceArgs, compile: Compile) -> anyhow::Result<Loaded> {
    let config = config_path(source);
    let (mut curation, mut diagnostics) = match &config {
        Some(path) => curation::read(path)
            .with_context(|| format!("reading curation file {}", path.display()))?,
        None => (Curation::default(), Vec::new()),
    };
    if !curation.apis.is_empty() {
        for (flag, given) in [
            ("--openapi", source.openapi.is_some()),
            ("--upstream", source.upstream.is_some()),
        ] {
            if given {
                anyhow::bail!(
                    "{flag} names one API's, but {} lists several under `apis:`: set it in the API's entry",
                    config
                        .as_deref()
                        .unwrap_or(Path::new(DEFAULT_CONFIG))
                        .display()
                );
            }
        }
    }
    if source.openapi.is_some() {
        curation.openapi = source.openapi.clone();
        if config.is_none() {
            curation.dir = PathBuf::new();
        }
    }
    if source.upstream.is_some() {
        curation.upstream = source.upstream.clone();
    }
    curation.all |= source.all;
    if curation.apis.is_empty() && curation.openapi.is_none() {
        // The curation's own problems may be why it names no document: show them first.
        for diagnostic in &diagnostics {
            eprintln!("{diagnostic}");
        }
        anyhow::bail!(
            "no OpenAPI document: no {DEFAULT_CONFIG} here; run `ferry init DOC` to write one from your OpenAPI document, or pass --config FILE or --openapi DOC"
        );
    }
    let options = openapi::LoadOptions {
        allow_remote: source.allow_remote_refs,
        root_dir: source.ref_root.clone(),
        ..openapi::LoadOptions::default()
    };
    let mut parts = Vec::new();
    let mut documents = Vec::new();
    let mut api_curations = Vec::new();
    for part in curation.api_curations() {
        // An API without a document was reported when the file was read.
        let Some(location) = &part.openapi else {
            continue;
        };
        let document = load_document(location, &part, &options).map_err(|error| {
            match part.api_id.as_str() {
                "" => error,
                id => error.context(format!("API {id}")),
            }
        })?;
        let (catalog, found) = compile_api(&document, &part, compile, &options);
        diagnostics.extend(
            found
                .into_iter()
                .map(|found| found.within_api(&part.api_id)),
        );
        parts.push(catalog);
        documents.push((part.api_id.clone(), document));
        api_curations.push(part);
    }
    if parts.is_empty() {
        for diagnostic in &diagnostics {
            eprintln!("{diagnostic}");
        }
        anyhow::bail!("no API of the curation file could be read: see the errors above");
    }
    let (mut catalog, found) = catalog::join(&curation, parts);
    diagnostics.extend(found);
    if !curation.apis.is_empty() {
        let apis: Vec<catalog::WorkflowSource<'_>> = api_curations
            .iter()
            .zip(&documents)
            .map(|(curation, (_, document))| catalog::WorkflowSource { curation, document })
            .collect();
        diagnostics.extend(add_workflows(&mut catalog, &apis, &curation, &options));
    }
    // The whole list's budgets, once every tool, composite ones too, is known.
    diagnostics.extend(catalog::trim::catalog_budget(&catalog, &curation));
    diagnostics.extend(catalog::endpoints::resolve(&mut catalog, &curation));
    diagnostics.sort_by_key(|d| d.severity);
    Ok(Loaded {
        catalog,
        diagnostics,
        curation,
        documents,
        config,
    })
}

/// One API's catalog: its document compiled by `compile` with its part of the curation, and
/// the workflows it chooses added.
fn compile_api(
    document: &Document,
    curation: &Curation,
    compile: Compile,
    options: &openapi::LoadOptions,
) -> (Catalog, Vec<Diagnostic>) {
    let (mut catalog, mut diagnostics) = compile(document, curation);
    let api = catalog::WorkflowSource { curation, document };
    diagnostics.extend(add_workflows(&mut catalog, &[api], curation, options));
    diagnostics.extend(catalog::add_discovery(&mut catalog, document, curation));
    (catalog, diagnostics)
}

/// The composite tools `curation`'s `workflows:` chooses, added to `catalog`, their steps
/// calling `apis`: one API's, or at the top of a file with `apis:`, any of them.
fn add_workflows(
    catalog: &mut Catalog,
    apis: &[catalog::WorkflowSource<'_>],
    curation: &Curation,
    options: &openapi::LoadOptions,
) -> Vec<Diagnostic> {
    let Some(workflows) = &curation.workflows else {
        return Vec::new();
    };
    let path = curation.dir.join(&workflows.document);
    match openapi::load_file(&path, options) {
        Ok(file) => catalog::add_workflows_over(catalog, apis, curation, &file),
        Err(error) => vec![Diagnostic::error(
            Location::curation("workflows.document"),
            format!("cannot load the Arazzo document: {error}"),
        )],
    }
}

/// The curation file read when none is named.
pub const DEFAULT_CONFIG: &str = "ferry.yaml";

fn load_document(
    location: &str,
    curation: &Curation,
    options: &openapi::LoadOptions,
) -> anyhow::Result<Document> {
    if location.starts_with("http://") || location.starts_with("https://") {
        // Unless remote references are allowed, only the document itself is fetched.
        return openapi::load_url_blocking(location, options)
            .with_context(|| format!("loading OpenAPI document {location}"));
    }
    let path = curation.dir.join(location);
    openapi::load_with(&path, options)
        .with_context(|| format!("loading OpenAPI document {}", path.display()))
}

//! The import rules of ARCHITECTURE.md's "Architecture invariants", checked on the source
//! (as rust-analyzer's `xtask/src/tidy.rs` checks its docs): every `.rs` file under `src/`
//! is read, comments and string literals are blanked out, and every path the code names
//! (the `use` trees, expanded, and paths written in place: `crate::auth::Principal`,
//! `ferry::upstream::set_worker`, `axum::Router`) is judged against the rules of the file's
//! top-level module.
//!
//! A rule broken today is listed in [`EXCEPTIONS`] with its reason; an exception that no
//! longer occurs fails the test too, so the table shrinks as the code is brought in line.
//! Unit-test files (`tests.rs`) are not judged: a test may build its inputs with any module.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Which top-level modules a rule binds.
enum Scope {
    /// These modules.
    Only(&'static [&'static str]),
    /// Every module but these.
    AllBut(&'static [&'static str]),
}

struct Rule {
    /// The rule as ARCHITECTURE.md writes it.
    text: &'static str,
    scope: Scope,
    /// Paths, by their leading segments, that the bound modules may not name. `crate::x`
    /// stands for ferry's module `x` (written `ferry::x` in the binary); [`EXCEPTIONS`] name
    /// one of these.
    forbidden: &'static [&'static str],
}

const RULES: &[Rule] = &[
    Rule {
        text: "`boxed`, `client`, `diagnostic`, `file`, `json`, `parameter`, `rate`, `state` and `trace` import nothing from ferry",
        scope: Scope::Only(&[
            "boxed",
            "client",
            "diagnostic",
            "file",
            "json",
            "parameter",
            "rate",
            "state",
            "trace",
        ]),
        forbidden: &["crate"],
    },
    Rule {
        text: "`openapi` imports nothing from ferry but the leaf `file`",
        scope: Scope::Only(&["openapi"]),
        forbidden: &[
            "crate::access",
            "crate::arazzo",
            "crate::auth",
            "crate::catalog",
            "crate::curation",
            "crate::demo",
            "crate::diagnostic",
            "crate::fuzzing",
            "crate::json",
            "crate::lock",
            "crate::mcp",
            "crate::observe",
            "crate::parameter",
            "crate::rate",
            "crate::trace",
            "crate::transport",
            "crate::upstream",
            "crate::cli",
        ],
    },
    Rule {
        text: "`access` imports nothing from ferry but the leaf `parameter`",
        scope: Scope::Only(&["access"]),
        forbidden: &[
            "crate::auth",
            "crate::catalog",
            "crate::curation",
            "crate::upstream",
            "crate::mcp",
            "crate::transport",
            "crate::openapi",
            "crate::lock",
            "crate::demo",
            "crate::cli",
        ],
    },
    Rule {
        text: "`arazzo` imports nothing from ferry but the leaves `diagnostic`, `parameter` and `openapi`, and is pure",
        scope: Scope::Only(&["arazzo"]),
        forbidden: &[
            "crate::access",
            "crate::auth",
            "crate::catalog",
            "crate::curation",
            "crate::upstream",
            "crate::mcp",
            "crate::transport",
            "crate::lock",
            "crate::demo",
            "crate::cli",
            "crate::observe",
            "crate::trace",
            "crate::rate",
            "tokio",
            "reqwest",
            "hyper",
            "hyper_util",
            "std::fs",
            "std::net",
        ],
    },
    Rule {
        text: "`curation` imports nothing from `catalog`, `auth`, `upstream`, `mcp`, `transport`",
        scope: Scope::Only(&["curation"]),
        forbidden: &[
            "crate::catalog",
            "crate::auth",
            "crate::upstream",
            "crate::mcp",
            "crate::transport",
        ],
    },
    Rule {
        text: "`catalog` imports nothing from `auth`, `upstream`, `mcp`, `transport`, `lock`, `demo`",
        scope: Scope::Only(&["catalog"]),
        forbidden: &[
            "crate::auth",
            "crate::upstream",
            "crate::mcp",
            "crate::transport",
            "crate::lock",
            "crate::demo",
        ],
    },
    Rule {
        text: "`catalog` and `lock` are pure: no `tokio`, `reqwest`, `hyper`, `std::fs`, `std::net`",
        scope: Scope::Only(&["catalog", "lock"]),
        forbidden: &[
            "tokio",
            "reqwest",
            "hyper",
            "hyper_util",
            "std::fs",
            "std::net",
        ],
    },
    Rule {
        text: "`upstream` imports nothing from `run`, `mcp`, `curation`, `transport`",
        scope: Scope::Only(&["upstream"]),
        forbidden: &[
            "crate::run",
            "crate::mcp",
            "crate::curation",
            "crate::transport",
        ],
    },
    Rule {
        text: "`run` imports nothing from `mcp`, `curation`, `transport`",
        scope: Scope::Only(&["run"]),
        forbidden: &["crate::mcp", "crate::curation", "crate::transport"],
    },
    Rule {
        text: "`observe` imports nothing from `mcp`, `transport`, `curation`",
        scope: Scope::Only(&["observe"]),
        forbidden: &["crate::mcp", "crate::transport", "crate::curation"],
    },
    Rule {
        text: "`mcp` imports nothing from `curation`, `transport`",
        scope: Scope::Only(&["mcp"]),
        forbidden: &["crate::curation", "crate::transport"],
    },
    Rule {
        text: "`auth` imports nothing from `curation`, `upstream`, `mcp`, `transport`",
        scope: Scope::Only(&["auth"]),
        forbidden: &[
            "crate::curation",
            "crate::upstream",
            "crate::mcp",
            "crate::transport",
        ],
    },
    Rule {
        text: "`transport` imports nothing from `catalog`, `curation`, `upstream`, `openapi`",
        scope: Scope::Only(&["transport"]),
        forbidden: &[
            "crate::catalog",
            "crate::curation",
            "crate::upstream",
            "crate::openapi",
        ],
    },
    Rule {
        text: "only `state` names redis",
        scope: Scope::AllBut(&["state"]),
        forbidden: &["redis"],
    },
    Rule {
        text: "only `transport`, `demo` and `cli` name axum",
        scope: Scope::AllBut(&["transport", "demo", "cli"]),
        forbidden: &["axum"],
    },
];

/// Rules broken today: (the file, the path it may still name, why, and what removes it).
const EXCEPTIONS: &[(&str, &str, &str)] = &[];

#[test]
fn source_keeps_the_import_rules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    assert!(files.len() > 20, "too few source files found: {files:?}");

    let mut modules: Vec<String> = Vec::new();
    let mut broken = String::new();
    let mut used = vec![false; EXCEPTIONS.len()];
    for file in &files {
        let relative = file.strip_prefix(root).expect("under the root");
        let name = relative.to_string_lossy().replace('\\', "/");
        let module = module_path(&name);
        let top = module.first().cloned().unwrap_or_default();
        if !modules.contains(&top) {
            modules.push(top.clone());
        }
        if name.ends_with("/tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("source file readable");
        // Imports name their source: no glob import outside tests (an inline test module
        // ends a file, so scanning stops at its attribute).
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line == "#[cfg(test)]" {
                break;
            }
            let imports = line.starts_with("use ")
                || line.starts_with("pub use ")
                || (line.starts_with("pub(") && line.contains(" use "));
            if imports && line.trim_end_matches(';').ends_with("::*") {
                writeln!(
                    broken,
                    "{name}:{}: `{line}` is a glob import: name what is imported",
                    index + 1
                )
                .expect("writing to a string");
            }
        }
        for (line, path) in references(&text, &module) {
            if path.first() == Some(&"crate".to_owned()) && path.get(1) == Some(&top) {
                continue;
            }
            for rule in RULES {
                if !rule.binds(&top) {
                    continue;
                }
                let Some(forbidden) = rule.forbidden.iter().find(|f| starts_with(&path, f)) else {
                    continue;
                };
                let excepted = EXCEPTIONS
                    .iter()
                    .position(|(excepted, named, _)| *excepted == name && named == forbidden);
                match excepted {
                    Some(index) => used[index] = true,
                    None => writeln!(
                        broken,
                        "{name}:{line}: `{}` breaks \"{}\" (it names `{forbidden}`)",
                        path.join("::"),
                        rule.text
                    )
                    .expect("writing to a string"),
                }
            }
        }
    }

    for rule in RULES {
        let named = match rule.scope {
            Scope::Only(names) | Scope::AllBut(names) => names,
        };
        for module in named {
            if !modules.iter().any(|m| m == module) {
                writeln!(
                    broken,
                    "rule \"{}\" names `{module}`, which is no module under src/",
                    rule.text
                )
                .expect("writing to a string");
            }
        }
    }
    for ((file, path, reason), used) in EXCEPTIONS.iter().zip(used) {
        if !used {
            writeln!(
                broken,
                "{file} no longer names `{path}` against the rules: remove its exception \
                 ({reason}) from EXCEPTIONS in tests/it/architecture.rs and from ARCHITECTURE.md"
            )
            .expect("writing to a string");
        }
    }
    assert!(
        broken.is_empty(),
        "architecture invariants broken:\n{broken}"
    );
}

/// Top-level modules whose files import each other in one direction only: no file of one
/// imports, directly or through others of it, a file that imports it back. A module's
/// `mod.rs` counts as a file like the others, so its children do not import it when it
/// imports them.
const ACYCLIC: &[&str] = &["demo", "file", "json", "load", "lock", "serve", "state"];

#[test]
fn modules_listed_import_their_own_files_without_a_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut broken = String::new();
    for top in ACYCLIC {
        // Each file of `top` but its unit tests, by the module it defines.
        let modules: Vec<(Vec<String>, String)> = files
            .iter()
            .map(|file| {
                let name = file.strip_prefix(root).expect("under the root");
                name.to_string_lossy().replace('\\', "/")
            })
            .filter(|name| !name.ends_with("/tests.rs"))
            .map(|name| (module_path(&name), name))
            .filter(|(module, _)| module.first().is_some_and(|first| first == top))
            .collect();
        if modules.is_empty() {
            writeln!(
                broken,
                "ACYCLIC names `{top}`, which is no module under src/"
            )
            .expect("writing to a string");
            continue;
        }
        let mut imports: Vec<Vec<usize>> = vec![Vec::new(); modules.len()];
        for (index, (module, name)) in modules.iter().enumerate() {
            let text = std::fs::read_to_string(root.join(name)).expect("source file readable");
            for (_, path) in references(&text, module) {
                if let Some(named) = module_named(&path, module, &modules)
                    && named != index
                    && !imports[index].contains(&named)
                {
                    imports[index].push(named);
                }
            }
        }
        if let Some(cycle) = cycle(&imports) {
            let names: Vec<&str> = cycle.iter().map(|&i| modules[i].1.as_str()).collect();
            writeln!(
                broken,
                "the files of `{top}` import each other in a circle: {}",
                names.join(" -> ")
            )
            .expect("writing to a string");
        }
    }
    assert!(broken.is_empty(), "import cycles:\n{broken}");
}

#[test]
fn a_cycle_is_found_and_a_chain_is_not() {
    assert_eq!(cycle(&[vec![1], vec![2], vec![]]), None);
    assert_eq!(cycle(&[vec![1], vec![2], vec![1]]), Some(vec![1, 2, 1]));
    assert_eq!(cycle(&[vec![], vec![0, 2], vec![0]]), None);
}

#[test]
fn references_expand_use_trees_and_skip_comments_and_strings() {
    let text = r##"
//! `crate::mcp` in a doc comment
use std::{fs, io::{self, Read}};
pub(crate) use super::sibling::Thing;
use crate::auth::{outbound::{self as out}, Principal};
/* crate::upstream in a block comment */
fn f<'a>(x: &'a str) -> char {
    let _ = "crate::transport in a string";
    let _ = r#"axum::Router in a raw string"#;
    ferry::upstream::set_worker(0); // crate::catalog
    'x'
}
"##;
    let found: Vec<String> = references(text, &["curation".to_owned(), "call".to_owned()])
        .into_iter()
        .map(|(line, path)| format!("{line} {}", path.join("::")))
        .collect();
    assert_eq!(
        found,
        [
            "3 std::fs",
            "3 std::io",
            "3 std::io::Read",
            "4 crate::curation::sibling::Thing",
            "5 crate::auth::outbound",
            "5 crate::auth::Principal",
            "10 crate::upstream::set_worker",
        ]
    );
}

impl Rule {
    fn binds(&self, module: &str) -> bool {
        match self.scope {
            Scope::Only(names) => names.contains(&module),
            Scope::AllBut(names) => !names.contains(&module),
        }
    }
}

/// Which of `modules` the path `path`, named in `module`, leads into: the longest module path
/// it starts with (`crate::serve::reload::Reload` leads into `serve::reload`). A path whose
/// first segment is a child of `module` (`use reload::Reload;` in `serve/mod.rs`) is the
/// child's.
fn module_named(
    path: &[String],
    module: &[String],
    modules: &[(Vec<String>, String)],
) -> Option<usize> {
    let absolute: Vec<String> = if path.first().is_some_and(|first| first == "crate") {
        path[1..].to_vec()
    } else {
        module.iter().chain(path).cloned().collect()
    };
    modules
        .iter()
        .enumerate()
        .filter(|(_, (candidate, _))| {
            absolute.len() >= candidate.len() && absolute[..candidate.len()] == candidate[..]
        })
        .max_by_key(|(_, (candidate, _))| candidate.len())
        .map(|(index, _)| index)
}

/// A circle in the graph `imports` (each node's successors), as the nodes it passes through,
/// the first repeated at the end; `None` when there is none.
fn cycle(imports: &[Vec<usize>]) -> Option<Vec<usize>> {
    // 0: not seen, 1: on the current path, 2: done.
    fn visit(
        node: usize,
        imports: &[Vec<usize>],
        state: &mut [u8],
        path: &mut Vec<usize>,
    ) -> Option<Vec<usize>> {
        state[node] = 1;
        path.push(node);
        for &next in &imports[node] {
            match state[next] {
                1 => {
                    let start = path.iter().position(|&n| n == next).expect("on the path");
                    let mut circle = path[start..].to_vec();
                    circle.push(next);
                    return Some(circle);
                }
                0 => {
                    if let Some(circle) = visit(next, imports, state, path) {
                        return Some(circle);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state[node] = 2;
        None
    }
    let mut state = vec![0; imports.len()];
    (0..imports.len()).find_map(|node| {
        if state[node] == 0 {
            visit(node, imports, &mut state, &mut Vec::new())
        } else {
            None
        }
    })
}

fn rust_files(directory: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(directory).expect("source directory readable") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
}

/// The module a file under `src/` defines: `src/auth/mod.rs` is `[auth]`,
/// `src/auth/outbound.rs` `[auth, outbound]`, `src/lib.rs` and `src/main.rs` the root.
fn module_path(name: &str) -> Vec<String> {
    let inner = name.strip_prefix("src/").unwrap_or(name);
    let inner = inner.strip_suffix(".rs").unwrap_or(inner);
    let mut segments: Vec<String> = inner.split('/').map(str::to_owned).collect();
    if matches!(
        segments.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        segments.pop();
    }
    segments
}

fn starts_with(path: &[String], prefix: &str) -> bool {
    let prefix: Vec<&str> = prefix.split("::").collect();
    path.len() >= prefix.len() && path.iter().zip(&prefix).all(|(a, b)| a == b)
}

/// Every path the code names, with its line, made absolute: `crate::`, `ferry::`, `self::`
/// and `super::` resolve against `module`; any other first segment is an external crate (or a
/// child module, which no rule names).
fn references(text: &str, module: &[String]) -> Vec<(usize, Vec<String>)> {
    let tokens = tokens(&code_only(text));
    let mut found = Vec::new();
    let mut index = 0;
    while index < tokens.len() {
        let (line, token) = &tokens[index];
        let previous = index.checked_sub(1).map(|i| tokens[i].1.as_str());
        if token == "use" && previous != Some("::") {
            let mut paths = Vec::new();
            index = use_tree(&tokens, index + 1, Vec::new(), &mut paths);
            found.extend(
                paths
                    .into_iter()
                    .filter_map(|path| absolute(path, module))
                    .map(|p| (*line, p)),
            );
            continue;
        }
        if is_identifier(token)
            && previous != Some("::")
            && tokens.get(index + 1).is_some_and(|(_, t)| t == "::")
        {
            let mut path = vec![token.clone()];
            let mut next = index + 1;
            while tokens.get(next).is_some_and(|(_, t)| t == "::")
                && tokens.get(next + 1).is_some_and(|(_, t)| is_identifier(t))
            {
                path.push(tokens[next + 1].1.clone());
                next += 2;
            }
            if path.len() > 1 {
                found.extend(absolute(path, module).map(|p| (*line, p)));
            }
            index = next;
            continue;
        }
        index += 1;
    }
    found
}

/// Reads one use tree from `index`, pushing each leaf path (`self` names its parent); returns
/// the index after the tree.
fn use_tree(
    tokens: &[(usize, String)],
    mut index: usize,
    prefix: Vec<String>,
    paths: &mut Vec<Vec<String>>,
) -> usize {
    let mut path = prefix;
    while let Some((_, token)) = tokens.get(index) {
        match token.as_str() {
            "::" => index += 1,
            "{" => {
                index += 1;
                loop {
                    match tokens.get(index).map(|(_, t)| t.as_str()) {
                        None => return index,
                        Some("}") => return index + 1,
                        Some(",") => index += 1,
                        Some(_) => index = use_tree(tokens, index, path.clone(), paths),
                    }
                }
            }
            "self" if !path.is_empty() => {
                paths.push(path);
                return skip_alias(tokens, index + 1);
            }
            "*" => {
                paths.push(path);
                return index + 1;
            }
            name if is_identifier(name) => {
                path.push(name.to_owned());
                if tokens.get(index + 1).is_none_or(|(_, t)| t != "::") {
                    paths.push(path);
                    return skip_alias(tokens, index + 1);
                }
                index += 1;
            }
            // `;`, `,`, `}`: the tree ends here.
            _ => {
                if !path.is_empty() {
                    paths.push(path);
                }
                return if token == ";" { index + 1 } else { index };
            }
        }
    }
    index
}

fn skip_alias(tokens: &[(usize, String)], index: usize) -> usize {
    match tokens.get(index) {
        Some((_, token)) if token == "as" => index + 2,
        Some((_, token)) if token == ";" => index + 1,
        _ => index,
    }
}

fn absolute(path: Vec<String>, module: &[String]) -> Option<Vec<String>> {
    let mut rest = path.into_iter().peekable();
    let mut base: Vec<String> = match rest.peek().map(String::as_str) {
        Some("crate" | "ferry") => {
            rest.next();
            Vec::new()
        }
        Some("self") => {
            rest.next();
            module.to_vec()
        }
        Some("super") => {
            let mut base = module.to_vec();
            while rest.peek().is_some_and(|segment| segment == "super") {
                rest.next();
                base.pop()?;
            }
            base
        }
        _ => return Some(rest.collect()),
    };
    base.extend(rest);
    let mut absolute = vec!["crate".to_owned()];
    absolute.extend(base);
    Some(absolute)
}

fn is_identifier(token: &str) -> bool {
    token
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && token != "_"
}

/// Identifiers, `::` and single punctuation characters, each with its line.
fn tokens(code: &str) -> Vec<(usize, String)> {
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\n' {
            line += 1;
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let mut word = c.to_string();
            while let Some(&next) = chars.peek() {
                if !(next.is_ascii_alphanumeric() || next == '_') {
                    break;
                }
                word.push(next);
                chars.next();
            }
            // `r#type` is the identifier `type`.
            if word == "r" && chars.peek() == Some(&'#') {
                chars.next();
                continue;
            }
            tokens.push((line, word));
        } else if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            tokens.push((line, "::".to_owned()));
        } else if !c.is_whitespace() {
            tokens.push((line, c.to_string()));
        }
    }
    tokens
}

/// `text` with comments, string and character literals replaced by spaces (line breaks kept,
/// so lines still count).
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if (c == 'r' || c == 'b') && raw_string_start(&chars, i).is_some() {
            let (hashes, body) = raw_string_start(&chars, i).expect("checked");
            for _ in i..body {
                out.push(' ');
            }
            i = body;
            let closing: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            while i < chars.len() && !chars[i..].starts_with(&closing) {
                out.push(blank(chars[i]));
                i += 1;
            }
            for _ in 0..closing.len().min(chars.len() - i) {
                out.push(' ');
            }
            i += closing.len();
        } else if c == '"' || (c == '\'' && is_char_literal(&chars, i)) {
            i = blank_quoted(&chars, i, &mut out);
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Blanks the string or character literal whose opening quote is at `i` (escapes included);
/// returns the index after its closing quote.
fn blank_quoted(chars: &[char], mut i: usize, out: &mut String) -> usize {
    let quote = chars[i];
    out.push(' ');
    i += 1;
    while i < chars.len() && chars[i] != quote {
        if chars[i] == '\\' {
            out.push(' ');
            i += 1;
        }
        if let Some(&c) = chars.get(i) {
            out.push(blank(c));
            i += 1;
        }
    }
    out.push(' ');
    i + 1
}

/// A line break stays, so that lines still count; any other character becomes a space.
fn blank(c: char) -> char {
    if c == '\n' { '\n' } else { ' ' }
}

/// At `r"`, `r#"`, `br"` (not inside an identifier such as `for"`): the number of `#`s and
/// where the body starts.
fn raw_string_start(chars: &[char], i: usize) -> Option<(usize, usize)> {
    if i > 0 && (chars[i - 1].is_ascii_alphanumeric() || chars[i - 1] == '_') {
        return None;
    }
    let mut j = i + usize::from(chars[i] == 'b');
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|&&c| c == '#').count();
    (chars.get(j + hashes) == Some(&'"')).then_some((hashes, j + hashes + 1))
}

/// A `'` opens a character literal (`'x'`, `'\n'`, `'\u{1F600}'`) rather than a lifetime.
fn is_char_literal(chars: &[char], i: usize) -> bool {
    match chars.get(i + 1) {
        Some('\\') => true,
        Some(_) => chars.get(i + 2) == Some(&'\''),
        None => false,
    }
}

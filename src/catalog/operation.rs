//! Reading operations out of a document, whichever dialect it is written in: paths, path
//! items (which may be `$ref`s), parameters merged from both levels, request bodies, and
//! security requirements. Swagger 2.0's `body` and `formData` parameters become a body here.

use serde_json::{Map, Value};

use crate::openapi::{Document, FileId, SpecVersion, escape_token};

/// The HTTP methods an OpenAPI path item can hold, in the order documents list them.
pub const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// One operation: where it is and what it says.
#[derive(Debug, Clone)]
pub struct Operation<'a> {
    pub method: &'a str,
    pub path: &'a str,
    /// The file the operation object is written in (a path item may live in another file).
    pub file: FileId,
    /// JSON pointer to the operation inside `file`.
    pub pointer: String,
    pub value: &'a Map<String, Value>,
    /// Parameters of the path item, then the operation's (which override by name and place).
    pub parameters: Vec<Parameter<'a>>,
    pub operation_id: Option<&'a str>,
    pub tags: Vec<&'a str>,
    /// Parameters that could not be read (file, pointer, message): the operation cannot be
    /// a tool, since its requests would miss them.
    pub problems: Vec<(FileId, String, String)>,
}

/// A parameter object after `$ref`s are followed, with the file its schema refs resolve in.
#[derive(Debug, Clone)]
pub struct Parameter<'a> {
    pub file: FileId,
    pub pointer: String,
    pub value: &'a Map<String, Value>,
    pub name: &'a str,
    pub location: &'a str,
}

impl Operation<'_> {
    /// `GET /pets/{petId}`, the label used in messages and curation selectors.
    pub fn label(&self) -> String {
        format!("{} {}", self.method.to_ascii_uppercase(), self.path)
    }

    pub fn summary(&self) -> Option<&str> {
        self.value
            .get("summary")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
    }

    pub fn description(&self) -> Option<&str> {
        self.value
            .get("description")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
    }
}

/// Every operation of the document, in document order. Path items that cannot be read are
/// returned beside as (pointer, message); a parameter that cannot be read stays with its
/// operation (`Operation::problems`).
pub fn list<'a>(
    document: &'a Document,
    problems: &mut Vec<(String, String)>,
) -> Vec<Operation<'a>> {
    let mut operations = Vec::new();
    let Some(paths) = document.root().get("paths").and_then(Value::as_object) else {
        return operations;
    };
    for (path, item) in paths {
        let item_pointer = format!("/paths/{}", escape_token(path));
        let (file, item_pointer, item) = match follow(document, FileId(0), &item_pointer, item) {
            Ok(found) => found,
            Err(message) => {
                problems.push((item_pointer, format!("path item {path}: {message}")));
                continue;
            }
        };
        let Some(item) = item.as_object() else {
            continue;
        };
        let mut shared = Vec::new();
        let mut shared_problems = Vec::new();
        read_parameters(
            document,
            file,
            &format!("{item_pointer}/parameters"),
            item.get("parameters"),
            &mut shared,
            &mut shared_problems,
        );
        for method in METHODS {
            let Some(written) = item.get(*method) else {
                continue;
            };
            let pointer = format!("{item_pointer}/{method}");
            // Some documents (DigitalOcean's) keep each operation in a file of its own and
            // `$ref` it from the path item; the operation is then read where it lives.
            let (file, pointer, value) = match follow(document, file, &pointer, written) {
                Ok((file, pointer, Value::Object(value))) => (file, pointer, value),
                Ok(_) => continue,
                Err(message) => {
                    problems.push((
                        pointer,
                        format!(
                            "operation {} {path}: {message}",
                            method.to_ascii_uppercase()
                        ),
                    ));
                    continue;
                }
            };
            let mut parameters = shared.clone();
            let mut own = Vec::new();
            let mut own_problems = shared_problems.clone();
            read_parameters(
                document,
                file,
                &format!("{pointer}/parameters"),
                value.get("parameters"),
                &mut own,
                &mut own_problems,
            );
            for parameter in own {
                parameters.retain(|p: &Parameter| {
                    !(p.name == parameter.name && p.location == parameter.location)
                });
                parameters.push(parameter);
            }
            let tags = value
                .get("tags")
                .and_then(Value::as_array)
                .map(|tags| tags.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            operations.push(Operation {
                method,
                path,
                file,
                pointer,
                value,
                parameters,
                operation_id: value.get("operationId").and_then(Value::as_str),
                tags,
                problems: own_problems,
            });
        }
    }
    operations
}

/// Follows a chain of `$ref`s from `value` (found at `pointer` in `file`) to the object it
/// names, returning where that is.
pub fn follow<'a>(
    document: &'a Document,
    mut file: FileId,
    pointer: &str,
    mut value: &'a Value,
) -> Result<(FileId, String, &'a Value), String> {
    let mut pointer = pointer.to_string();
    for _ in 0..32 {
        let Some(reference) = value.get("$ref") else {
            return Ok((file, pointer, value));
        };
        let Some(reference) = reference.as_str() else {
            return Err("`$ref` is not a string (in YAML, quote a `#/...` reference)".to_string());
        };
        let target = document
            .resolve(file, reference)
            .map_err(|e| e.to_string())?;
        file = target.file;
        pointer = target.pointer.to_string();
        value = target.value;
    }
    Err("`$ref` chain is too long or circular".to_string())
}

fn read_parameters<'a>(
    document: &'a Document,
    file: FileId,
    pointer: &str,
    list: Option<&'a Value>,
    out: &mut Vec<Parameter<'a>>,
    problems: &mut Vec<(FileId, String, String)>,
) {
    let Some(list) = list.and_then(Value::as_array) else {
        return;
    };
    for (index, entry) in list.iter().enumerate() {
        let entry_pointer = format!("{pointer}/{index}");
        match follow(document, file, &entry_pointer, entry) {
            Ok((file, pointer, Value::Object(value))) => {
                let name = value.get("name").and_then(Value::as_str);
                let location = value.get("in").and_then(Value::as_str);
                match (name, location) {
                    (Some(name), Some(location)) => out.push(Parameter {
                        file,
                        pointer,
                        value,
                        name,
                        location,
                    }),
                    _ => problems.push((
                        file,
                        entry_pointer,
                        "parameter without a `name` and `in`".to_string(),
                    )),
                }
            }
            Ok(_) => problems.push((
                file,
                entry_pointer,
                "parameter is not an object".to_string(),
            )),
            Err(message) => problems.push((file, entry_pointer, message)),
        }
    }
}

/// The security requirements in force for an operation: its own, or the document's.
pub fn security<'a>(document: &'a Document, operation: &Operation<'a>) -> Vec<&'a str> {
    let requirements = operation
        .value
        .get("security")
        .or_else(|| document.root().get("security"));
    let mut names = Vec::new();
    for requirement in requirements.and_then(Value::as_array).into_iter().flatten() {
        for name in requirement.as_object().into_iter().flat_map(Map::keys) {
            if !names.contains(&name.as_str()) {
                names.push(name.as_str());
            }
        }
    }
    names
}

/// The OAuth 2 / OpenID Connect scopes an operation's security requirements ask for: one
/// entry per alternative (a requirement object) that names such a scheme, holding every
/// scope it lists for them. Alternatives naming only other schemes (API keys, HTTP
/// authentication) ask for no scope and are left out; so an empty result means the document
/// asks for none. Swagger 2.0 calls OAuth 2 `oauth2` too.
pub fn security_scopes(document: &Document, operation: &Operation<'_>) -> Vec<Vec<String>> {
    let requirements = operation
        .value
        .get("security")
        .or_else(|| document.root().get("security"));
    let mut alternatives: Vec<Vec<String>> = Vec::new();
    for requirement in requirements.and_then(Value::as_array).into_iter().flatten() {
        let mut scopes = Vec::new();
        let mut scoped = false;
        for (name, listed) in requirement.as_object().into_iter().flatten() {
            let kind = security_scheme(document, name)
                .and_then(|scheme| scheme.get("type"))
                .and_then(Value::as_str);
            if !matches!(kind, Some("oauth2" | "openIdConnect")) {
                continue;
            }
            scoped = true;
            for scope in listed
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if !scopes.iter().any(|s| s == scope) {
                    scopes.push(scope.to_string());
                }
            }
        }
        scopes.sort();
        if scoped && !alternatives.contains(&scopes) {
            alternatives.push(scopes);
        }
    }
    alternatives
}

/// A security scheme's definition by name, following `$ref`s.
pub fn security_scheme<'a>(document: &'a Document, name: &str) -> Option<&'a Map<String, Value>> {
    let root = document.root();
    let (pointer, scheme) = match document.version {
        SpecVersion::Swagger2 => (
            "/securityDefinitions",
            root.get("securityDefinitions")?.get(name)?,
        ),
        _ => (
            "/components/securitySchemes",
            root.get("components")?.get("securitySchemes")?.get(name)?,
        ),
    };
    let pointer = format!("{pointer}/{}", escape_token(name));
    follow(document, FileId(0), &pointer, scheme)
        .ok()?
        .2
        .as_object()
}

//! Reading operations out of a document, whichever dialect it is written in: paths, path
//! items (which may be `$ref`s), parameters merged from both levels, request bodies, and
//! security requirements. Swagger 2.0's `body` and `formData` parameters become a body here.
//! OpenAPI 3.2 adds a path item's `query` field and its `additionalOperations`, one
//! operation per method, each named as it is sent.

use serde_json::{Map, Value};

use crate::openapi::{Document, FileId, SpecVersion, escape_token};

/// The fixed fields of a path item that hold an operation, each with the method it is sent
/// with, in the order documents list them; `query` is OpenAPI 3.2's.
pub const METHODS: &[(&str, &str)] = &[
    ("get", "GET"),
    ("put", "PUT"),
    ("post", "POST"),
    ("delete", "DELETE"),
    ("options", "OPTIONS"),
    ("head", "HEAD"),
    ("patch", "PATCH"),
    ("trace", "TRACE"),
    ("query", "QUERY"),
];

/// The stable codes of the problems this module finds (see `Diagnostic::code`).
pub const FIXED_METHOD_CODE: &str = "additional-operation-fixed-method";
pub const METHOD_TOKEN_CODE: &str = "additional-operation-method-not-token";

/// One operation: where it is and what it says.
#[derive(Debug, Clone)]
pub struct Operation<'a> {
    /// The HTTP method as it is sent: `GET` for a path item's `get`, the key as written for
    /// an `additionalOperations` entry (methods are case-sensitive).
    pub method: &'a str,
    /// Whether it is an `additionalOperations` entry rather than a fixed field.
    pub additional: bool,
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
    /// What makes it impossible to call as written (a parameter that cannot be read, a method
    /// that cannot be sent): it cannot be a tool, since its requests would be wrong.
    pub problems: Vec<Problem>,
}

/// A problem of one operation: where it is written and what it says, with a stable code for
/// the kinds that have one (`Diagnostic::code`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: FileId,
    /// JSON pointer inside `file`.
    pub pointer: String,
    pub message: String,
    pub code: Option<&'static str>,
}

impl Problem {
    pub fn new(file: FileId, pointer: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            file,
            pointer: pointer.into(),
            message: message.into(),
            code: None,
        }
    }

    /// The same problem, named by `code`.
    pub fn with_code(mut self, code: &'static str) -> Problem {
        self.code = Some(code);
        self
    }
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
        format!("{} {}", self.method, self.path)
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

/// Every operation of the document, in document order: each path item's fixed fields, then
/// (OpenAPI 3.2) its `additionalOperations`. Path items that cannot be read are returned
/// beside as (pointer, message); a parameter that cannot be read stays with its operation
/// (`Operation::problems`), as does an `additionalOperations` key that cannot be sent as a
/// method or that a fixed field already holds.
pub fn list<'a>(
    document: &'a Document,
    problems: &mut Vec<(String, String)>,
) -> Vec<Operation<'a>> {
    let mut operations = Vec::new();
    let Some(paths) = document.root().get("paths").and_then(Value::as_object) else {
        return operations;
    };
    let version_32 = document.version == SpecVersion::OpenApi32;
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
        let path_item = PathItem {
            document,
            path,
            shared: &shared,
            shared_problems: &shared_problems,
        };
        for (key, method) in METHODS {
            if *key == "query" && !version_32 {
                continue;
            }
            let Some(written) = item.get(*key) else {
                continue;
            };
            let pointer = format!("{item_pointer}/{key}");
            if let Some(operation) =
                path_item.operation(file, pointer, written, method, false, problems)
            {
                operations.push(operation);
            }
        }
        let additional = item
            .get("additionalOperations")
            .and_then(Value::as_object)
            .filter(|_| version_32);
        for (method, written) in additional.into_iter().flatten() {
            let pointer = format!(
                "{item_pointer}/additionalOperations/{}",
                escape_token(method)
            );
            let Some(mut operation) =
                path_item.operation(file, pointer.clone(), written, method, true, problems)
            else {
                continue;
            };
            if let Some(problem) = method_problem(method, file, &pointer) {
                operation.problems.insert(0, problem);
            }
            operations.push(operation);
        }
    }
    operations
}

/// What a path item's operations share: its parameters and what could not be read of them.
struct PathItem<'a, 's> {
    document: &'a Document,
    path: &'a str,
    shared: &'s [Parameter<'a>],
    shared_problems: &'s [Problem],
}

impl<'a> PathItem<'a, '_> {
    /// The operation `written` at `pointer` in `file`, sent with `method`, its parameters
    /// merged with the path item's; `None` (with a problem when it cannot be read) when it is
    /// no operation object.
    fn operation(
        &self,
        file: FileId,
        pointer: String,
        written: &'a Value,
        method: &'a str,
        additional: bool,
        problems: &mut Vec<(String, String)>,
    ) -> Option<Operation<'a>> {
        // Some documents (DigitalOcean's) keep each operation in a file of its own and `$ref`
        // it from the path item; the operation is then read where it lives.
        let (file, pointer, value) = match follow(self.document, file, &pointer, written) {
            Ok((file, pointer, Value::Object(value))) => (file, pointer, value),
            Ok(_) => return None,
            Err(message) => {
                problems.push((
                    pointer,
                    format!("operation {method} {}: {message}", self.path),
                ));
                return None;
            }
        };
        let mut parameters = self.shared.to_vec();
        let mut own = Vec::new();
        let mut own_problems = self.shared_problems.to_vec();
        read_parameters(
            self.document,
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
        Some(Operation {
            method,
            additional,
            path: self.path,
            file,
            pointer,
            value,
            parameters,
            operation_id: value.get("operationId").and_then(Value::as_str),
            tags,
            problems: own_problems,
        })
    }
}

/// Why an `additionalOperations` key cannot be sent as written: it is no HTTP method token,
/// or it names a method a fixed field of the path item is for.
fn method_problem(method: &str, file: FileId, pointer: &str) -> Option<Problem> {
    if !is_token(method) {
        return Some(
            Problem::new(
                file,
                pointer,
                format!(
                    "`additionalOperations` key {method:?} is not an HTTP method: a method is a token of letters, digits and !#$%&'*+-.^_`|~ (RFC 9110)"
                ),
            )
            .with_code(METHOD_TOKEN_CODE),
        );
    }
    let (key, _) = METHODS.iter().find(|(_, fixed)| *fixed == method)?;
    Some(
        Problem::new(
            file,
            pointer,
            format!(
                "`additionalOperations` MUST NOT contain any entry for the methods that can be defined by other fixed fields with Operation Object values: describe {method} with the path item's `{key}` field"
            ),
        )
        .with_code(FIXED_METHOD_CODE),
    )
}

/// Whether `text` is an RFC 9110 token (`1*tchar`), as a method must be.
pub fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
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
    problems: &mut Vec<Problem>,
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
                    _ => problems.push(Problem::new(
                        file,
                        entry_pointer,
                        "parameter without a `name` and `in`",
                    )),
                }
            }
            Ok(_) => problems.push(Problem::new(
                file,
                entry_pointer,
                "parameter is not an object",
            )),
            Err(message) => problems.push(Problem::new(file, entry_pointer, message)),
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

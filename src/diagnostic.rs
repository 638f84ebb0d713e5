//! Problems found while reading and compiling, each with where it is.

use std::fmt;

use serde::Serialize;

/// One problem, with its severity and location. Compiling collects all of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    pub location: Location,
    /// The operations it concerns, each as `METHOD /path`: none, one, or (a name collision)
    /// several.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub operations: Vec<String>,
    /// A stable name for the kind of problem, for programs that read the JSON report (the
    /// words of `message` may change); the kinds that have one are listed in the reference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
    /// The API it concerns, by its id under the curation's `apis:`; `None` in a file without
    /// `apis:`, or for what concerns the whole server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// Where a problem is: a JSON pointer into a document file, or a key path in the curation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "in", rename_all = "lowercase")]
pub enum Location {
    /// `file` is relative to the root document's directory (empty for the root itself).
    Document { file: String, pointer: String },
    /// A dotted key path such as `tools.createPet.annotations`.
    Curation { path: String },
    /// The command line or the configuration as a whole.
    General,
}

impl Diagnostic {
    pub fn error(location: Location, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            location,
            operations: Vec::new(),
            code: None,
            api: None,
            message: message.into(),
        }
    }

    pub fn warning(location: Location, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            location,
            operations: Vec::new(),
            code: None,
            api: None,
            message: message.into(),
        }
    }

    /// The same problem, named by `code` (see [`Diagnostic::code`]).
    pub fn with_code(mut self, code: &'static str) -> Self {
        self.code = Some(code);
        self
    }

    pub fn with_operation(mut self, operation: impl Into<String>) -> Self {
        self.operations.push(operation.into());
        self
    }

    /// The diagnostic as it concerns the API `id` of a file with `apis:`: found in that API's
    /// part of the curation (whose paths are written from the part's own root) or in its
    /// document. An empty `id`, the one API of a file without `apis:`, changes nothing.
    pub fn within_api(mut self, id: &str) -> Self {
        if id.is_empty() {
            return self;
        }
        if let Location::Curation { path } = &mut self.location {
            *path = match path.as_str() {
                "" => format!("apis.{id}"),
                rest => format!("apis.{id}.{rest}"),
            };
        }
        self.api = Some(id.to_string());
        self
    }

    /// Whether it concerns the operation `METHOD /path`.
    pub fn concerns(&self, operation: &str) -> bool {
        self.operations.iter().any(|o| o == operation)
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl Location {
    pub fn document(file: &str, pointer: impl Into<String>) -> Self {
        Location::Document {
            file: file.to_string(),
            pointer: pointer.into(),
        }
    }

    pub fn curation(path: impl Into<String>) -> Self {
        Location::Curation { path: path.into() }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Document { file, pointer } if file.is_empty() => {
                write!(f, "openapi#{pointer}")
            }
            Location::Document { file, pointer } => write!(f, "{file}#{pointer}"),
            Location::Curation { path } => write!(f, "curation:{path}"),
            Location::General => f.write_str("config"),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        match self.code {
            Some(code) => write!(f, "{severity}[{code}]: {}", self.message)?,
            None => write!(f, "{severity}: {}", self.message)?,
        }
        if !self.operations.is_empty() {
            write!(f, " ({})", self.operations.join(", "))?;
        }
        match (&self.api, &self.location) {
            (Some(api), Location::Document { .. }) => write!(f, "\n  --> {api}: {}", self.location),
            _ => write!(f, "\n  --> {}", self.location),
        }
    }
}

//! What a document says beside its operations that changes how ferry reads it: a
//! `jsonSchemaDialect` other than 2020-12, a `$self` that cannot be a base URI. Each is a
//! warning with a stable code, given once per compile.

use crate::diagnostic::{Diagnostic, Location};
use crate::openapi::{Document, SpecVersion};

/// The stable codes of the warnings [`document_notes`] gives (`Diagnostic::code`).
pub const DIALECT_CODE: &str = "json-schema-dialect-not-read";
pub const SELF_CODE: &str = "self-not-a-base";

/// The dialects every Schema Object is read in: JSON Schema 2020-12, and OpenAPI's own
/// dialects of it (whose vocabulary adds only keywords ferry leaves out of a tool's schema).
const DIALECTS: &[&str] = &[
    "https://json-schema.org/draft/2020-12/schema",
    "https://spec.openapis.org/oas/3.1/dialect/",
    "https://spec.openapis.org/oas/3.2/dialect/",
];

/// What the document says beside its operations that changes how it is read, where ferry
/// reads it otherwise: a `jsonSchemaDialect` other than 2020-12 (schemas are read as
/// 2020-12 all the same), a `$self` that cannot be a base URI (references resolve against
/// where the file was read).
pub(super) fn document_notes(document: &Document, diagnostics: &mut Vec<Diagnostic>) {
    let root = &document.file(crate::openapi::FileId(0)).name;
    if document.version.is_json_schema_2020()
        && let Some(dialect) = document.root().get("jsonSchemaDialect")
        && !dialect
            .as_str()
            .is_some_and(|d| DIALECTS.iter().any(|known| d.starts_with(known)))
    {
        diagnostics.push(
            Diagnostic::warning(
                Location::document(root, "/jsonSchemaDialect"),
                format!(
                    "`jsonSchemaDialect` names {dialect}: ferry reads every Schema Object as JSON Schema 2020-12 (OpenAPI's dialect), in which its keywords may mean something else or nothing"
                ),
            )
            .with_code(DIALECT_CODE),
        );
    }
    if document.version != SpecVersion::OpenApi32 {
        return;
    }
    for file in &document.files {
        if let Some(Err(why)) = crate::openapi::declared_self(&file.value) {
            diagnostics.push(
                Diagnostic::warning(
                    Location::document(&file.name, "/$self"),
                    format!(
                        "`$self` is not this document's base URI, since {why}: its relative references resolve against where it was read, and no reference reaches it by `$self`"
                    ),
                )
                .with_code(SELF_CODE),
            );
        }
    }
}

//! Where an HTTP parameter goes and how its value is written (OpenAPI's `in` and `style`): a
//! leaf that the curation reader and the catalog both name, so neither imports the other
//! for it.

use serde::Serialize;

/// A parameter's `in`: the part of the request that carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ParameterLocation {
    Path,
    Query,
    /// OpenAPI 3.2's `querystring`: one value that is the whole query string.
    QueryString,
    Header,
    Cookie,
}

impl ParameterLocation {
    /// The name OpenAPI's `in` gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            ParameterLocation::Path => "path",
            ParameterLocation::Query => "query",
            ParameterLocation::QueryString => "querystring",
            ParameterLocation::Header => "header",
            ParameterLocation::Cookie => "cookie",
        }
    }
}

/// A parameter's `style`: how a value, list or object is written as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ParameterStyle {
    Simple,
    Label,
    Matrix,
    Form,
    SpaceDelimited,
    PipeDelimited,
    DeepObject,
    /// OpenAPI 3.2's `cookie` style: as `form`, but following the `Cookie` header's syntax,
    /// with nothing percent-encoded.
    Cookie,
}

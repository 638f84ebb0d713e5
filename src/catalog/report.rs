//! What became of each operation of a document, for `ferry check`: chosen or not, served or
//! why not.

use serde::Serialize;

/// What became of one operation, for `ferry check`'s table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationReport {
    pub method: String,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    /// The operation's own summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Whether the curation (or `--all`, or an honoured `x-mcp`) chose it.
    pub chosen: bool,
    /// Why it was chosen or left out, in a few words.
    pub choice: String,
    /// The tool name it has (or would have).
    pub tool: String,
    /// The API it belongs to, by its id under the curation's `apis:`; `None` in a file
    /// without `apis:`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// Whether it is served, and if not, the first thing that stopped it.
    pub status: OperationStatus,
    /// Why it is not served, when it is not: the choice that left it out, why it cannot be a
    /// tool, or the collision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why it cannot be a tool, when it cannot, chosen or not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ineligible: Option<String>,
    /// The arguments the curation left out (`arguments: {omit: [...]}`): a declared loss.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub omitted: Vec<String>,
    /// About how many tokens of definition leaving them out saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_saved: Option<usize>,
    /// About how many tokens the served tool's definition costs (`trim::tool_tokens`),
    /// counted once when it is compiled; `None` when it is not served.
    #[serde(skip)]
    pub tokens: Option<usize>,
    /// The size in bytes of the output schema the served tool declares (its 2026-07-28
    /// text); `None` when it declares none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema_bytes: Option<usize>,
}

impl OperationReport {
    /// The operation as `ferry check` names it: `METHOD path`, led by `api: ` when the
    /// curation lists several APIs.
    pub fn label(&self) -> String {
        match &self.api {
            Some(api) => format!("{api}: {} {}", self.method, self.path),
            None => format!("{} {}", self.method, self.path),
        }
    }
}

/// What became of an operation. A chosen one is served, ineligible or lost to a name
/// collision; one left out is off (a `tools` entry or `x-mcp` says `false`), excluded (a tag
/// marked `false`) or not chosen (nothing names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum OperationStatus {
    #[serde(rename = "served")]
    Served,
    #[serde(rename = "ineligible")]
    Ineligible,
    #[serde(rename = "collision")]
    Collision,
    #[serde(rename = "off")]
    Off,
    #[serde(rename = "excluded")]
    Excluded,
    #[serde(rename = "not chosen")]
    NotChosen,
}

impl OperationStatus {
    /// The word `ferry check` prints, the same as the JSON form's.
    pub fn as_str(self) -> &'static str {
        match self {
            OperationStatus::Served => "served",
            OperationStatus::Ineligible => "ineligible",
            OperationStatus::Collision => "collision",
            OperationStatus::Off => "off",
            OperationStatus::Excluded => "excluded",
            OperationStatus::NotChosen => "not chosen",
        }
    }
}

//! How a tool call becomes one HTTP request: the plan compile makes of an operation (its
//! method, path template, parameters, body and the credentials it asks for), which the
//! upstream client fills from the arguments.

use crate::parameter::{ParameterLocation, ParameterStyle};

/// How a tool call becomes one HTTP request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestPlan {
    pub method: http::Method,
    /// The path template as the document writes it, e.g. `/pets/{petId}`.
    pub path: String,
    /// Path, query, header and cookie parameters, in document order.
    pub parameters: Vec<ParameterPlan>,
    pub body: Option<BodyPlan>,
    /// Credentials the operation's security requirements ask for; filled by ferry from its
    /// own upstream configuration, never by the caller.
    pub credentials: Vec<CredentialSlot>,
}

impl RequestPlan {
    /// A request with no body and no credentials.
    pub fn new(
        method: http::Method,
        path: impl Into<String>,
        parameters: Vec<ParameterPlan>,
    ) -> RequestPlan {
        RequestPlan {
            method,
            path: path.into(),
            parameters,
            body: None,
            credentials: Vec::new(),
        }
    }
}

/// One parameter: which argument feeds it and how it is serialized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParameterPlan {
    /// Property name in the tool's input schema.
    pub argument: String,
    /// Name on the wire.
    pub name: String,
    pub location: ParameterLocation,
    pub style: ParameterStyle,
    pub explode: bool,
    pub allow_reserved: bool,
    pub required: bool,
    /// The parameter uses `content` with a JSON media type: the value is sent as JSON text.
    pub json_content: bool,
}

impl ParameterPlan {
    /// A parameter fed by the argument of its own name, in `style`; required in the path (as
    /// OpenAPI demands there), optional elsewhere.
    pub fn new(
        name: impl Into<String>,
        location: ParameterLocation,
        style: ParameterStyle,
        explode: bool,
    ) -> ParameterPlan {
        let name = name.into();
        ParameterPlan {
            argument: name.clone(),
            name,
            location,
            style,
            explode,
            allow_reserved: false,
            required: location == ParameterLocation::Path,
            json_content: false,
        }
    }
}

/// The request body: its media type and where its value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyPlan {
    /// The media type sent as `Content-Type`, as the document writes it.
    pub media_type: String,
    pub encoding: BodyEncoding,
    pub placement: BodyPlacement,
    pub required: bool,
    /// Per-property encodings of a form or multipart body (the media type's `encoding`
    /// map), for the properties that have one; the rest use the defaults (form: `form`
    /// style, exploded; multipart: JSON for objects and arrays, text otherwise).
    pub fields: Vec<FieldEncoding>,
}

/// How one property of a form or multipart body is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldEncoding {
    /// The property name (and argument name, since form bodies are merged).
    pub name: String,
    /// The part's `Content-Type` (multipart only).
    pub content_type: Option<String>,
    pub style: ParameterStyle,
    pub explode: bool,
    pub allow_reserved: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyEncoding {
    /// `application/json` and `+json` types: the value serialized as JSON.
    Json,
    /// `application/x-www-form-urlencoded`: an object's properties as form fields.
    Form,
    /// `multipart/form-data`: one part per property; the named properties are files,
    /// carried as base64 strings in the arguments and sent as raw bytes.
    Multipart { files: Vec<String> },
    /// `text/*`: a string sent as it is.
    Text,
    /// Any other type: a base64 string argument, decoded and sent as raw bytes.
    Binary,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyPlacement {
    /// The body is the value of this one argument.
    Argument(String),
    /// The body is an object made of these top-level arguments (the body's own properties,
    /// merged beside the parameters).
    Merged(Vec<String>),
}

/// A credential the upstream expects, as the document's security schemes describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialSlot {
    /// The security scheme's name in the document.
    pub scheme: String,
    pub kind: CredentialKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialKind {
    /// An `apiKey` scheme: a named header, query item or cookie.
    ApiKey {
        location: ParameterLocation,
        name: String,
    },
    /// `http` bearer, OAuth 2 and OpenID Connect: `Authorization: Bearer`.
    Bearer,
    /// `http` basic.
    Basic,
    /// Any other `http` scheme, by its name.
    Http(String),
}

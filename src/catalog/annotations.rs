//! Which annotations a tool may carry. A method justifies some guarantees; an annotation
//! state asserts some; a state is sound when it asserts no more than the method justifies.
//!
//! Methods are named as they are sent (`GET`, `QUERY`, `PROPFIND`): HTTP methods are
//! case-sensitive, so `propfind` is another method, one nobody registered.
//!
//! `readOnlyHint: true` asserts READ_ONLY (and then the other two hints assert nothing);
//! otherwise `destructiveHint: false` asserts ADDITIVE_ONLY and `idempotentHint: true`
//! asserts IDEMPOTENT (absent hints take MCP's defaults). GET, HEAD and QUERY justify all
//! three, PUT and DELETE justify IDEMPOTENT, POST, PATCH, OPTIONS and TRACE nothing; any other
//! method (an OpenAPI 3.2 `additionalOperations` key) justifies what the IANA HTTP Method
//! Registry says: all three if registered safe, IDEMPOTENT if registered idempotent, nothing
//! otherwise (the registry's lists are here, and retries read them too). ferry emits the
//! strongest sound state: read-only where all three are justified; `readOnlyHint: false,
//! idempotentHint: true` where IDEMPOTENT alone is; no annotations otherwise. A curation
//! override that asserts more than the method justifies is an error unless the entry has
//! `because:`; then the tool is served, `ferry check` lists it as "asserted by curation, not
//! justified by the method", and `--strict` fails on it. Weakening a claim is always sound.
//! `openWorldHint` and `title` are only what the curation says.

use crate::curation::AnnotationOverrides;

use super::{AnnotationBasis, Annotations};

/// A guarantee an annotation state can assert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guarantee {
    ReadOnly,
    AdditiveOnly,
    Idempotent,
}

/// The outcome of applying the curation's overrides to what the method gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub annotations: Annotations,
    pub basis: AnnotationBasis,
    /// What the final state asserts beyond the method's justification (empty when sound).
    pub unjustified: Vec<Guarantee>,
}

/// What the IANA HTTP Method Registry says a method is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registered {
    /// Safe, and so idempotent too: a request asks for no change.
    Safe,
    /// Idempotent but not safe: sending it twice changes no more than sending it once.
    Idempotent,
    /// Neither, or not registered at all.
    Neither,
}

/// The safe methods of the IANA HTTP Method Registry. Every safe method is idempotent too.
const SAFE_METHODS: &[&str] = &[
    "GET", "HEAD", "OPTIONS", "PRI", "PROPFIND", "QUERY", "REPORT", "SEARCH", "TRACE",
];

/// The methods of the IANA HTTP Method Registry that are idempotent but not safe. The rest
/// of the registry (`CONNECT`, `LOCK`, `PATCH`, `POST`, and `*`, which is reserved) is
/// neither.
const IDEMPOTENT_METHODS: &[&str] = &[
    "ACL",
    "BASELINE-CONTROL",
    "BIND",
    "CHECKIN",
    "CHECKOUT",
    "COPY",
    "DELETE",
    "LABEL",
    "LINK",
    "MERGE",
    "MKACTIVITY",
    "MKCALENDAR",
    "MKCOL",
    "MKREDIRECTREF",
    "MKWORKSPACE",
    "MOVE",
    "ORDERPATCH",
    "PROPPATCH",
    "PUT",
    "REBIND",
    "UNBIND",
    "UNCHECKOUT",
    "UNLINK",
    "UNLOCK",
    "UPDATE",
    "UPDATEREDIRECTREF",
    "VERSION-CONTROL",
];

/// What the registry says of `method`, as sent.
pub fn registered(method: &str) -> Registered {
    if SAFE_METHODS.contains(&method) {
        Registered::Safe
    } else if IDEMPOTENT_METHODS.contains(&method) {
        Registered::Idempotent
    } else {
        Registered::Neither
    }
}

/// Whether a request with `method` may be sent again when it may have reached the server
/// already: the registry says it is idempotent (RFC 9110 §9.2.2).
pub fn idempotent(method: &str) -> bool {
    registered(method) != Registered::Neither
}

const EVERY: &[Guarantee] = &[
    Guarantee::ReadOnly,
    Guarantee::AdditiveOnly,
    Guarantee::Idempotent,
];

/// What an HTTP method, as sent, justifies on its own. The methods of a path item's fixed
/// fields: GET, HEAD and QUERY everything, PUT and DELETE idempotence, the rest (POST, PATCH,
/// OPTIONS, TRACE) nothing: OPTIONS and TRACE, though registered safe, are claimed no more
/// for than POST is. Any other method (an OpenAPI 3.2 `additionalOperations` entry) is
/// judged by the registry alone: read-only when it is registered safe, idempotent when it is
/// registered idempotent, nothing otherwise.
pub fn justified(method: &str) -> &'static [Guarantee] {
    match method {
        "GET" | "HEAD" | "QUERY" => EVERY,
        "PUT" | "DELETE" => &[Guarantee::Idempotent],
        "POST" | "PATCH" | "OPTIONS" | "TRACE" => &[],
        other => match registered(other) {
            Registered::Safe => EVERY,
            Registered::Idempotent => &[Guarantee::Idempotent],
            Registered::Neither => &[],
        },
    }
}

/// The strongest sound state for a method: read-only where it justifies read-only (GET,
/// HEAD, QUERY), `readOnlyHint: false, idempotentHint: true` where it justifies idempotence
/// alone (PUT, DELETE), no annotations at all otherwise.
pub fn from_method(method: &str) -> Annotations {
    let justified = justified(method);
    if justified.contains(&Guarantee::ReadOnly) {
        Annotations {
            read_only_hint: Some(true),
            ..Annotations::default()
        }
    } else if justified.contains(&Guarantee::Idempotent) {
        Annotations {
            read_only_hint: Some(false),
            idempotent_hint: Some(true),
            ..Annotations::default()
        }
    } else {
        Annotations::default()
    }
}

/// What a state asserts, with MCP's defaults for absent hints (readOnly false, destructive
/// true, idempotent false).
pub fn asserted(annotations: &Annotations) -> Vec<Guarantee> {
    if annotations.read_only_hint == Some(true) {
        return vec![Guarantee::ReadOnly];
    }
    let mut guarantees = Vec::new();
    if annotations.destructive_hint == Some(false) {
        guarantees.push(Guarantee::AdditiveOnly);
    }
    if annotations.idempotent_hint == Some(true) {
        guarantees.push(Guarantee::Idempotent);
    }
    guarantees
}

/// Applies `overrides` to the state of `method` (as sent) and judges the result.
pub fn decide(method: &str, overrides: &AnnotationOverrides) -> Decision {
    let mut annotations = from_method(method);
    let changed = overrides != &AnnotationOverrides::default();
    if let Some(v) = overrides.read_only_hint {
        annotations.read_only_hint = Some(v);
    }
    if let Some(v) = overrides.destructive_hint {
        annotations.destructive_hint = Some(v);
    }
    if let Some(v) = overrides.idempotent_hint {
        annotations.idempotent_hint = Some(v);
    }
    annotations.open_world_hint = overrides.open_world_hint;
    let allowed = justified(method);
    let unjustified: Vec<Guarantee> = asserted(&annotations)
        .into_iter()
        .filter(|g| !allowed.contains(g))
        .collect();
    let basis = match (changed, unjustified.is_empty()) {
        (false, _) => AnnotationBasis::Method,
        (true, true) => AnnotationBasis::CurationSound,
        (true, false) => AnnotationBasis::CurationAsserted,
    };
    Decision {
        annotations,
        basis,
        unjustified,
    }
}

impl Guarantee {
    pub fn hint(self) -> &'static str {
        match self {
            Guarantee::ReadOnly => "readOnlyHint: true",
            Guarantee::AdditiveOnly => "destructiveHint: false",
            Guarantee::Idempotent => "idempotentHint: true",
        }
    }
}

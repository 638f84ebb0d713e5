//! Which annotations a tool may carry. A method justifies some guarantees; an annotation
//! state asserts some; a state is sound when it asserts no more than the method justifies.

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

/// What an HTTP method (lowercase) justifies on its own.
pub fn justified(method: &str) -> &'static [Guarantee] {
    match method {
        "get" | "head" => &[
            Guarantee::ReadOnly,
            Guarantee::AdditiveOnly,
            Guarantee::Idempotent,
        ],
        "put" | "delete" => &[Guarantee::Idempotent],
        _ => &[],
    }
}

/// The strongest sound state for a method: GET/HEAD read-only, PUT/DELETE idempotent, any
/// other method no annotations at all.
pub fn from_method(method: &str) -> Annotations {
    match method {
        "get" | "head" => Annotations {
            read_only_hint: Some(true),
            ..Annotations::default()
        },
        "put" | "delete" => Annotations {
            read_only_hint: Some(false),
            idempotent_hint: Some(true),
            ..Annotations::default()
        },
        _ => Annotations::default(),
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

/// Applies `overrides` to the method's state and judges the result.
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

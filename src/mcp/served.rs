//! A tool of the catalog as the server holds it: the tool itself, and what serving it needs,
//! made once per catalog (its routes, its mirrored headers, its rate limits, its meter) or on
//! its first call (its validator).

use std::sync::OnceLock;

use super::call::rate_limits;
use super::{MirroredHeader, limit, mirrored_headers};
use crate::catalog::{InputSchema, Rate, Tool, ToolLimits};
use crate::observe::{Observer, ToolMeter};
use crate::upstream::{self, Upstream};

/// A tool of the catalog, prepared for serving: the tool, each request's route, and what
/// checking a call needs, made once.
#[derive(Debug)]
pub(super) struct ServedTool {
    /// The tool as the catalog holds it: its name is the one it is listed and called by.
    pub(super) tool: Tool,
    /// How the upstream client sends each request a call sends ([`Tool::requests`]),
    /// prepared once; empty without a client.
    pub(super) routes: Vec<upstream::Route>,
    pub(super) headers: Vec<MirroredHeader>,
    /// Compiled from the input schema's text on the tool's first call: a tree holds many
    /// times its text's memory, for a schema that only validation reads.
    pub(super) validator: OnceLock<Result<jsonschema::Validator, String>>,
    /// Compiled from the output schema on the first 2xx JSON answer, like `validator`.
    pub(super) output_validator: OnceLock<Option<jsonschema::Validator>>,
    /// Compiled from the item schemas on the first streamed answer, by media type.
    pub(super) item_validators: OnceLock<Vec<(String, Option<jsonschema::Validator>)>>,
    /// The rate limits a call must fit, and beside each, what the caller is told of it.
    pub(super) limits: Vec<limit::Limit>,
    pub(super) limits_told: Vec<(Rate, &'static str)>,
    pub(super) meter: Option<ToolMeter>,
}

impl ServedTool {
    /// `tool`, among the `listed` tools, prepared: its own rate limits and its class's, and
    /// the own limit of each other listed tool whose operation a call sends (a tool's limit
    /// holds whether it is called alone or through a workflow).
    pub(super) fn new(
        tool: &Tool,
        listed: &[&Tool],
        limiter: &limit::Limiter,
        upstream: Option<&Upstream>,
        observer: Option<&Observer>,
    ) -> ServedTool {
        let (mut limits, mut limits_told) = rate_limits(limiter.key_for(&tool.name), &tool.limits);
        // Only a composite tool calls operations that are other tools': an operation's tool
        // calls its own, and looking for it among every other tool made serving a catalog of
        // n tools cost n² comparisons (Graph beta's 22,361: seconds).
        let steps = match tool.workflow() {
            Some(_) => tool.requests(),
            None => Vec::new(),
        };
        for request in steps {
            let called = listed.iter().find(|listed| {
                listed.name != tool.name
                    && listed.operation().is_some_and(|operation| {
                        operation.plan.method == request.plan.method
                            && operation.plan.path == request.plan.path
                    })
            });
            let Some(called) = called else {
                continue;
            };
            let own = ToolLimits {
                class_limit: None,
                ..called.limits
            };
            let (more, told) = rate_limits(limiter.key_for(&called.name), &own);
            for (limit, (rate, _)) in more.into_iter().zip(told) {
                if !limits.contains(&limit) {
                    limits.push(limit);
                    limits_told.push((rate, "step"));
                }
            }
        }
        let (method, template) = tool.origin();
        ServedTool {
            headers: schema_headers(&tool.input_schema),
            validator: OnceLock::new(),
            output_validator: OnceLock::new(),
            item_validators: OnceLock::new(),
            limits,
            limits_told,
            meter: observer.map(|observer| {
                let api = tool
                    .requests()
                    .first()
                    .map_or("", |request| request.api.as_str());
                observer.tool(&tool.name, api, method, &template)
            }),
            routes: upstream
                .map(|upstream| {
                    tool.requests()
                        .into_iter()
                        .map(|request| upstream.route(request))
                        .collect()
                })
                .unwrap_or_default(),
            tool: tool.clone(),
        }
    }

    /// Checks each item of a streamed 2xx answer in `outcome` against the item schema the
    /// document gives its media type, noting in the answer those that do not match; `true`
    /// when any does not.
    pub(super) fn check_items(&self, outcome: &mut upstream::Outcome) -> bool {
        let Some(operation) = self.tool.operation().filter(|plan| !plan.items.is_empty()) else {
            return false;
        };
        let Ok(answer) = outcome else {
            return false;
        };
        let (Some(streamed), Some(serde_json::Value::Array(items)), Some(essence)) = (
            answer.handling.stream.as_mut(),
            &answer.json,
            answer.essence.as_deref(),
        ) else {
            return false;
        };
        let validators = self.item_validators.get_or_init(|| {
            operation
                .items
                .iter()
                .map(|item| {
                    let validator = super::validate::output_validator(&item.schema)
                        .inspect_err(|detail| {
                            tracing::error!(tool = %self.tool.name, %detail, "item schema does not compile");
                        })
                        .ok();
                    (item.media_type.clone(), validator)
                })
                .collect()
        });
        let Some(validator) = validators
            .iter()
            .find(|(media_type, _)| media_type == essence)
            .and_then(|(_, validator)| validator.as_ref())
        else {
            return false;
        };
        for (index, item) in items.iter().enumerate() {
            if let Some(detail) = super::validate::mismatch(validator, item) {
                streamed
                    .mismatched
                    .push((index, detail.replace('\n', "; ")));
            }
        }
        !streamed.mismatched.is_empty()
    }

    /// What of a 2xx JSON answer in `outcome` does not match the tool's output schema, in
    /// words; `None` when it matches, or nothing is declared or checked.
    pub(super) fn output_mismatch(&self, outcome: &upstream::Outcome) -> Option<String> {
        self.tool.output_schema.as_ref()?;
        let answer = outcome.as_ref().ok()?;
        if !answer.http.status.is_success() {
            return None;
        }
        self.mismatch(answer.json.as_ref()?)
    }

    /// What of a composite tool's outputs, in a run that reached its end, does not match its
    /// output schema (where a step's answer broke its document's promise), in words.
    pub(super) fn workflow_output_mismatch(
        &self,
        outcome: &crate::run::workflow::WorkflowOutcome,
    ) -> Option<String> {
        self.tool.output_schema.as_ref()?;
        let crate::run::workflow::Ending::Done { outputs, .. } = &outcome.end else {
            return None;
        };
        self.mismatch(&serde_json::Value::Object(outputs.clone()))
    }

    /// What of `value` does not match the tool's output schema, in words.
    fn mismatch(&self, value: &serde_json::Value) -> Option<String> {
        let output = self.tool.output_schema.as_ref()?;
        let validator = self.output_validator.get_or_init(|| {
            super::validate::output_validator(&output.served)
                .inspect_err(|detail| {
                    tracing::error!(tool = %self.tool.name, %detail, "output schema does not compile");
                })
                .ok()
        });
        super::validate::mismatch(validator.as_ref()?, value)
    }

    /// The validator of its input schema, compiled on its first use; `None` (logged) when
    /// the schema does not compile, ferry's own fault.
    pub(super) fn validator(&self) -> Option<&jsonschema::Validator> {
        let validator = self.validator.get_or_init(|| {
            super::validate::validator(&self.tool.input_schema, &self.tool.unchecked_patterns)
        });
        match validator {
            Ok(validator) => Some(validator),
            Err(detail) => {
                tracing::error!(tool = %self.tool.name, %detail, "input schema does not compile");
                None
            }
        }
    }

    /// Whether a call asks the user first.
    pub(super) fn confirms(&self) -> bool {
        self.tool.confirm.is_some()
    }
}

/// The arguments `schema` marks with `x-mcp-header`; only a schema whose text names the
/// keyword is read back into a tree.
fn schema_headers(schema: &InputSchema) -> Vec<MirroredHeader> {
    if schema.mentions("\"x-mcp-header\"") {
        mirrored_headers(&schema.to_value())
    } else {
        Vec::new()
    }
}

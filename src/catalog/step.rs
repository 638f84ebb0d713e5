//! How each step of a composite tool is sent: its operation built into a request plan by the
//! same rules as an operation's tool, and where each of the step's values goes in it.
//!
//! A step sends its operation as the catalog's tool for it would, where the curation chose
//! one (its timeouts, retries, size cap, credentials and scopes), otherwise with the file's
//! call settings. It reads the API's answer as
//! the API gave it: no projection (`fields:`) and no paging, and it reports every response
//! header the workflow's expressions read.

use http::HeaderName;

use crate::arazzo::{Expression, Source, Step};
use crate::curation::Curation;
use crate::curation::call::NEVER_REPORTED_HEADERS;
use crate::openapi::Document;

use super::operation::Operation;
use super::shape::ResultShape;
use super::{
    BodyPlacement, CallSettings, OperationPlan, ParameterLocation, Tool, build, operation,
};

/// One step's request: the operation it sends, and which of its arguments each of the
/// step's values fills.
#[derive(Debug, Clone)]
pub struct StepPlan {
    /// Named `<composite tool>.<stepId>` in logs.
    pub operation: OperationPlan,
    /// The scopes a caller needs to call the operation as its own tool, when the curation
    /// chose one and named them.
    pub scopes: Option<Vec<String>>,
    /// The argument each of the step's `parameters` fills, in the step's order.
    pub arguments: Vec<String>,
    /// The argument the step's `requestBody.payload` fills: the whole body, sent as the
    /// operation's media type says.
    pub body: Option<String>,
    /// Its outputs, criteria or actions read the response body (`$response.body`): a body
    /// cut at the size cap, or broken JSON, then stops the workflow.
    pub reads_body: bool,
    /// They read `$url`, which the runner then writes down.
    pub reads_url: bool,
}

/// The plan of `step`, which calls `operation`, for the composite tool `tool_name`; or why
/// the step cannot be sent.
pub(super) fn plan(
    document: &Document,
    curation: &Curation,
    tools: &[Tool],
    operation: &Operation<'_>,
    step: &Step,
    tool_name: &str,
) -> Result<StepPlan, String> {
    let label = operation.label();
    let built = build::build(
        document,
        operation,
        &curation.credential_parameters(),
        curation.lift_composition,
        None,
    )
    .map_err(|problems| {
        let reason = problems
            .first()
            .map_or_else(String::new, |problem| format!(": {}", problem.message));
        format!("{label} cannot be called{reason}")
    })?;
    let mut plan = built.plan;
    let chosen = tools.iter().find(|tool| {
        tool.operation().is_some_and(|chosen| {
            chosen.api == curation.api_id
                && chosen.plan.method == plan.method
                && chosen.plan.path == plan.path
        })
    });
    let mut call = match chosen.and_then(Tool::operation) {
        Some(operation) => operation.call.clone(),
        None => CallSettings::resolve(&curation.call),
    };
    call.shape = ResultShape::default();
    call.page_size = None;
    call.next = None;
    for name in response_headers(step) {
        if let Ok(name) = HeaderName::from_bytes(name.as_bytes())
            && !NEVER_REPORTED_HEADERS.contains(&name.as_str())
            && !call.report_headers.contains(&name)
        {
            call.report_headers.push(name);
        }
    }

    let mut arguments = Vec::with_capacity(step.parameters.len());
    for parameter in &step.parameters {
        let planned = plan.parameters.iter().find(|p| {
            p.location == parameter.location
                && if p.location == ParameterLocation::Header {
                    p.name.eq_ignore_ascii_case(&parameter.name)
                } else {
                    p.name == parameter.name
                }
        });
        match planned {
            Some(planned) => arguments.push(planned.argument.clone()),
            None => {
                return Err(format!(
                    "{label}: ferry sets the {} parameter {:?} itself (a credential, or a header the media type decides), so a step may not",
                    parameter.location.as_str(),
                    parameter.name
                ));
            }
        }
    }
    if let Some(missing) = plan
        .parameters
        .iter()
        .find(|p| p.required && !arguments.contains(&p.argument))
    {
        return Err(format!(
            "{label} requires the {} parameter {:?}, which the step does not give",
            missing.location.as_str(),
            missing.name
        ));
    }
    let body = match (&step.body, &mut plan.body) {
        (None, _) => None,
        (Some(_), None) => {
            return Err(format!(
                "{label} takes no request body, but the step gives a payload"
            ));
        }
        (Some(_), Some(body)) => {
            // The payload is the whole body: it goes in as one argument, named apart from
            // every parameter's.
            let mut name = "body".to_string();
            while arguments.contains(&name) || plan.parameters.iter().any(|p| p.argument == name) {
                name.push('_');
            }
            body.placement = BodyPlacement::Argument(name.clone());
            Some(name)
        }
    };
    Ok(StepPlan {
        operation: OperationPlan {
            api: curation.api_id.clone(),
            name: format!("{tool_name}.{}", step.id),
            call,
            operation_id: operation.operation_id.map(str::to_string),
            tags: operation.tags.iter().map(|tag| tag.to_string()).collect(),
            document_scopes: operation::security_scopes(document, operation),
            plan,
            // A step's 202 is what the workflow reads: its criteria decide what follows.
            long_running: None,
            items: Vec::new(),
        },
        scopes: chosen.and_then(|tool| tool.scopes.clone()),
        arguments,
        body,
        reads_body: step
            .answer_expressions()
            .any(|expression| matches!(expression, Expression::Response(Source::Body(_)))),
        reads_url: step
            .answer_expressions()
            .any(|expression| matches!(expression, Expression::Url)),
    })
}

/// The response headers a step's outputs, criteria and actions read, lowercase.
fn response_headers(step: &Step) -> Vec<String> {
    let mut names: Vec<String> = step
        .answer_expressions()
        .filter_map(|expression| match expression {
            Expression::Response(Source::Header(name)) => Some(name.to_ascii_lowercase()),
            _ => None,
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

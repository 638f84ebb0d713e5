//! A call of a discovery tool (`catalog::discovery`): a search or a description answered
//! from what the server holds, or a call of an operation behind it, which from the scope
//! check on is that operation's own call ([`Server::end_of`]): its validation, limits,
//! confirmation, result and audit record all name the operation.

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::call::{Arguments, Ending};
use super::failure::Failure;
use super::{Era, Outgoing, Scope, ServedTool, Server, confirm, result};
use crate::auth::Principal;
use crate::catalog::discovery::{DESCRIBE, Entry, Filter, SEARCH, search};
use crate::catalog::{CallClass, DiscoveryKind, DiscoveryTool};

impl Server {
    /// Answers a call of the discovery tool `served` (at `index` among the served tools).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn discover<'s>(
        &'s self,
        id: &RawValue,
        (index, served, discovery): (usize, &'s ServedTool, &'s DiscoveryTool),
        arguments: Arguments,
        client_info: Option<&RawValue>,
        era: Era,
        round: &confirm::Round<'_>,
        scope: Scope<'_, 's>,
    ) -> Result<Outgoing, Failure> {
        let Scope {
            principal,
            facts,
            trace,
            progress,
        } = scope;
        if self.observer.is_some() {
            facts.client = client_info.map(ToOwned::to_owned);
        }
        let own = |ending: Ending<'_>, facts: &mut crate::observe::CallFacts| {
            let _ = trace.tool.set(&served.tool.name);
            facts.tool = Some(index);
            self.answer(id, served, ending, era, facts, trace, None)
        };
        if let Some(ending) = self.refusal(served, &arguments, principal) {
            return own(ending, facts);
        }
        let given = arguments.as_map();
        let class = match discovery.kind {
            DiscoveryKind::Search => {
                let answer = self.search(discovery, given, principal);
                return own(Ending::Answered(Box::new(answer)), facts);
            }
            DiscoveryKind::Describe => {
                let answer = self.describe(discovery, given, principal);
                return own(Ending::Answered(Box::new(answer)), facts);
            }
            DiscoveryKind::Call(class) => class,
        };
        let name = given
            .get("operation")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let search_tool = discovery.sibling(SEARCH);
        let found = discovery
            .index
            .get(name)
            .and_then(|entry| Some((entry, *self.by_name.get(name)?)));
        let Some((entry, target_index)) = found else {
            return own(
                Ending::Invalid(format!(
                    "no operation is named {name:?}; nothing was sent to the API: find the operation with {search_tool}, and call it by the name it answers"
                )),
                facts,
            );
        };
        let target = &self.tools[target_index];
        // The operation's scopes before anything about it is said: a caller who may not
        // call it learns nothing of it, as with its own tool.
        if let Some(principal) = principal
            && let Err(challenge) = self.authenticator.authorize(principal, name)
        {
            tracing::info!(tool = %name, user = %principal.subject, "tool call refused: missing scope");
            return own(Ending::Refused(challenge), facts);
        }
        if entry.class != class {
            return own(
                Ending::Invalid(format!(
                    "{name} is not called with {}: it is a{} {} operation; nothing was sent to the API: call it with {}",
                    served.tool.name,
                    if entry.class == CallClass::Idempotent {
                        "n"
                    } else {
                        ""
                    },
                    entry.class.as_str(),
                    discovery.caller(entry.class)
                )),
                facts,
            );
        }
        let inner = match given.get("arguments") {
            Some(Value::Object(map)) => map.clone(),
            _ => Map::new(),
        };
        let inner = Arguments::new(inner);
        // From here on it is the operation's own call.
        let _ = trace.tool.set(&target.tool.name);
        if self.observer.is_some() {
            facts.tool = Some(target_index);
        }
        let (ending, confirmation) = self
            .end_of(
                target,
                &inner,
                principal,
                era,
                round,
                trace,
                progress,
                &mut facts.state_failure,
            )
            .await;
        facts.confirmation = confirmation;
        self.answer(
            id,
            target,
            ending,
            era,
            facts,
            trace,
            Some(&served.tool.name),
        )
    }

    /// A search's answer: the best operations for the query that the caller may call.
    fn search(
        &self,
        discovery: &DiscoveryTool,
        given: &Map<String, Value>,
        principal: Option<&Principal>,
    ) -> result::CallResult<'static> {
        let text = |key: &str| given.get(key).and_then(Value::as_str);
        let filter = Filter {
            tag: text("tag"),
            class: text("class").and_then(|class| {
                CallClass::ALL
                    .into_iter()
                    .find(|known| known.as_str() == class)
            }),
            path_prefix: text("path_prefix"),
        };
        let limit = given
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(search::DEFAULT_LIMIT, |limit| limit as usize);
        let (found, matched) =
            discovery
                .index
                .search(text("query").unwrap_or_default(), &filter, limit, |entry| {
                    // An endpoint that serves some of the API's operations finds only those.
                    self.by_name.contains_key(&entry.tool) && self.may_use(principal, &entry.tool)
                });
        let operations: Vec<Value> = found
            .iter()
            .map(|entry| found_entry(entry, discovery))
            .collect();
        let notes = if operations.is_empty() {
            vec!["No operation matches: try other words, or fewer filters.".to_string()]
        } else {
            vec![format!(
                "Read an operation's arguments with {} before calling it with the tool its callWith names.",
                discovery.sibling(DESCRIBE)
            )]
        };
        result::answered(json!({"operations": operations, "matched": matched}), notes)
    }

    /// A description's answer: each named operation's definition, exactly as `tools/list`
    /// would serve its tool, and the tool that calls it.
    fn describe(
        &self,
        discovery: &DiscoveryTool,
        given: &Map<String, Value>,
        principal: Option<&Principal>,
    ) -> result::CallResult<'static> {
        let names = given
            .get("operations")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect::<Vec<_>>())
            .unwrap_or_default();
        let mut tools = Vec::new();
        let mut notes = Vec::new();
        let mut unknown = Vec::new();
        for name in names {
            let served = discovery
                .index
                .get(name)
                .filter(|_| self.may_use(principal, name))
                .and_then(|entry| Some((entry, &self.tools[*self.by_name.get(name)?])));
            let Some((entry, served)) = served else {
                unknown.push(name);
                continue;
            };
            let definition =
                serde_json::to_value(served.tool.sorted_definition()).unwrap_or_default();
            let caller = discovery.caller(entry.class);
            notes.push(format!(
                "Call {name} with {caller}: {{\"operation\": \"{name}\", \"arguments\": {{...}}}}, the arguments as its inputSchema asks.{}",
                if entry.confirms {
                    " The user is asked to confirm each call."
                } else {
                    ""
                }
            ));
            tools.push(json!({"tool": definition, "callWith": caller}));
        }
        if tools.is_empty() {
            return result::invalid_arguments(format!(
                "no operation is named {}: find operations with {}, and describe them by the names it answers",
                quoted(&unknown),
                discovery.sibling(SEARCH)
            ));
        }
        if !unknown.is_empty() {
            notes.push(format!("No operation is named {}.", quoted(&unknown)));
        }
        result::answered(json!({"operations": tools}), notes)
    }

    /// Whether `principal` may call the tool `name` (anyone, where nobody is asked).
    fn may_use(&self, principal: Option<&Principal>, name: &str) -> bool {
        principal.is_none_or(|principal| self.authenticator.may_use(principal, name))
    }
}

/// `names`, each quoted, joined by commas.
fn quoted(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| format!("{name:?}")).collect();
    quoted.join(", ")
}

/// One operation as a search answers it.
fn found_entry(entry: &Entry, discovery: &DiscoveryTool) -> Value {
    let mut found = json!({
        "name": entry.tool,
        "method": entry.method,
        "path": entry.path,
        "callWith": discovery.caller(entry.class),
        "annotations": entry.annotations,
        "tokens": entry.tokens,
    });
    if let Some(summary) = &entry.summary {
        found["summary"] = Value::from(summary.as_str());
    }
    if entry.confirms {
        found["confirm"] = Value::Bool(true);
    }
    found
}

//! Answers written once: `server/discover`, `initialize` and both eras' `tools/list` are
//! serialized at start-up and served with only the `id` spliced in; a caller whose scopes
//! make the list depend on them gets one spliced from each tool's definition, written once.

use std::sync::{Arc, PoisonError};

use bytes::Bytes;
use http::StatusCode;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::{Era, Kind, META_SERVER_INFO, META_SUBSCRIPTION_ID, Outgoing, Server};
use crate::auth::Principal;

/// A response serialized at start-up: `{"jsonrpc":"2.0","id":` + id + `suffix`.
#[derive(Debug)]
pub(super) struct Prepared {
    pub(super) suffix: Vec<u8>,
}

impl Server {
    /// `tools/list` for a caller when the list depends on scopes: the tools `principal`
    /// reaches, marked `private` so no cache shares it across callers.
    pub(super) fn tools_list_for(
        &self,
        id: &RawValue,
        principal: &Principal,
        era: Era,
    ) -> Outgoing {
        /// Scope sets remembered at most per era; past that the memory starts over.
        const MAX_SCOPED_LISTS: usize = 1024;
        // Looked up by the borrowed scopes: they are copied only when a new list is kept.
        let scoped_lists = match era {
            Era::Modern => &self.scoped_lists[0],
            Era::Legacy => &self.scoped_lists[1],
        };
        let cached = scoped_lists
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(principal.scopes.as_slice())
            .cloned();
        if let Some(prepared) = cached {
            return prepared.respond(id);
        }
        let listing = match era {
            Era::Legacy => self.legacy_listing.as_ref().unwrap_or(&self.listing),
            Era::Modern => &self.listing,
        };
        let array = listing.select(|index| {
            self.authenticator
                .may_use(principal, &self.tools[index].tool.name)
        });
        let prepared = Arc::new(Listing::result(
            &array,
            era,
            self.ttl_ms,
            "private",
            &self.server_info,
        ));
        let mut lists = scoped_lists.lock().unwrap_or_else(PoisonError::into_inner);
        if lists.len() >= MAX_SCOPED_LISTS {
            lists.clear();
        }
        lists.insert(principal.scopes.clone(), prepared.clone());
        drop(lists);
        prepared.respond(id)
    }

    /// `subscriptions/listen`: ferry honours `toolsListChanged` (its tool list changes when
    /// the catalog is reloaded) and nothing else, so the acknowledgement names that alone,
    /// when asked for.
    pub(super) fn listen(&self, id: &RawValue, tools_list_changed: bool) -> Outgoing {
        let subscription: Value = serde_json::from_str(id.get()).unwrap_or(Value::Null);
        let honoured = if tools_list_changed {
            json!({"toolsListChanged": true})
        } else {
            json!({})
        };
        let acknowledgement = json!({
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "notifications": honoured,
                "_meta": { META_SUBSCRIPTION_ID: subscription },
            },
        });
        let changed = tools_list_changed.then(|| {
            let notification = json!({
                "jsonrpc": "2.0",
                "method": "notifications/tools/list_changed",
                "params": { "_meta": { META_SUBSCRIPTION_ID: subscription } },
            });
            Bytes::from(notification.to_string())
        });
        let end = json!({
            "resultType": "complete",
            "_meta": { META_SUBSCRIPTION_ID: subscription, META_SERVER_INFO: self.server_info },
        });
        Outgoing {
            status: StatusCode::OK,
            body: Bytes::from(acknowledgement.to_string()),
            kind: Kind::Subscription {
                end: respond_value(id, &end).body,
                tools_list_changed: changed,
            },
        }
    }
}

pub(super) const ID_PREFIX: &[u8] = br#"{"jsonrpc":"2.0","id":"#;

impl Prepared {
    pub(super) fn result(result: &Value) -> Prepared {
        let mut suffix = br#","result":"#.to_vec();
        // Serializing a `Value` cannot fail: its keys are strings.
        suffix.extend_from_slice(result.to_string().as_bytes());
        suffix.push(b'}');
        Prepared { suffix }
    }

    pub(super) fn respond(&self, id: &RawValue) -> Outgoing {
        let id = id.get().as_bytes();
        let mut body = Vec::with_capacity(ID_PREFIX.len() + id.len() + self.suffix.len());
        body.extend_from_slice(ID_PREFIX);
        body.extend_from_slice(id);
        body.extend_from_slice(&self.suffix);
        Outgoing {
            status: StatusCode::OK,
            body: Bytes::from(body),
            kind: Kind::Json,
        }
    }
}

/// Tool definitions as `tools/list` writes them, one after another in a JSON array, and
/// where each lies in it.
#[derive(Debug, Default)]
pub(super) struct Listing {
    /// `[` definitions separated by `,` `]`; empty when nothing was listed.
    array: Vec<u8>,
    spans: Vec<std::ops::Range<usize>>,
}

impl Listing {
    /// The listing of `definitions`, each written as soon as it is made.
    pub(super) fn new(definitions: impl ExactSizeIterator<Item = impl Serialize>) -> Listing {
        let mut array = vec![b'['];
        let mut spans = Vec::with_capacity(definitions.len());
        for (index, definition) in definitions.enumerate() {
            if index > 0 {
                array.push(b',');
            }
            let start = array.len();
            // Serializing a definition cannot fail: its keys are strings.
            let _ = serde_json::to_writer(&mut array, &definition);
            spans.push(start..array.len());
        }
        array.push(b']');
        Listing { array, spans }
    }

    pub(super) fn array(&self) -> &[u8] {
        &self.array
    }

    pub(super) fn into_array(self) -> Vec<u8> {
        self.array
    }

    /// The array of the definitions whose index `keep` accepts.
    pub(super) fn select(&self, keep: impl Fn(usize) -> bool) -> Vec<u8> {
        let mut array = vec![b'['];
        for (index, span) in self.spans.iter().enumerate() {
            if keep(index) {
                if array.len() > 1 {
                    array.push(b',');
                }
                array.extend_from_slice(&self.array[span.clone()]);
            }
        }
        array.push(b']');
        array
    }

    /// A `tools/list` result holding the tools `array`, as each era writes it.
    pub(super) fn result(
        array: &[u8],
        era: Era,
        ttl_ms: u64,
        cache_scope: &str,
        server_info: &RawValue,
    ) -> Prepared {
        let (head, tail) = enclosure(era, ttl_ms, cache_scope, server_info);
        let mut suffix = Vec::with_capacity(head.len() + array.len() + tail.len());
        suffix.extend_from_slice(&head);
        suffix.extend_from_slice(array);
        suffix.extend_from_slice(&tail);
        Prepared { suffix }
    }

    /// [`Listing::result`] of this listing's array, moved into the result rather than
    /// copied: a large API's listing is megabytes, and each era's is held once.
    pub(super) fn into_result(
        self,
        era: Era,
        ttl_ms: u64,
        cache_scope: &str,
        server_info: &RawValue,
    ) -> Prepared {
        let (head, tail) = enclosure(era, ttl_ms, cache_scope, server_info);
        let mut suffix = self.array;
        suffix.reserve_exact(head.len() + tail.len());
        suffix.splice(0..0, head);
        suffix.extend_from_slice(&tail);
        Prepared { suffix }
    }
}

/// What comes before and after the tools array in a `tools/list` response's suffix, as
/// each era writes it.
fn enclosure(
    era: Era,
    ttl_ms: u64,
    cache_scope: &str,
    server_info: &RawValue,
) -> (Vec<u8>, Vec<u8>) {
    let mut head = br#","result":"#.to_vec();
    let mut tail = Vec::new();
    match era {
        Era::Modern => {
            head.extend_from_slice(br#"{"resultType":"complete","tools":"#);
            tail.extend_from_slice(br#","ttlMs":"#);
            tail.extend_from_slice(ttl_ms.to_string().as_bytes());
            tail.extend_from_slice(br#","cacheScope":"#);
            tail.extend_from_slice(Value::from(cache_scope).to_string().as_bytes());
            tail.extend_from_slice(br#","_meta":"#);
            let meta = json!({ META_SERVER_INFO: server_info });
            tail.extend_from_slice(meta.to_string().as_bytes());
            tail.push(b'}');
        }
        Era::Legacy => {
            head.extend_from_slice(br#"{"tools":"#);
            tail.push(b'}');
        }
    }
    tail.push(b'}');
    (head, tail)
}

pub(super) fn respond_value(id: &RawValue, result: &Value) -> Outgoing {
    Prepared::result(result).respond(id)
}

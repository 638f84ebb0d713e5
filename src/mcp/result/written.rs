//! A tool result written straight into the response bytes, by hand: typed blocks and
//! `_meta`, with no JSON tree in between, and each era's additions (`resultType` and the
//! server info, or the legacy wrap of a `structuredContent` that is not an object).
//!
//! The member names are fixed, so they are written as they are; only values that may need
//! it (text, header values, cursors, the body's JSON) go through `serde_json`'s escaping.
//! Through a `Serializer`, every name was escaped again on every call.

use serde::Serialize;
use serde_json::value::RawValue;

use super::*;

/// A result with its era's additions.
pub(super) struct Written<'r, 't> {
    pub(super) result: &'r CallResult<'t>,
    pub(super) result_type: Option<&'static str>,
    /// The server info added last to `_meta` (modern).
    pub(super) server_info: Option<&'r RawValue>,
    /// A `structuredContent` that is not an object is wrapped (legacy).
    pub(super) wrap: bool,
}

impl Written<'_, '_> {
    /// Appends the result's JSON object to `out`.
    pub(super) fn write(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        let result = self.result;
        let mut object = Object::open(out);
        if let Some(result_type) = self.result_type {
            object.key("resultType");
            text(object.out, result_type)?;
        }
        object.key("content");
        object.out.push(b'[');
        for (index, block) in result.content.iter().enumerate() {
            if index > 0 {
                object.out.push(b',');
            }
            write_block(block, object.out)?;
        }
        object.out.push(b']');
        if let Some(structured) = &result.structured_content {
            object.key("structuredContent");
            if self.wrap && !structured.is_object() {
                let mut wrapped = Object::open(object.out);
                wrapped.key(LEGACY_WRAP_KEY);
                value(wrapped.out, structured)?;
                wrapped.close();
            } else {
                value(object.out, structured)?;
            }
        }
        if result.is_error {
            object.key("isError");
            object.out.extend_from_slice(b"true");
        }
        if result.http.is_some()
            || result.handling.is_some()
            || result.rate_limit.is_some()
            || result.workflow.is_some()
            || self.server_info.is_some()
        {
            object.key("_meta");
            self.write_meta(object.out)?;
        }
        object.close();
        Ok(())
    }

    fn write_meta(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        let result = self.result;
        let mut meta = Object::open(out);
        if let Some(http) = &result.http {
            meta.key(HTTP_META);
            write_http(http, meta.out)?;
        }
        if let Some(handling) = &result.handling {
            meta.key(RESULT_META);
            write_handling(handling, meta.out)?;
        }
        if let Some(limited) = &result.rate_limit {
            meta.key(RATE_LIMIT_META);
            let mut limit = Object::open(meta.out);
            limit.key("retryAfterSeconds");
            value(limit.out, &limited.retry_after_seconds)?;
            limit.key("limit");
            text(limit.out, &limited.limit.to_string())?;
            limit.key("scope");
            text(limit.out, limited.scope)?;
            limit.close();
        }
        if let Some(workflow) = &result.workflow {
            meta.key(crate::catalog::WORKFLOW_META_KEY);
            value(meta.out, workflow)?;
        }
        if let Some(info) = self.server_info {
            meta.key(META_SERVER_INFO);
            meta.out.extend_from_slice(info.get().as_bytes());
        }
        meta.close();
        Ok(())
    }
}

/// An object being written: its members are separated as they come.
struct Object<'o> {
    out: &'o mut Vec<u8>,
    empty: bool,
}

impl<'o> Object<'o> {
    fn open(out: &'o mut Vec<u8>) -> Object<'o> {
        out.push(b'{');
        Object { out, empty: true }
    }

    /// Starts a member. `name` is one of the writer's own, which need no escaping.
    fn key(&mut self, name: &str) {
        debug_assert!(
            !name
                .bytes()
                .any(|byte| byte < b' ' || byte == b'"' || byte == b'\\'),
            "{name:?} needs escaping"
        );
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        self.out.push(b'"');
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(b"\":");
    }

    fn close(self) {
        self.out.push(b'}');
    }
}

/// A JSON string, escaped.
fn text(out: &mut Vec<u8>, text: &str) -> Result<(), serde_json::Error> {
    serde_json::to_writer(out, text)
}

fn value<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), serde_json::Error> {
    serde_json::to_writer(out, value)
}

fn write_block(block: &Block<'_>, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    let mut object = Object::open(out);
    match block {
        Block::Text(content) => {
            object.key("type");
            object.out.extend_from_slice(b"\"text\"");
            object.key("text");
            text(object.out, content)?;
        }
        Block::Media { kind, data, mime } => {
            object.key("type");
            text(object.out, kind)?;
            object.key("data");
            text(object.out, data)?;
            object.key("mimeType");
            text(object.out, mime)?;
        }
        Block::Resource { tool, mime, body } => {
            object.key("type");
            object.out.extend_from_slice(b"\"resource\"");
            object.key("resource");
            let mut resource = Object::open(object.out);
            resource.key("uri");
            text(resource.out, &format!("ferry://tools/{tool}/response"))?;
            if let Some(mime) = mime {
                resource.key("mimeType");
                text(resource.out, mime)?;
            }
            match body {
                ResourceBody::Text(content) => {
                    resource.key("text");
                    text(resource.out, content)?;
                }
                ResourceBody::Blob(blob) => {
                    resource.key("blob");
                    text(resource.out, blob)?;
                }
            }
            resource.close();
        }
    }
    object.close();
    Ok(())
}

/// `{"status": 200, "headers": {"content-type": "..."}}`.
fn write_http(http: &Http, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    let mut facts = Object::open(out);
    facts.key("status");
    value(facts.out, &http.status.as_u16())?;
    facts.key("headers");
    let mut headers = Object::open(facts.out);
    for (name, content) in &http.headers {
        // A header name is a token: no character of it needs escaping.
        headers.key(name.as_str());
        text(headers.out, content)?;
    }
    headers.close();
    facts.close();
    Ok(())
}

/// What ferry did, each note in the order it was made: the body redacted, cut, paged by a
/// field, projected, its numbers rounded; a cursor or location redacted, paged by `Link`;
/// a header redacted.
fn write_handling(handling: &Handling, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    let mut done = Object::open(out);
    let flag = |done: &mut Object<'_>, name: &str| {
        done.key(name);
        done.out.extend_from_slice(b"true");
    };
    let redacted_at = |done: &mut Object<'_>, part: Redacted| {
        if handling.redacted == Some(part) {
            flag(done, "redacted");
        }
    };
    let page = |done: &mut Object<'_>, from_link: bool| -> Result<(), serde_json::Error> {
        match &handling.page {
            Some(page) if page.from_link == from_link => {
                if let Some(cursor) = &page.cursor {
                    done.key("nextCursor");
                    text(done.out, cursor)?;
                }
                done.key("more");
                value(done.out, &page.more)
            }
            _ => Ok(()),
        }
    };
    redacted_at(&mut done, Redacted::Body);
    if handling.truncated {
        flag(&mut done, "truncated");
        done.key("limitBytes");
        value(done.out, &handling.limit_bytes)?;
    }
    page(&mut done, false)?;
    if handling.projected {
        flag(&mut done, "projected");
    }
    if handling.numbers_rounded {
        flag(&mut done, "numbersRounded");
    }
    redacted_at(&mut done, Redacted::Target);
    page(&mut done, true)?;
    redacted_at(&mut done, Redacted::Headers);
    done.close();
    Ok(())
}

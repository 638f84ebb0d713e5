//! A tool result written straight into the response bytes, by hand: typed blocks and
//! `_meta`, with no JSON tree in between, and each era's additions (`resultType` and the
//! server info, or the legacy wrap of a `structuredContent` that is not an object).
//!
//! The member names are fixed, so they are written as they are; only values that may need
//! it (text, header values, cursors, the body's JSON) go through `serde_json`'s escaping.
//! Through a `Serializer`, every name was escaped again on every call.

use serde::Serialize;
use serde_json::value::RawValue;

use super::{
    Block, CallResult, HTTP_META, LEGACY_WRAP_KEY, RATE_LIMIT_META, RESULT_META, ResourceBody,
};
use crate::catalog::shape::legacy_wrap;
use crate::mcp::META_SERVER_INFO;
use crate::upstream::{Handling, Http, Redacted};

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
            object.text("resultType", result_type)?;
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
            if self.wrap && legacy_wrap(structured) {
                let mut wrapped = Object::open(object.out);
                wrapped.value(LEGACY_WRAP_KEY, structured)?;
                wrapped.close();
            } else {
                value(object.out, structured)?;
            }
        }
        if result.is_error {
            object.flag("isError");
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
            meta.value(RATE_LIMIT_META, &limited.meta())?;
        }
        if let Some(workflow) = &result.workflow {
            meta.value(crate::catalog::WORKFLOW_META_KEY, workflow)?;
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

    /// A member whose value is a JSON string.
    fn text(&mut self, name: &str, content: &str) -> Result<(), serde_json::Error> {
        self.key(name);
        text(self.out, content)
    }

    /// A member whose value `serde_json` writes.
    fn value<T: Serialize + ?Sized>(
        &mut self,
        name: &str,
        content: &T,
    ) -> Result<(), serde_json::Error> {
        self.key(name);
        value(self.out, content)
    }

    /// A member whose value is `true`.
    fn flag(&mut self, name: &str) {
        self.key(name);
        self.out.extend_from_slice(b"true");
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
            object.text("type", "text")?;
            object.text("text", content)?;
        }
        Block::Media { kind, data, mime } => {
            object.text("type", kind)?;
            object.text("data", data)?;
            object.text("mimeType", mime)?;
        }
        Block::Resource { tool, mime, body } => {
            object.text("type", "resource")?;
            object.key("resource");
            let mut resource = Object::open(object.out);
            resource.text("uri", &format!("ferry://tools/{tool}/response"))?;
            if let Some(mime) = mime {
                resource.text("mimeType", mime)?;
            }
            match body {
                ResourceBody::Text(content) => resource.text("text", content)?,
                ResourceBody::Blob(blob) => resource.text("blob", blob)?,
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
    facts.value("status", &http.status.as_u16())?;
    facts.key("headers");
    let mut headers = Object::open(facts.out);
    for (name, content) in &http.headers {
        // A header name is a token: no character of it needs escaping.
        headers.text(name.as_str(), content)?;
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
    let redacted_at = |done: &mut Object<'_>, part: Redacted| {
        if handling.redacted == Some(part) {
            done.flag("redacted");
        }
    };
    let page = |done: &mut Object<'_>, from_link: bool| -> Result<(), serde_json::Error> {
        match &handling.page {
            Some(page) if page.from_link == from_link => {
                if let Some(cursor) = &page.cursor {
                    done.text("nextCursor", cursor)?;
                }
                done.value("more", &page.more)?;
                if let Some(arguments) = &page.next_arguments {
                    done.value("nextArguments", arguments)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    };
    redacted_at(&mut done, Redacted::Body);
    if handling.truncated {
        done.flag("truncated");
        done.value("limitBytes", &handling.limit_bytes)?;
    }
    page(&mut done, false)?;
    if handling.projected {
        done.flag("projected");
    }
    if handling.numbers_rounded {
        done.flag("numbersRounded");
    }
    redacted_at(&mut done, Redacted::Target);
    page(&mut done, true)?;
    redacted_at(&mut done, Redacted::Headers);
    if let Some(followed) = &handling.operation {
        done.value("operation", &super::operation::meta(followed))?;
    }
    if let Some(streamed) = &handling.stream {
        done.value("stream", &super::stream::meta(streamed))?;
    }
    done.close();
    Ok(())
}

//! A confirming tool's retry from the client's bytes: whatever `requestState` and
//! `inputResponses` it carries, a call goes on only with a state this server sealed, and
//! bytes written without the server's key never are one.

use std::path::PathBuf;
use std::sync::OnceLock;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::{block_on, check_response, fixed_document};
use crate::catalog::{self, Catalog};
use crate::curation;
use crate::mcp::confirm::{self, Binding, ConfirmKey, Refusal};
use crate::mcp::{Incoming, Kind, MODERN_VERSION, Server, ServerOptions, code};

/// The key the confirming server seals with: fixed, so that an input that fails once fails
/// again. The fuzzer never sees a state sealed with it.
const KEY: &[u8] = b"the fuzzing server's own confirmation key";

/// [`super::DOCUMENT`]'s tools, every one confirming (one with a value to type back), and a
/// legacy client refused: without a state this server sealed, no call can go on.
const CURATION: &str = r#"
server: {name: fuzz}
confirm_legacy: refuse
tools:
  getItem:
    confirm: {message: "Read item {id}?", type_to_confirm: id}
  styledPath: {confirm: true}
  createItem: {confirm: true}
  sendForm: {confirm: true}
  upload: {confirm: true}
  putRaw: {confirm: true}
"#;

/// The first byte picks the form. With bit 0 set, the rest is a whole JSON-RPC message. Else
/// the rest, split at its first `0xff`, is a `requestState` and an `inputResponses` sent in a
/// modern `tools/call` of a confirming tool (bit 1 picks which) with valid arguments, from a
/// client that declares elicitation. Bits 2 and 3 say how the state is sent: left out, as a
/// string of its text, as the JSON it is (a string when it is not JSON), or laid into a state's
/// length and version and base64url-encoded, so that it reaches the MAC's check;
/// `inputResponses` is the JSON it is, or a string.
///
/// Every answer is one JSON-RPC response, and none is the internal error that a call going
/// on to the (absent) upstream ends in: the call is asked, refused as a tool result, or
/// refused as invalid params. The state's text, and the whole input, opened against a
/// binding, are refused as unreadable or forged.
pub fn confirm(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    check_refused(&String::from_utf8_lossy(data));
    if pick & 1 != 0 {
        if let Some(answer) = answer(rest) {
            check_not_proceeded(&answer);
        }
        return;
    }
    let (state, responses) = match memchr::memchr(0xff, rest) {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    check_refused(&String::from_utf8_lossy(state));
    let state = match pick >> 2 & 3 {
        0 => None,
        1 => Some(Value::from(String::from_utf8_lossy(state))),
        2 => Some(json_or_text(state)),
        _ => Some(Value::from(state_shaped(state))),
    };
    let (tool, arguments) = if pick & 2 == 0 {
        ("getItem", json!({"id": "item-7"}))
    } else {
        ("createItem", json!({"name": "n"}))
    };
    let mut params = Map::new();
    params.insert("name".into(), tool.into());
    params.insert("arguments".into(), arguments);
    params.insert(
        "_meta".into(),
        json!({
            "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        }),
    );
    if let Some(state) = &state {
        params.insert("requestState".into(), state.clone());
    }
    if let Some(responses) = responses {
        params.insert("inputResponses".into(), json_or_text(responses));
    }
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let answer = answer(message.to_string().as_bytes()).expect("a call is answered");
    check_not_proceeded(&answer);
    let answer: Value = serde_json::from_slice(&answer).expect("an answer is JSON");
    assert_eq!(answer["id"], 1, "{answer}");
    match state {
        None => assert_eq!(
            answer["result"]["resultType"], "input_required",
            "a call without a state is asked: {answer}"
        ),
        Some(Value::String(_)) => assert_eq!(
            answer["result"]["isError"], true,
            "a state this server did not seal is refused: {answer}"
        ),
        Some(_) => assert_eq!(
            answer["error"]["code"],
            code::INVALID_PARAMS,
            "a state that is not a string is invalid: {answer}"
        ),
    }
}

/// The server's answer to `body` (as stdio serves it), checked to be one JSON-RPC response;
/// `None` for a notification.
fn answer(body: &[u8]) -> Option<Vec<u8>> {
    let outgoing = block_on(confirming_server().handle(Incoming {
        body,
        headers: None,
        principal: None,
        notify: None,
    }));
    match outgoing.kind {
        Kind::Accepted { .. } => None,
        _ => {
            check_response(&outgoing.body);
            Some(outgoing.body.to_vec())
        }
    }
}

/// The answer is not the internal error a call that went on meets without an upstream.
fn check_not_proceeded(answer: &[u8]) {
    let value: Value = serde_json::from_slice(answer).expect("an answer is JSON");
    assert_ne!(
        value["error"]["code"],
        code::INTERNAL_ERROR,
        "a confirming call went on without a state this server sealed: {value}"
    );
}

/// `state` opened with the server's key: refused, and for what the MAC says, since nothing
/// in a state is believed before it verifies.
fn check_refused(state: &str) {
    let key = ConfirmKey::new(KEY).expect("the key is long enough");
    let binding = Binding {
        subject: "anonymous",
        tool: "getItem",
        shown: [7; 32],
        arguments: confirm::arguments_digest(&json!({"id": "item-7"})),
    };
    let opened = confirm::open(&key, state, &binding, 1_800_000_000);
    assert!(
        matches!(opened, Err(Refusal::Unreadable | Refusal::Forged)),
        "a state written without the key opened as {opened:?}: {state:?}"
    );
}

/// `bytes` as the JSON they are, or as a string of their text.
fn json_or_text(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|_| String::from_utf8_lossy(bytes).into())
}

/// `bytes` laid after a state's version byte, cut or padded with zeros to a state's length,
/// in base64url: what the MAC's check reads. The length and version are taken from a state
/// sealed with another key.
fn state_shaped(bytes: &[u8]) -> String {
    let engine = &base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let other = ConfirmKey::new(&[0x55; 32]).expect("the key is long enough");
    let binding = Binding {
        subject: "",
        tool: "",
        shown: [0; 32],
        arguments: [0; 32],
    };
    let sealed = engine
        .decode(confirm::seal(&other, &binding, 0, [0; 16]))
        .expect("a sealed state is base64url");
    let mut state = vec![0; sealed.len()];
    state[0] = sealed[0];
    let taken = bytes.len().min(state.len() - 1);
    state[1..=taken].copy_from_slice(&bytes[..taken]);
    engine.encode(state)
}

fn confirming_server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let options = ServerOptions {
            confirm_key: ConfirmKey::new(KEY),
            ..ServerOptions::default()
        };
        Server::new(confirming_catalog(), None, options)
    })
}

fn confirming_catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let (curation, _) = curation::parse(CURATION, "ferry.yaml", PathBuf::from("."))
            .expect("the confirming curation is YAML");
        let (catalog, diagnostics) = catalog::compile_chosen(fixed_document(), &curation);
        assert!(
            catalog.tools.len() == 6 && catalog.tools.iter().all(|tool| tool.confirm.is_some()),
            "every tool compiles and confirms: {diagnostics:?}"
        );
        catalog
    })
}

//! The seal and the rounds, with the clock passed in: no test waits.

use base64::Engine as _;
use serde_json::{Value, json};

use super::*;
use crate::catalog::{ParameterLocation, ParameterPlan, ParameterStyle, RequestPlan};

const NOW: u64 = 1_800_000_000;
const NONCE: [u8; 16] = [7; 16];

fn key() -> ConfirmKey {
    ConfirmKey::new(&[42; 32]).expect("32 bytes is long enough")
}

fn binding<'a>(subject: &'a str, tool: &'a str, arguments: &Value) -> Binding<'a> {
    Binding {
        subject,
        tool,
        shown: [1; 32],
        arguments: arguments_digest(arguments),
    }
}

#[test]
fn hmac_matches_rfc_4231() {
    // Test case 2: key "Jefe".
    let mac = hmac_sha256(b"Jefe", &[b"what do ya want ", b"for nothing?"]);
    let hex: String = mac.iter().map(|byte| format!("{byte:02x}")).collect();
    assert_eq!(
        hex,
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    );
    // Test case 6: a key longer than the block is hashed first.
    let mac = hmac_sha256(
        &[0xaa; 131],
        &[b"Test Using Larger Than Block-Size Key - Hash Key First"],
    );
    let hex: String = mac.iter().map(|byte| format!("{byte:02x}")).collect();
    assert_eq!(
        hex,
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
    );
}

#[test]
fn a_sealed_state_opens_for_its_own_call_until_it_expires() {
    let arguments = json!({"petId": "7", "force": true});
    let bound = binding("alice", "deletePet", &arguments);
    let state = seal(&key(), &bound, NOW + 300, NONCE);
    assert_eq!(
        open(&key(), &state, &bound, NOW),
        Ok(Opened {
            expires: NOW + 300,
            nonce: NONCE
        })
    );
    // The last second is still valid; the next is not.
    assert!(open(&key(), &state, &bound, NOW + 300).is_ok());
    assert_eq!(
        open(&key(), &state, &bound, NOW + 301),
        Err(Refusal::Expired)
    );
    // The same arguments in another key order are the same call.
    let reordered = binding("alice", "deletePet", &json!({"force": true, "petId": "7"}));
    assert!(open(&key(), &state, &reordered, NOW).is_ok());
}

#[test]
fn a_state_for_another_call_is_refused_for_what_differs() {
    let arguments = json!({"petId": "7"});
    let state = seal(
        &key(),
        &binding("alice", "deletePet", &arguments),
        NOW + 300,
        NONCE,
    );
    assert_eq!(
        open(
            &key(),
            &state,
            &binding("alice", "deleteOwner", &arguments),
            NOW
        ),
        Err(Refusal::OtherTool)
    );
    assert_eq!(
        open(
            &key(),
            &state,
            &binding("mallory", "deletePet", &arguments),
            NOW
        ),
        Err(Refusal::OtherCaller)
    );
    assert_eq!(
        open(
            &key(),
            &state,
            &binding("alice", "deletePet", &json!({"petId": "8"})),
            NOW
        ),
        Err(Refusal::OtherArguments)
    );
    let changed = Binding {
        shown: [2; 32],
        ..binding("alice", "deletePet", &arguments)
    };
    assert_eq!(open(&key(), &state, &changed, NOW), Err(Refusal::Changed));
}

/// Issue 23: a state answered after a reload that points the tool at another operation, or
/// changes its question, would run what the user never saw.
#[test]
fn what_the_user_was_shown_and_what_runs_are_bound() {
    let asked = tool(typed());
    let digest = Asked::from(&asked).digest();
    assert_eq!(
        digest,
        Asked::from(&tool(typed())).digest(),
        "deterministic"
    );
    let mut other_path = tool(typed());
    other_path
        .operation_mut()
        .expect("an operation's tool")
        .plan
        .path = "/owners/{petId}".into();
    let mut other_method = tool(typed());
    other_method
        .operation_mut()
        .expect("an operation's tool")
        .plan
        .method = http::Method::POST;
    let other_message = tool(Confirm {
        message: Some(
            crate::catalog::confirm::parse_message("Archive pet {petId}?").expect("a message"),
        ),
        type_to_confirm: Some("petId".into()),
    });
    let untyped = tool(Confirm {
        type_to_confirm: None,
        ..typed()
    });
    let mut titled = tool(typed());
    titled.title = Some("Remove a pet".into());
    for (what, changed) in [
        ("path", &other_path),
        ("method", &other_method),
        ("message", &other_message),
        ("type_to_confirm", &untyped),
        ("title", &titled),
    ] {
        assert_ne!(Asked::from(changed).digest(), digest, "{what}");
    }
}

#[test]
fn a_tampered_state_or_another_key_does_not_verify() {
    let bound = binding("alice", "deletePet", &json!({"petId": "7"}));
    let state = seal(&key(), &bound, NOW + 300, NONCE);
    // Every character changed in turn, expiry and nonce included: none verifies.
    for index in 0..state.len() {
        let mut tampered = state.clone().into_bytes();
        tampered[index] = if tampered[index] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).expect("base64url is ASCII");
        let opened = open(&key(), &tampered, &bound, NOW);
        assert!(
            matches!(opened, Err(Refusal::Forged | Refusal::Unreadable)),
            "character {index}: {opened:?}"
        );
    }
    let other = ConfirmKey::new(&[43; 32]).expect("long enough");
    assert_eq!(open(&other, &state, &bound, NOW), Err(Refusal::Forged));
    // A later expiry written into a state does not verify either.
    let mut bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(&state)
        .expect("base64url");
    bytes[1..9].copy_from_slice(&(NOW + 999_999).to_be_bytes());
    let extended = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    assert_eq!(open(&key(), &extended, &bound, NOW), Err(Refusal::Forged));
    for junk in ["", "x", &format!("{state}-TAMPERED"), &state[1..]] {
        assert_eq!(open(&key(), junk, &bound, NOW), Err(Refusal::Unreadable));
    }
}

#[test]
fn a_nonce_is_spent_once() {
    let nonces = Nonces::default();
    let opened = Opened {
        expires: NOW + 300,
        nonce: NONCE,
    };
    assert_eq!(nonces.spend(&opened, NOW), Ok(()));
    assert_eq!(nonces.spend(&opened, NOW), Err(Refusal::Replayed));
    let other = Opened {
        nonce: [8; 16],
        ..opened
    };
    assert_eq!(nonces.spend(&other, NOW), Ok(()));
}

#[test]
fn a_full_nonce_set_forgets_only_expired_nonces() {
    let nonces = Nonces::default();
    for index in 0..MAX_NONCES as u32 {
        let mut nonce = [0u8; 16];
        nonce[..4].copy_from_slice(&index.to_be_bytes());
        let opened = Opened {
            expires: NOW + u64::from(index % 2),
            nonce,
        };
        assert_eq!(nonces.spend(&opened, NOW), Ok(()));
    }
    let fresh = Opened {
        expires: NOW + 300,
        nonce: [0xff; 16],
    };
    // None has expired yet: one more would mean forgetting a live one.
    assert_eq!(nonces.spend(&fresh, NOW), Err(Refusal::Busy));
    // A second later, half have: they go, the new one is kept.
    assert_eq!(nonces.spend(&fresh, NOW + 1), Ok(()));
    assert_eq!(nonces.spend(&fresh, NOW + 1), Err(Refusal::Replayed));
}

fn tool(confirm: Confirm) -> Tool {
    let mut tool = Tool::new(
        "deletePet",
        json!({"type": "object", "properties": {"petId": {"type": "string"}}}),
        RequestPlan::new(
            http::Method::DELETE,
            "/pets/{petId}",
            vec![ParameterPlan::new(
                "petId",
                ParameterLocation::Path,
                ParameterStyle::Simple,
                false,
            )],
        ),
    );
    tool.confirm = Some(confirm);
    tool
}

fn typed() -> Confirm {
    Confirm {
        message: Some(
            crate::catalog::confirm::parse_message("Delete pet {petId}?").expect("a message"),
        ),
        type_to_confirm: Some("petId".into()),
    }
}

fn raw(value: Value) -> Box<RawValue> {
    RawValue::from_string(value.to_string()).expect("JSON")
}

/// Decides one round of `tool` for alice with `arguments`, at `now`.
fn decide(
    confirmer: &Confirmer,
    tool: &Tool,
    arguments: &Value,
    capabilities: &RawValue,
    responses: Option<&RawValue>,
    state: Option<&RawValue>,
    now: u64,
) -> Decision {
    let round = Round {
        capabilities: Some(capabilities),
        input_responses: responses,
        request_state: state,
    };
    let arguments = arguments.as_object().expect("an object");
    ready(confirmer.decide(tool, arguments, "alice", Era::Modern, &round, now))
}

/// The end of a decision with nonces spent in this process, which never waits: polled once.
fn ready<T>(decision: impl Future<Output = T>) -> T {
    let mut decision = std::pin::pin!(decision);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match decision.as_mut().poll(&mut context) {
        std::task::Poll::Ready(value) => value,
        std::task::Poll::Pending => panic!("a decision in one process waited"),
    }
}

#[test]
fn the_rounds_ask_then_proceed_once_on_the_typed_value() {
    let confirmer = Confirmer::new(key(), &ConfirmSettings::default(), Default::default());
    let tool = tool(typed());
    let arguments = json!({"petId": "rex"});
    let elicitation = raw(json!({"elicitation": {}}));
    let Decision::Ask(question) =
        decide(&confirmer, &tool, &arguments, &elicitation, None, None, NOW)
    else {
        panic!("the first call asks");
    };
    assert_eq!(question.message, "Delete pet rex?\n\nType rex to confirm.");
    let state = raw(Value::String(question.state.clone()));
    // No answer for ferry's key: asked again, with a fresh state.
    let other = raw(json!({"something_else": {"action": "accept"}}));
    assert!(matches!(
        decide(
            &confirmer,
            &tool,
            &arguments,
            &elicitation,
            Some(&other),
            Some(&state),
            NOW
        ),
        Decision::Ask(_)
    ));
    let wrong =
        raw(json!({"confirm": {"action": "accept", "content": {"confirm": true, "typed": "Rex"}}}));
    assert!(matches!(
        decide(
            &confirmer,
            &tool,
            &arguments,
            &elicitation,
            Some(&wrong),
            Some(&state),
            NOW
        ),
        Decision::Declined(NotConfirmed::Mistyped)
    ));
    // That answer spent the state.
    let right =
        raw(json!({"confirm": {"action": "accept", "content": {"confirm": true, "typed": "rex"}}}));
    assert!(matches!(
        decide(
            &confirmer,
            &tool,
            &arguments,
            &elicitation,
            Some(&right),
            Some(&state),
            NOW
        ),
        Decision::Refused(Refusal::Replayed)
    ));
    let Decision::Ask(question) =
        decide(&confirmer, &tool, &arguments, &elicitation, None, None, NOW)
    else {
        panic!("asks again");
    };
    let state = raw(Value::String(question.state));
    let Decision::Proceed {
        idempotency_key: Some(key),
    } = decide(
        &confirmer,
        &tool,
        &arguments,
        &elicitation,
        Some(&right),
        Some(&state),
        NOW,
    )
    else {
        panic!("an accepted, typed confirmation proceeds");
    };
    assert_eq!(key.len(), 36, "a UUID: {key}");
    assert_eq!(&key[14..15], "4");
    assert!(matches!(
        decide(
            &confirmer,
            &tool,
            &arguments,
            &elicitation,
            Some(&right),
            Some(&state),
            NOW
        ),
        Decision::Refused(Refusal::Replayed)
    ));
}

#[test]
fn declining_cancelling_or_leaving_the_box_unchecked_does_not_proceed() {
    let confirmer = Confirmer::new(key(), &ConfirmSettings::default(), Default::default());
    let tool = tool(Confirm {
        message: None,
        type_to_confirm: None,
    });
    let arguments = json!({"petId": "rex"});
    let elicitation = raw(json!({"elicitation": {"form": {}}}));
    for (answer, expected) in [
        (json!({"action": "decline"}), NotConfirmed::Declined),
        (json!({"action": "cancel"}), NotConfirmed::Cancelled),
        (
            json!({"action": "accept", "content": {"confirm": false}}),
            NotConfirmed::Declined,
        ),
        (
            json!({"action": "accept", "content": {"ok": true}}),
            NotConfirmed::Declined,
        ),
    ] {
        let Decision::Ask(question) =
            decide(&confirmer, &tool, &arguments, &elicitation, None, None, NOW)
        else {
            panic!("asks");
        };
        let state = raw(Value::String(question.state));
        let responses = raw(json!({ "confirm": answer }));
        match decide(
            &confirmer,
            &tool,
            &arguments,
            &elicitation,
            Some(&responses),
            Some(&state),
            NOW,
        ) {
            Decision::Declined(how) => assert_eq!(how, expected, "{answer}"),
            other => panic!("{answer}: {other:?}"),
        }
    }
}

#[test]
fn an_expired_state_is_refused_with_the_clock_given() {
    let confirmer = Confirmer::new(key(), &ConfirmSettings::default(), Default::default());
    let tool = tool(typed());
    let arguments = json!({"petId": "rex"});
    let elicitation = raw(json!({"elicitation": {}}));
    let Decision::Ask(question) =
        decide(&confirmer, &tool, &arguments, &elicitation, None, None, NOW)
    else {
        panic!("asks");
    };
    let state = raw(Value::String(question.state));
    let right =
        raw(json!({"confirm": {"action": "accept", "content": {"confirm": true, "typed": "rex"}}}));
    let later = NOW + crate::catalog::confirm::DEFAULT_TTL.as_secs() + 1;
    assert!(matches!(
        decide(
            &confirmer,
            &tool,
            &arguments,
            &elicitation,
            Some(&right),
            Some(&state),
            later
        ),
        Decision::Refused(Refusal::Expired)
    ));
}

#[test]
fn without_form_elicitation_or_in_the_legacy_era_nobody_is_asked() {
    let confirmer = Confirmer::new(key(), &ConfirmSettings::default(), Default::default());
    let tool = tool(typed());
    let arguments = json!({"petId": "rex"});
    for capabilities in [
        json!({}),
        json!({"sampling": {}}),
        json!({"elicitation": {"url": {}}}),
    ] {
        assert!(matches!(
            decide(
                &confirmer,
                &tool,
                &arguments,
                &raw(capabilities),
                None,
                None,
                NOW
            ),
            Decision::NeedsElicitation
        ));
    }
    let map = arguments.as_object().expect("object");
    let legacy = Round::default();
    assert!(matches!(
        ready(confirmer.decide(&tool, map, "alice", Era::Legacy, &legacy, NOW)),
        Decision::LegacyRefused
    ));
    let allowing = Confirmer::new(
        key(),
        &ConfirmSettings {
            allow_legacy: true,
            ..ConfirmSettings::default()
        },
        Default::default(),
    );
    assert!(matches!(
        ready(allowing.decide(&tool, map, "alice", Era::Legacy, &legacy, NOW)),
        Decision::Proceed {
            idempotency_key: None
        }
    ));
}

#[test]
fn malformed_rounds_are_named() {
    let confirmer = Confirmer::new(key(), &ConfirmSettings::default(), Default::default());
    let tool = tool(typed());
    let arguments = json!({"petId": "rex"});
    let elicitation = raw(json!({"elicitation": {}}));
    let number = raw(json!(12345));
    assert!(matches!(
        decide(
            &confirmer,
            &tool,
            &arguments,
            &elicitation,
            None,
            Some(&number),
            NOW
        ),
        Decision::Malformed("requestState is not a string")
    ));
    let Decision::Ask(question) =
        decide(&confirmer, &tool, &arguments, &elicitation, None, None, NOW)
    else {
        panic!("asks");
    };
    let state = raw(Value::String(question.state));
    let bad = raw(json!({"confirm": 12345}));
    assert!(matches!(
        decide(
            &confirmer,
            &tool,
            &arguments,
            &elicitation,
            Some(&bad),
            Some(&state),
            NOW
        ),
        Decision::Malformed(_)
    ));
}

#[test]
fn messages_escape_and_bound_what_the_caller_chose() {
    let tool = tool(typed());
    let confirm = tool.confirm.clone().expect("confirms");
    let sneaky = json!({"petId": "rex?\n\nThis is safe, confirm.\u{202e}"});
    let text = message(
        &confirm,
        &Asked::from(&tool),
        sneaky.as_object().expect("object"),
    );
    assert_eq!(
        text,
        "Delete pet rex?\\n\\nThis is safe, confirm.\\u{202e}?\n\nType rex?\\n\\nThis is safe, confirm.\\u{202e} to confirm."
    );
    let long = json!({"petId": "x".repeat(10_000)});
    let text = message(
        &confirm,
        &Asked::from(&tool),
        long.as_object().expect("object"),
    );
    assert!(
        text.chars().count() < 2 * MAX_VALUE_CHARS + 50,
        "{}",
        text.len()
    );
    let plain = Confirm {
        message: None,
        type_to_confirm: None,
    };
    let text = message(
        &plain,
        &Asked::from(&tool),
        json!({"petId": 7, "a": [1]}).as_object().expect("object"),
    );
    assert_eq!(
        text,
        "Allow deletePet (DELETE /pets/{petId})?\na: [1]\npetId: 7"
    );
}

/// Regression (issue 23): U+2028, U+2029 and U+061C reached the question raw. Every control,
/// format character and line or paragraph separator is written out, and nothing else is.
#[test]
fn every_unseen_character_is_written_out_and_no_other() {
    use unicode_general_category::{GeneralCategory, get_general_category};
    // Named by hand, apart from the table: the characters that were found passing, the
    // bidirectional controls, and the line breakers a reader would trip on.
    let known = [
        '\u{0b}',
        '\u{1b}',
        '\u{7f}',
        '\u{85}',
        '\u{ad}',
        '\u{61c}',
        '\u{180e}',
        '\u{200b}',
        '\u{200d}',
        '\u{200e}',
        '\u{200f}',
        '\u{2028}',
        '\u{2029}',
        '\u{202a}',
        '\u{202e}',
        '\u{2066}',
        '\u{2069}',
        '\u{feff}',
        '\u{fff9}',
        '\u{e0001}',
        '\u{e007f}',
    ];
    for c in known {
        assert!(is_unseen(c), "U+{:04X} is shown raw", c as u32);
    }
    let mut written_out = 0;
    for c in (0..=0x10_ffff_u32).filter_map(char::from_u32) {
        let unseen = matches!(
            get_general_category(c),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
        );
        let text = format!("7{c}SYSTEM");
        let shown = escape(&text, MAX_VALUE_CHARS);
        if unseen {
            written_out += 1;
            assert!(!shown.contains(c), "U+{:04X} is shown raw", c as u32);
            assert!(
                shown.starts_with("7\\") && shown.ends_with("SYSTEM"),
                "{shown:?}"
            );
        } else {
            assert_eq!(shown, text, "U+{:04X} is written out", c as u32);
        }
    }
    // Unicode 16 has 65 controls, 170 format characters and one separator of each kind.
    assert!(written_out > 200, "{written_out}");
}

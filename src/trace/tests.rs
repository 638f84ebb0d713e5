use super::*;

const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[test]
fn a_valid_traceparent_is_read() {
    let parent = TraceParent::parse(VALID.as_bytes()).expect("valid");
    let mut trace_id = [0u8; 32];
    write_hex(&parent.trace_id.0, &mut trace_id);
    assert_eq!(&trace_id, b"4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(
        parent.parent_id.0,
        [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]
    );
    assert_eq!(parent.flags, 1);
}

#[test]
fn anything_but_a_strict_version_00_traceparent_is_ignored() {
    let malformed = [
        "",
        "garbage",
        // Other versions, uppercase hex, all-zero ids, wrong lengths and separators.
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
        "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
        "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
        " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
        "00-4bf92f3577b34da6a3ce929d0e0e47é-00f067aa0ba902b7-01",
    ];
    for text in malformed {
        assert_eq!(TraceParent::parse(text.as_bytes()), None, "{text:?}");
    }
}

#[test]
fn a_child_keeps_the_trace_and_the_sampled_bit_under_a_new_span() {
    let parent = TraceParent::parse(VALID.as_bytes()).expect("valid");
    let context = Context::new(Some(parent), None);
    assert_eq!(context.parent_id, Some(parent.parent_id));
    assert_ne!(context.span_id, parent.parent_id);
    let (span, header) = context.child();
    let child = TraceParent::parse(header.as_bytes()).expect("the child is valid");
    assert_eq!(child.trace_id, parent.trace_id);
    assert_eq!(child.parent_id, span);
    assert_ne!(span, context.span_id);
    assert_eq!(child.flags, 1);

    let unsampled = TraceParent { flags: 0, ..parent };
    let (_, header) = Context::new(Some(unsampled), None).child();
    assert!(header.to_str().expect("ascii").ends_with("-00"));
}

#[test]
fn without_a_parent_a_sampled_trace_starts() {
    let first = Context::new(None, None);
    let second = Context::new(None, None);
    assert!(first.sampled());
    assert_eq!(first.parent_id, None);
    assert_ne!(first.trace_id, second.trace_id);
    assert_ne!(first.trace_id.0, [0; 16]);
}

#[test]
fn tracestate_is_passed_on_only_when_well_formed_and_bounded() {
    for valid in [
        "",
        "congo=t61rcWkgMzE",
        "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
        " rojo=1 , ,tenant@vendor=x ",
        "a*b/c_d-e=value with spaces",
    ] {
        assert!(valid_tracestate(valid.as_bytes()), "{valid:?}");
    }
    let many = (0..33)
        .map(|index| format!("k{index}=v"))
        .collect::<Vec<_>>()
        .join(",");
    let long = format!("k={}", "v".repeat(MAX_TRACESTATE));
    for invalid in [
        "novalue",
        "Upper=1",
        "k=a,b",
        "k=a=b",
        "k=\u{7f}",
        "1digit=x",
        "@vendor=x",
        many.as_str(),
        long.as_str(),
    ] {
        assert!(!valid_tracestate(invalid.as_bytes()), "{invalid:?}");
    }
}

/// Issue 23: members were trimmed of any ASCII whitespace, so a list ending in CR LF, or
/// holding a form feed, was accepted and its line breaks kept; only spaces and tabs may
/// surround a member.
#[test]
fn a_tracestate_with_a_line_break_or_form_feed_is_refused() {
    for invalid in [
        "k=v\r\n",
        "k=v\n",
        "\nk=v",
        "k=v,\r",
        "\u{c}k=v",
        "k=v\r\n,j=w",
    ] {
        assert!(!valid_tracestate(invalid.as_bytes()), "{invalid:?}");
    }
    assert!(valid_tracestate(b"\tk=v\t, j=w ,\t"));
}

#[test]
fn the_collector_url_must_be_http_and_carry_no_credentials() {
    assert!(Endpoint::parse("http://127.0.0.1:4318/v1/traces").is_ok());
    assert!(Endpoint::parse("https://collector.example/v1/traces").is_ok());
    for (text, error) in [
        ("127.0.0.1:4318", EndpointError::NotUrl),
        ("collector:4318/v1/traces", EndpointError::Scheme),
        ("/v1/traces", EndpointError::NotUrl),
        ("grpc://127.0.0.1:4317", EndpointError::Scheme),
        (
            "http://user:pass@127.0.0.1:4318/v1/traces",
            EndpointError::Credentials,
        ),
        (
            "http://token@127.0.0.1:4318/v1/traces",
            EndpointError::Credentials,
        ),
        ("http://127.0.0.1:4318/v1/traces#x", EndpointError::Fragment),
    ] {
        assert_eq!(Endpoint::parse(text).map(|_| ()), Err(error), "{text}");
    }
}

use std::time::{Duration, UNIX_EPOCH};

use super::*;

fn record(outcome: Outcome) -> CallRecord {
    CallRecord {
        time: UNIX_EPOCH + Duration::from_micros(1_764_590_400_123_456),
        request_id: 0xab,
        jsonrpc_id: RawValue::from_string("\"call-7\"".into()).ok(),
        method: None,
        tool: Some(Arc::new(ToolFacts {
            name: "get_pet".into(),
            api: "pets".into(),
            endpoint: "read".into(),
            method: "GET".into(),
            template: "/pets/{petId}".into(),
        })),
        subject: None,
        client: RawValue::from_string(r#"{"name":"inspector","version":"1.2","x":[1]}"#.into())
            .ok(),
        outcome,
        upstream_status: Some(404),
        attempts: 1,
        retries: 0,
        duration: Duration::from_micros(900),
        upstream_duration: Duration::from_micros(700),
        bytes_in: 120,
        bytes_out: 480,
        error_code: None,
        confirmation: None,
        state_failure: None,
        operation: None,
    }
}

#[test]
fn an_audit_line_is_one_json_object_and_its_newline() {
    let mut line = Vec::new();
    audit::write_line(&record(Outcome::ApiError), &mut line);
    let text = String::from_utf8(line).expect("UTF-8");
    expect_test::expect![[r#"
        {"time":"2025-12-01T12:00:00.123456Z","request_id":"00000000000000ab","jsonrpc_id":"call-7","tool":"get_pet","api":"pets","endpoint":"read","subject":"anonymous","client_name":"inspector","client_version":"1.2","outcome":"api_error","upstream_method":"GET","upstream_path":"/pets/{petId}","upstream_status":404,"attempts":1,"duration_us":900,"upstream_us":700,"bytes_in":120,"bytes_out":480}
    "#]]
    .assert_eq(&text);
}

#[test]
fn a_long_running_operation_not_followed_to_its_end_leaves_its_status_location() {
    let mut line = Vec::new();
    let mut running = record(Outcome::UpstreamFailure);
    running.upstream_status = None;
    running.operation = Some("https://api.example/jobs/7?view=\"full\"".to_string());
    audit::write_line(&running, &mut line);
    let value: serde_json::Value = serde_json::from_slice(&line).expect("JSON");
    assert_eq!(
        value["operation_status"],
        "https://api.example/jobs/7?view=\"full\""
    );
}

#[test]
fn a_refusal_names_its_reason() {
    let mut line = Vec::new();
    let mut refused = record(Outcome::Refused(Reason::HeaderMismatch));
    refused.tool = None;
    refused.upstream_status = None;
    refused.attempts = 0;
    audit::write_line(&refused, &mut line);
    let value: serde_json::Value = serde_json::from_slice(&line).expect("JSON");
    assert_eq!(value["outcome"], "refused");
    assert_eq!(value["reason"], "header_mismatch");
    assert!(value.get("tool").is_none() && value.get("upstream_path").is_none());
}

#[test]
fn outcomes_follow_the_fault() {
    let answer = |status: u16, authenticated: bool| {
        Ok(upstream::Answer {
            http: upstream::Http {
                status: http::StatusCode::from_u16(status).expect("status"),
                headers: Vec::new(),
            },
            essence: None,
            body: Vec::new(),
            json: None,
            location: None,
            authenticated,
            handling: upstream::Handling::default(),
        })
    };
    assert_eq!(Outcome::of(&answer(200, false)), Outcome::Ok);
    assert_eq!(Outcome::of(&answer(404, false)), Outcome::ApiError);
    assert_eq!(Outcome::of(&answer(503, true)), Outcome::ApiError);
    assert_eq!(Outcome::status_of(&answer(503, true)), Some(503));
    assert_eq!(
        Outcome::of(&Err(CallError::Connect)),
        Outcome::UpstreamFailure
    );
    assert_eq!(
        Outcome::of(&Err(CallError::Request)),
        Outcome::GatewayFailure
    );
    assert_eq!(Outcome::status_of(&Err(CallError::Connect)), None);
}

#[test]
fn metrics_count_a_call_by_tool_and_outcome() {
    let metrics = Metrics::new();
    let observer = Observer::new(None, Some(metrics.clone()));
    let meter = observer.tool("get_pet", "", "GET", "/pets/{petId}");
    let mut call = record(Outcome::ApiError);
    call.attempts = 3;
    call.retries = 2;
    observer.record(call, Some(&meter));
    observer.record(record(Outcome::Refused(Reason::Scope)), Some(&meter));
    observer.catalog(2, "sha256:00");
    let text = metrics.render();
    for expected in [
        "ferry_tool_calls_total{tool=\"get_pet\",outcome=\"api_error\"} 1",
        "ferry_tool_calls_total{tool=\"get_pet\",outcome=\"refused\"} 1",
        "ferry_refused_total{reason=\"scope\"} 1",
        "ferry_refused_total{reason=\"host\"} 0",
        "ferry_upstream_retries_total{tool=\"get_pet\"} 2",
        "ferry_upstream_responses_total{tool=\"get_pet\",class=\"4xx\"} 2",
        "ferry_call_duration_seconds_bucket{tool=\"get_pet\",le=\"0.00025\"} 2",
        "ferry_tools_served 2",
        "ferry_catalog_info{digest=\"sha256:00\"} 1",
        "# HELP ferry_tool_calls_total tools/call requests answered, by tool and outcome",
    ] {
        assert!(text.contains(expected), "{expected:?} not in:\n{text}");
    }
}

/// With several APIs and endpoints, a tool's series also name its API and the endpoint that
/// served it: one tool served by two endpoints is counted apart.
#[test]
fn metrics_name_the_api_and_the_endpoint_where_there_are_several() {
    let metrics = Metrics::new();
    let observer = Observer::new(None, Some(metrics.clone()));
    for endpoint in ["read", "admin"] {
        let meter =
            observer
                .for_endpoint(endpoint)
                .tool("pets_get_pet", "pets", "GET", "/pets/{petId}");
        observer.record(record(Outcome::Ok), Some(&meter));
    }
    let text = metrics.render();
    for expected in [
        "ferry_tool_calls_total{tool=\"pets_get_pet\",api=\"pets\",endpoint=\"read\",outcome=\"ok\"} 1",
        "ferry_tool_calls_total{tool=\"pets_get_pet\",api=\"pets\",endpoint=\"admin\",outcome=\"ok\"} 1",
    ] {
        assert!(text.contains(expected), "{expected:?} not in:\n{text}");
    }
}

#[test]
fn the_catalog_served_again_keeps_its_info_at_one_and_another_sets_it_to_zero() {
    let metrics = Metrics::new();
    let observer = Observer::new(None, Some(metrics.clone()));
    observer.catalog(2, "sha256:00");
    observer.catalog(2, "sha256:00");
    let text = metrics.render();
    assert!(
        text.contains("ferry_catalog_info{digest=\"sha256:00\"} 1"),
        "{text}"
    );
    observer.catalog(3, "sha256:01");
    let text = metrics.render();
    assert!(
        text.contains("ferry_catalog_info{digest=\"sha256:00\"} 0"),
        "{text}"
    );
    assert!(
        text.contains("ferry_catalog_info{digest=\"sha256:01\"} 1"),
        "{text}"
    );
}

#[test]
fn readiness_needs_a_catalog_and_when_asked_a_connection() {
    let plain = Readiness::new(None);
    assert_eq!(plain.check(), Err("no catalog loaded"));
    plain.catalog_loaded();
    assert_eq!(plain.check(), Ok(()));
    let checked = Readiness::new(Some(Duration::from_secs(10)));
    checked.catalog_loaded();
    assert_eq!(
        checked.check(),
        Err("the upstream has not accepted a connection yet")
    );
}

#[test]
fn values_are_escaped_where_they_need_it() {
    let mut odd = record(Outcome::ProtocolError);
    odd.subject = Some("ci \"bot\"\\\n\u{e9}".into());
    odd.error_code = Some(-32602);
    odd.tool = None;
    let mut line = Vec::new();
    audit::write_line(&odd, &mut line);
    assert_eq!(line.last(), Some(&b'\n'));
    assert_eq!(line.iter().filter(|byte| **byte == b'\n').count(), 1);
    let value: serde_json::Value = serde_json::from_slice(&line).expect("JSON");
    assert_eq!(value["subject"], "ci \"bot\"\\\n\u{e9}");
    assert_eq!(value["error_code"], -32602);
    assert_eq!(value["outcome"], "protocol_error");
}

/// Issue 23: the request's id was written whole, so a caller could put a megabyte into every
/// record; it is bounded as the client's name and version are.
#[test]
fn a_long_jsonrpc_id_is_cut_and_marked() {
    let line = |id: String| {
        let mut record = record(Outcome::Ok);
        record.jsonrpc_id = RawValue::from_string(id).ok();
        let mut line = Vec::new();
        audit::write_line(&record, &mut line);
        let value: serde_json::Value = serde_json::from_slice(&line).expect("JSON");
        value
    };
    let short = line("\"call-7\"".into());
    assert_eq!(short["jsonrpc_id"], "call-7");
    assert!(short.get("jsonrpc_id_cut").is_none());
    assert_eq!(line("7".into())["jsonrpc_id"], 7);
    let long = line(format!("\"{}\"", "é".repeat(100_000)));
    assert_eq!(long["jsonrpc_id"], "é".repeat(64));
    assert_eq!(long["jsonrpc_id_cut"], true);
    let escaped = line(format!("\"{}\"", "\\n".repeat(1_000)));
    assert_eq!(escaped["jsonrpc_id"], "\n".repeat(128));
    let digits = line("1".repeat(10_000));
    assert_eq!(digits["jsonrpc_id"], "1".repeat(128));
    assert_eq!(digits["jsonrpc_id_cut"], true);
}

/// Issue 23: an id whose escapes are not Unicode text (a lone surrogate) was written as the
/// client wrote it, JSON that serde_json, and so many a log reader, refuses: the whole line
/// was lost to them. It is written as a string of what the client wrote.
#[test]
fn an_id_that_is_not_unicode_text_is_written_as_a_string_of_it() {
    let line = |id: &str| {
        let mut record = record(Outcome::Ok);
        record.jsonrpc_id = Some(RawValue::from_string(id.into()).expect("raw JSON"));
        let mut line = Vec::new();
        audit::write_line(&record, &mut line);
        let value: serde_json::Value = serde_json::from_slice(&line).expect("JSON");
        value
    };
    let lone = line(r#""a\ud800""#);
    assert_eq!(lone["jsonrpc_id"], r#""a\ud800""#);
    assert!(lone.get("jsonrpc_id_cut").is_none());
    let long = line(&format!(r#""\udc00{}""#, "x".repeat(200)));
    assert_eq!(long["jsonrpc_id"], format!(r#""\udc00{}"#, "x".repeat(121)));
    assert_eq!(long["jsonrpc_id_cut"], true);
    // A pair is text, and kept as written.
    assert_eq!(line(r#""\ud83d\ude00""#)["jsonrpc_id"], "\u{1f600}");
}

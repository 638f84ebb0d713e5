//! RFC 9457 Problem Details survive as data: each case serves one error answer and checks
//! that a program recovers every member and the observed HTTP facts from the tool result,
//! without reading prose, and that nothing was added.

use expect_test::{Expect, expect};
use ferry::mcp::ToolResult;
use http::Method;
use serde_json::{Value, json};

use crate::upstream::{Reply, TestUpstream, call, respond, tool};

/// Serves `body` once with `status` and `headers`, calls a tool, returns the result.
async fn answer(status: u16, headers: &[(&str, &str)], body: &str) -> ToolResult {
    let headers: Vec<(String, String)> = headers
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    let body = body.to_string();
    let upstream = TestUpstream::start(move |_, _| {
        let headers: Vec<(&str, &str)> = headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        Reply::Now(respond(status, &headers, body.clone()))
    })
    .await;
    let tool = tool("getPet", Method::GET, "/pets/7", Vec::new());
    call(&upstream.base, &tool, json!({})).await
}

/// The embedded resource carrying the body.
fn carried(result: &ToolResult) -> &Value {
    let resources: Vec<&Value> = result
        .content
        .iter()
        .filter(|block| block["type"] == "resource")
        .collect();
    assert_eq!(resources.len(), 1, "one resource: {result:?}");
    &resources[0]["resource"]
}

/// What every problem result must be: an error; a leading text block; then one resource
/// labelled `application/problem+json` whose text is the body byte for byte, under the
/// tool's URI; the observed status and headers in `_meta` apart from the body; and nothing
/// else (no structured content, no flags, no member added or taken).
fn assert_problem_kept(result: &ToolResult, body: &str, status: u16) -> Value {
    assert!(result.is_error);
    assert_eq!(result.content.len(), 2, "{result:?}");
    assert_eq!(result.content[0]["type"], "text");
    let resource = carried(result);
    let keys: Vec<&String> = resource.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["uri", "mimeType", "text"]);
    assert_eq!(resource["uri"], "ferry://tools/getPet/response");
    assert_eq!(resource["mimeType"], "application/problem+json");
    assert_eq!(
        resource["text"].as_str(),
        Some(body),
        "the body exactly as received"
    );
    assert!(result.structured_content.is_none());
    let meta_keys: Vec<&String> = result.meta.keys().collect();
    assert_eq!(
        meta_keys,
        ["dev.ferry/http"],
        "nothing ferry did, nothing invented"
    );
    assert_eq!(result.meta["dev.ferry/http"]["status"], status);
    let recovered: Value = serde_json::from_str(resource["text"].as_str().unwrap_or_default())
        .expect("the problem parses");
    let original: Value = serde_json::from_str(body).expect("the test body parses");
    assert_eq!(recovered, original, "every member recoverable, none added");
    recovered
}

fn check_lead(result: &ToolResult, expect: Expect) {
    expect.assert_eq(result.content[0]["text"].as_str().unwrap_or_default());
}

const PROBLEM: (&str, &str) = ("content-type", "application/problem+json");

#[tokio::test]
async fn explicit_type_and_every_standard_member_are_kept() {
    let body = r#"{"type":"https://example.com/probs/out-of-credit","title":"You do not have enough credit.","status":403,"detail":"Your current balance is 30, but that costs 50.","instance":"/account/12345/msgs/abc"}"#;
    let result = answer(403, &[PROBLEM], body).await;
    let problem = assert_problem_kept(&result, body, 403);
    assert_eq!(problem["type"], "https://example.com/probs/out-of-credit");
    assert_eq!(problem["instance"], "/account/12345/msgs/abc");
    check_lead(
        &result,
        expect![[r#"
            the upstream answered 403 Forbidden
            title: You do not have enough credit.
            detail: Your current balance is 30, but that costs 50.
            type: https://example.com/probs/out-of-credit
            status: 403"#]],
    );
}

#[tokio::test]
async fn an_absent_type_stays_absent() {
    let body = r#"{"title":"Not Found","status":404}"#;
    let result = answer(404, &[PROBLEM], body).await;
    let problem = assert_problem_kept(&result, body, 404);
    assert!(problem.get("type").is_none());
    let everything = serde_json::to_string(&result).expect("json");
    assert!(
        !everything.contains("about:blank"),
        "no default type made up"
    );
    check_lead(
        &result,
        expect![[r#"
            the upstream answered 404 Not Found
            title: Not Found
            status: 404"#]],
    );
}

#[tokio::test]
async fn two_types_sharing_one_status_stay_distinguishable() {
    let conflict =
        r#"{"type":"https://api.example/probs/version-conflict","title":"Conflict","status":409}"#;
    let duplicate =
        r#"{"type":"https://api.example/probs/duplicate-name","title":"Conflict","status":409}"#;
    let first = answer(409, &[PROBLEM], conflict).await;
    let second = answer(409, &[PROBLEM], duplicate).await;
    let (a, b) = (
        assert_problem_kept(&first, conflict, 409),
        assert_problem_kept(&second, duplicate, 409),
    );
    assert_eq!(first.meta, second.meta, "same status, same headers");
    assert_ne!(a["type"], b["type"]);
}

#[tokio::test]
async fn scalar_extension_members_are_kept() {
    let body = r#"{"type":"https://example.com/probs/out-of-credit","title":"You do not have enough credit.","balance":30,"accounts":["/account/12345","/account/67890"],"ratio":0.1000,"big":12345678901234567890123,"ok":false,"none":null}"#;
    let result = answer(403, &[PROBLEM], body).await;
    assert_problem_kept(&result, body, 403);
    // Numbers are kept as written: the text is the body, not a re-serialization.
    let text = carried(&result)["text"].as_str().unwrap_or_default();
    assert!(text.contains("0.1000") && text.contains("12345678901234567890123"));
}

#[tokio::test]
async fn nested_extension_members_keep_their_structure() {
    let body = r##"{
  "type": "https://example.net/validation-error",
  "title": "Your request is not valid.",
  "errors": [
    {"detail": "must be a positive integer", "pointer": "#/age"},
    {"detail": "must be 'green', 'red' or 'blue'", "pointer": "#/profile/color"}
  ],
  "context": {"request": {"id": "r-1", "attempt": 2}}
}"##;
    let result = answer(422, &[PROBLEM], body).await;
    let problem = assert_problem_kept(&result, body, 422);
    assert_eq!(problem["errors"][1]["pointer"], "#/profile/color");
    assert_eq!(problem["context"]["request"]["attempt"], 2);
}

#[tokio::test]
async fn unknown_extension_members_are_kept_as_they_are() {
    let body = r#"{"type":"urn:x:odd","x-vendor":{"deep":[[1,{"a":[]}],{}],"emoji":"🐾","escaped":"line\nbreak \"quoted\""},"title":"Odd","weird key with spaces":true,"status":400}"#;
    let result = answer(400, &[PROBLEM], body).await;
    let problem = assert_problem_kept(&result, body, 400);
    assert_eq!(problem["x-vendor"]["emoji"], "🐾");
    assert_eq!(problem["weird key with spaces"], true);
}

#[tokio::test]
async fn localized_text_with_one_type_is_told_apart_by_type() {
    let english = r#"{"type":"https://api.example/probs/not-found","title":"Pet not found","detail":"No pet has id 7."}"#;
    let german = r#"{"type":"https://api.example/probs/not-found","title":"Haustier nicht gefunden","detail":"Kein Haustier hat die ID 7."}"#;
    let first = answer(404, &[PROBLEM, ("content-language", "en")], english).await;
    let second = answer(404, &[PROBLEM, ("content-language", "de")], german).await;
    let (a, b) = (
        assert_problem_kept(&first, english, 404),
        assert_problem_kept(&second, german, 404),
    );
    assert_eq!(a["type"], b["type"]);
    assert_ne!(a["title"], b["title"]);
    assert_eq!(
        second.meta["dev.ferry/http"]["headers"]["content-language"],
        "de"
    );
}

#[tokio::test]
async fn an_observed_502_and_a_body_saying_503_each_stay_where_they_belong() {
    let body = r#"{"type":"https://api.example/probs/unavailable","title":"Service Unavailable","status":503}"#;
    let result = answer(502, &[PROBLEM, ("retry-after", "30")], body).await;
    let problem = assert_problem_kept(&result, body, 502);
    assert_eq!(problem["status"], 503);
    assert_eq!(
        result.meta["dev.ferry/http"],
        json!({"status": 502, "headers": {"content-type": "application/problem+json", "retry-after": "30"}})
    );
    check_lead(
        &result,
        expect![[r#"
            the upstream answered 502 Bad Gateway
            title: Service Unavailable
            type: https://api.example/probs/unavailable
            status: 503"#]],
    );
}

#[tokio::test]
async fn a_json_error_that_is_not_a_problem_is_kept_with_its_own_type() {
    let body = r#"{"error":{"code":"not_found","message":"no such pet"}}"#;
    let result = answer(404, &[("content-type", "application/json")], body).await;
    assert!(result.is_error);
    let resource = carried(&result);
    assert_eq!(resource["mimeType"], "application/json");
    assert_eq!(resource["text"], body);
    assert!(result.structured_content.is_none());
    check_lead(&result, expect!["the upstream answered 404 Not Found"]);
}

#[tokio::test]
async fn prose_about_retrying_adds_no_retry_flag() {
    let body = r#"{"type":"https://api.example/probs/busy","title":"Busy","detail":"Please retry later; this is temporary and you may try again."}"#;
    let result = answer(429, &[PROBLEM, ("retry-after", "5")], body).await;
    assert_problem_kept(&result, body, 429);
    let everything = serde_json::to_string(&result).expect("json");
    for invented in ["retryable", "retriable", "category", "transient"] {
        assert!(!everything.contains(invented), "{invented} in {everything}");
    }
    assert_eq!(result.meta["dev.ferry/http"]["headers"]["retry-after"], "5");
}

#[tokio::test]
async fn a_charset_parameter_keeps_the_problem_type_and_the_header_verbatim() {
    let body = r#"{"title":"Gone","status":410}"#;
    let result = answer(
        410,
        &[("content-type", "application/problem+json; charset=utf-8")],
        body,
    )
    .await;
    assert_problem_kept(&result, body, 410);
    assert_eq!(
        result.meta["dev.ferry/http"]["headers"]["content-type"],
        "application/problem+json; charset=utf-8"
    );
}

#[tokio::test]
async fn whitespace_and_member_order_are_kept() {
    let body = "{ \"status\" : 400,\n\t\"title\":\"Bad\" , \"type\" : \"urn:a\" }\n";
    let result = answer(400, &[PROBLEM], body).await;
    assert_problem_kept(&result, body, 400);
}

#[tokio::test]
async fn a_cut_problem_is_no_longer_labelled_a_problem() {
    let body = format!(
        r#"{{"type":"urn:big","title":"Big","detail":"{}"}}"#,
        "x".repeat(5_000)
    );
    let upstream =
        TestUpstream::start(move |_, _| Reply::Now(respond(500, &[PROBLEM], body.clone()))).await;
    let mut tool = tool("getPet", Method::GET, "/pets/7", Vec::new());
    tool.operation_mut()
        .expect("an operation's tool")
        .call
        .max_response_bytes = 1_000;
    let result = call(&upstream.base, &tool, json!({})).await;
    assert!(result.is_error);
    let resource = carried(&result);
    assert_eq!(resource["mimeType"], "text/plain");
    assert_eq!(resource["text"].as_str().map(str::len), Some(1_000));
    assert_eq!(
        result.meta["dev.ferry/result"],
        json!({"truncated": true, "limitBytes": 1000})
    );
    assert_eq!(
        result.meta["dev.ferry/http"]["headers"]["content-type"],
        "application/problem+json"
    );
}

#[tokio::test]
async fn a_broken_problem_body_is_passed_on_as_text() {
    let body = r#"{"title": "Broken", "#;
    let result = answer(500, &[PROBLEM], body).await;
    let resource = carried(&result);
    assert_eq!(resource["mimeType"], "text/plain");
    assert_eq!(resource["text"], body);
}

#[tokio::test]
async fn html_and_text_error_bodies_keep_their_media_type() {
    let html = "<html><body><h1>502 Bad Gateway</h1></body></html>";
    let result = answer(502, &[("content-type", "text/html; charset=utf-8")], html).await;
    let resource = carried(&result);
    assert_eq!(resource["mimeType"], "text/html");
    assert_eq!(resource["text"], html);

    let result = answer(500, &[], "").await;
    assert!(result.is_error);
    assert_eq!(result.content.len(), 1, "no body, no resource");
    check_lead(
        &result,
        expect!["the upstream answered 500 Internal Server Error"],
    );
}

#[tokio::test]
async fn a_403_is_an_ordinary_error_the_model_can_act_on() {
    let body =
        r#"{"type":"https://api.example/probs/not-yours","title":"Not your pet","status":403}"#;
    let result = answer(403, &[PROBLEM], body).await;
    assert_problem_kept(&result, body, 403);
    let lead = result.content[0]["text"].as_str().unwrap_or_default();
    assert!(!lead.contains("configuration"), "{lead}");
}

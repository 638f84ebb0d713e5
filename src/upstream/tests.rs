//! Unit tests of request building and result shaping, without a network.

use std::borrow::Cow;

use expect_test::{Expect, expect};
use http::StatusCode;
use http::header::HeaderName;
use serde_json::json;

use super::address::join;
use super::credential::obtained_secrets;
use super::request::{Extras, Route, build, next_page_arguments};
use super::response::{Shaping, next_link, shape};
use super::retry::http_date;
use super::*;
use crate::access::UpstreamAuth;
use crate::catalog::{
    BodyEncoding, BodyPlacement, BodyPlan, ParameterLocation, ParameterPlan, ParameterStyle,
    RequestPlan,
};
use crate::client::Response;

fn plan(path: &str, parameters: Vec<ParameterPlan>) -> RequestPlan {
    RequestPlan::new(Method::GET, path, parameters)
}

/// The request line and headers each argument value produces, one case a line.
fn check_requests(plan: &RequestPlan, cases: &[Value], expect: Expect) {
    let route = Route::new(plan);
    let mut out = String::new();
    for case in cases {
        let arguments = case.as_object().cloned().unwrap_or_default();
        let line = match build(plan, &route, &arguments, Extras::default()) {
            Ok(prepared) => {
                let mut line = prepared.path_and_query;
                for (name, value) in &prepared.headers {
                    line.push_str(&format!(
                        " | {name}: {}",
                        String::from_utf8_lossy(value.as_bytes())
                    ));
                }
                line
            }
            Err(error) => format!("error: {error}"),
        };
        out.push_str(&format!("{case} => {line}\n"));
    }
    expect.assert_eq(&out);
}

#[test]
fn path_styles_follow_openapi() {
    let cases = [
        json!({"id": 5}),
        json!({"id": [3, 4, 5]}),
        json!({"id": {"role": "admin", "firstName": "Alex"}}),
    ];
    for (style, explode, expect) in [
        (
            ParameterStyle::Simple,
            false,
            expect![[r#"
                {"id":5} => /users/5
                {"id":[3,4,5]} => /users/3,4,5
                {"id":{"role":"admin","firstName":"Alex"}} => /users/role,admin,firstName,Alex
            "#]],
        ),
        (
            ParameterStyle::Simple,
            true,
            expect![[r#"
                {"id":5} => /users/5
                {"id":[3,4,5]} => /users/3,4,5
                {"id":{"role":"admin","firstName":"Alex"}} => /users/role=admin,firstName=Alex
            "#]],
        ),
        (
            ParameterStyle::Label,
            false,
            expect![[r#"
                {"id":5} => /users/.5
                {"id":[3,4,5]} => /users/.3,4,5
                {"id":{"role":"admin","firstName":"Alex"}} => /users/.role,admin,firstName,Alex
            "#]],
        ),
        (
            ParameterStyle::Label,
            true,
            expect![[r#"
                {"id":5} => /users/.5
                {"id":[3,4,5]} => /users/.3.4.5
                {"id":{"role":"admin","firstName":"Alex"}} => /users/.role=admin.firstName=Alex
            "#]],
        ),
        (
            ParameterStyle::Matrix,
            false,
            expect![[r#"
                {"id":5} => /users/;id=5
                {"id":[3,4,5]} => /users/;id=3,4,5
                {"id":{"role":"admin","firstName":"Alex"}} => /users/;id=role,admin,firstName,Alex
            "#]],
        ),
        (
            ParameterStyle::Matrix,
            true,
            expect![[r#"
                {"id":5} => /users/;id=5
                {"id":[3,4,5]} => /users/;id=3;id=4;id=5
                {"id":{"role":"admin","firstName":"Alex"}} => /users/;role=admin;firstName=Alex
            "#]],
        ),
    ] {
        let plan = plan(
            "/users/{id}",
            vec![ParameterPlan::new(
                "id",
                ParameterLocation::Path,
                style,
                explode,
            )],
        );
        check_requests(&plan, &cases, expect);
    }
}

#[test]
fn hostile_path_values_stay_in_one_segment() {
    let plan = plan(
        "/pets/{petId}/toys",
        vec![ParameterPlan::new(
            "petId",
            ParameterLocation::Path,
            ParameterStyle::Simple,
            false,
        )],
    );
    let cases = [
        json!({"petId": "../admin"}),
        json!({"petId": "%2e%2e"}),
        json!({"petId": "a?b=c"}),
        json!({"petId": "a#frag"}),
        json!({"petId": "a/b"}),
        json!({"petId": "//evil.example/x"}),
        json!({"petId": "@evil.example"}),
        json!({"petId": "é ü"}),
        json!({"petId": ".."}),
        json!({"petId": "."}),
        json!({"petId": ""}),
    ];
    check_requests(
        &plan,
        &cases,
        expect![[r#"
            {"petId":"../admin"} => /pets/..%2Fadmin/toys
            {"petId":"%2e%2e"} => /pets/%252e%252e/toys
            {"petId":"a?b=c"} => /pets/a%3Fb%3Dc/toys
            {"petId":"a#frag"} => /pets/a%23frag/toys
            {"petId":"a/b"} => /pets/a%2Fb/toys
            {"petId":"//evil.example/x"} => /pets/%2F%2Fevil.example%2Fx/toys
            {"petId":"@evil.example"} => /pets/%40evil.example/toys
            {"petId":"é ü"} => /pets/%C3%A9%20%C3%BC/toys
            {"petId":".."} => error: invalid argument "petId": cannot be "." or "..": it is a path segment
            {"petId":"."} => error: invalid argument "petId": cannot be "." or "..": it is a path segment
            {"petId":""} => error: invalid argument "petId": cannot be empty: it is a path segment
        "#]],
    );
}

#[test]
fn query_styles_follow_openapi() {
    let cases = [
        json!({"id": "a b&c"}),
        json!({"id": [3, 4, 5]}),
        json!({"id": {"role": "admin", "firstName": "Alex"}}),
        json!({"id": []}),
        json!({"id": null}),
    ];
    for (style, explode, expect) in [
        (
            ParameterStyle::Form,
            true,
            expect![[r#"
                {"id":"a b&c"} => /q?id=a%20b%26c
                {"id":[3,4,5]} => /q?id=3&id=4&id=5
                {"id":{"role":"admin","firstName":"Alex"}} => /q?role=admin&firstName=Alex
                {"id":[]} => /q
                {"id":null} => /q
            "#]],
        ),
        (
            ParameterStyle::Form,
            false,
            expect![[r#"
                {"id":"a b&c"} => /q?id=a%20b%26c
                {"id":[3,4,5]} => /q?id=3,4,5
                {"id":{"role":"admin","firstName":"Alex"}} => /q?id=role,admin,firstName,Alex
                {"id":[]} => /q
                {"id":null} => /q
            "#]],
        ),
        (
            ParameterStyle::SpaceDelimited,
            false,
            expect![[r#"
                {"id":"a b&c"} => /q?id=a%20b%26c
                {"id":[3,4,5]} => /q?id=3%204%205
                {"id":{"role":"admin","firstName":"Alex"}} => /q?id=role%20admin%20firstName%20Alex
                {"id":[]} => /q
                {"id":null} => /q
            "#]],
        ),
        (
            ParameterStyle::PipeDelimited,
            false,
            expect![[r#"
                {"id":"a b&c"} => /q?id=a%20b%26c
                {"id":[3,4,5]} => /q?id=3|4|5
                {"id":{"role":"admin","firstName":"Alex"}} => /q?id=role|admin|firstName|Alex
                {"id":[]} => /q
                {"id":null} => /q
            "#]],
        ),
        (
            ParameterStyle::DeepObject,
            true,
            expect![[r#"
                {"id":"a b&c"} => /q?id=a%20b%26c
                {"id":[3,4,5]} => /q?id[0]=3&id[1]=4&id[2]=5
                {"id":{"role":"admin","firstName":"Alex"}} => /q?id[role]=admin&id[firstName]=Alex
                {"id":[]} => /q
                {"id":null} => /q
            "#]],
        ),
    ] {
        let plan = plan(
            "/q",
            vec![ParameterPlan::new(
                "id",
                ParameterLocation::Query,
                style,
                explode,
            )],
        );
        check_requests(&plan, &cases, expect);
    }
}

#[test]
fn deep_objects_nest_and_allow_reserved_keeps_slashes() {
    let mut filter = ParameterPlan::new(
        "filter",
        ParameterLocation::Query,
        ParameterStyle::DeepObject,
        true,
    );
    filter.argument = "filter".into();
    let mut path = ParameterPlan::new("path", ParameterLocation::Query, ParameterStyle::Form, true);
    path.allow_reserved = true;
    let mut json_param = ParameterPlan::new(
        "where",
        ParameterLocation::Query,
        ParameterStyle::Form,
        true,
    );
    json_param.json_content = true;
    let plan = plan("/q", vec![filter, path, json_param]);
    check_requests(
        &plan,
        &[json!({
            "filter": {"created": {"gt": 5}, "tags": ["a", "b"]},
            "path": "a/b:c?d&e=f#g",
            "where": {"name": "x y"}
        })],
        expect![[r#"
            {"filter":{"created":{"gt":5},"tags":["a","b"]},"path":"a/b:c?d&e=f#g","where":{"name":"x y"}} => /q?filter[created][gt]=5&filter[tags][0]=a&filter[tags][1]=b&path=a/b:c?d%26e%3Df%23g&where=%7B%22name%22%3A%22x%20y%22%7D
        "#]],
    );
}

#[test]
fn headers_and_cookies_refuse_line_breaks() {
    let plan = plan(
        "/h",
        vec![
            ParameterPlan::new(
                "X-Trace",
                ParameterLocation::Header,
                ParameterStyle::Simple,
                false,
            ),
            ParameterPlan::new(
                "session",
                ParameterLocation::Cookie,
                ParameterStyle::Form,
                true,
            ),
        ],
    );
    check_requests(
        &plan,
        &[
            json!({"X-Trace": [1, 2], "session": "abc"}),
            json!({"X-Trace": {"a": 1, "b": 2}}),
            json!({"session": "a; admin=1"}),
            json!({"session": ["x", "y"]}),
            json!({"X-Trace": "a\r\nInjected: yes"}),
            json!({"X-Trace": "a\u{0}b"}),
            json!({"X-Trace": "a\u{7}b"}),
            json!({"session": "a\nb"}),
        ],
        expect![[r#"
            {"X-Trace":[1,2],"session":"abc"} => /h | x-trace: 1,2 | cookie: session=abc
            {"X-Trace":{"a":1,"b":2}} => /h | x-trace: a,1,b,2
            {"session":"a; admin=1"} => /h | cookie: session=a%3B%20admin%3D1
            {"session":["x","y"]} => /h | cookie: session=x; session=y
            {"X-Trace":"a\r\nInjected: yes"} => error: invalid argument "X-Trace": contains CR, LF or NUL, which cannot be sent in a header or cookie
            {"X-Trace":"a\u0000b"} => error: invalid argument "X-Trace": contains CR, LF or NUL, which cannot be sent in a header or cookie
            {"X-Trace":"a\u0007b"} => error: invalid argument "X-Trace": contains a control character, which a header cannot carry
            {"session":"a\nb"} => error: invalid argument "session": contains CR, LF or NUL, which cannot be sent in a header or cookie
        "#]],
    );
}

#[test]
fn a_querystring_argument_is_the_whole_query_written_as_a_form() {
    let plan = plan(
        "/files",
        vec![ParameterPlan::new(
            "filter",
            ParameterLocation::QueryString,
            ParameterStyle::Form,
            true,
        )],
    );
    check_requests(
        &plan,
        &[
            json!({"filter": {"owner": "me & you", "size": [1, 2], "empty": "", "none": null}}),
            json!({"filter": {"a=b": "c&d", "path": "/x?y#z"}}),
            json!({"filter": {}}),
            json!({}),
            json!({"filter": "owner=me"}),
        ],
        expect![[r#"
            {"filter":{"owner":"me & you","size":[1,2],"empty":"","none":null}} => /files?owner=me%20%26%20you&size=1&size=2&empty=
            {"filter":{"a=b":"c&d","path":"/x?y#z"}} => /files?a%3Db=c%26d&path=%2Fx%3Fy%23z
            {"filter":{}} => /files
            {} => /files
            {"filter":"owner=me"} => error: invalid argument "filter": must be an object: its properties are the query string's items
        "#]],
    );
    // The query credential ferry adds goes after it; a cursor replaces it, as any query.
    let route = Route::new(&plan);
    let extras = Extras {
        page_size: None,
        link_cursor: Some("cursor"),
        query_credential: Some(("api_key", "s3cret")),
    };
    let url = |arguments: Value| {
        let arguments = arguments.as_object().cloned().unwrap_or_default();
        match build(&plan, &route, &arguments, extras) {
            Ok(prepared) => prepared.path_and_query,
            Err(error) => error.to_string(),
        }
    };
    expect!["/files?owner=me&api_key=s3cret"].assert_eq(&url(json!({"filter": {"owner": "me"}})));
    expect!["/files?owner=me&page=2&api_key=s3cret"].assert_eq(&url(
        json!({"cursor": "owner=me&page=2", "filter": {"owner": "me"}}),
    ));
    expect![[r#"invalid argument "filter": cannot be given with "cursor", whose query sets it otherwise: the cursor already holds the next page's query; give "cursor" with the other arguments and leave "filter" out"#]]
        .assert_eq(&url(json!({"cursor": "owner=you", "filter": {"owner": "me"}})));
}

#[test]
fn a_cookie_style_cookie_is_sent_as_given_and_cannot_end_early() {
    let cookie = |explode| {
        plan(
            "/c",
            vec![ParameterPlan::new(
                "color",
                ParameterLocation::Cookie,
                ParameterStyle::Cookie,
                explode,
            )],
        )
    };
    let cases = [
        json!({"color": "blue%20sky"}),
        json!({"color": ["blue", "black"]}),
        json!({"color": {"R": 100, "G": 200}}),
        json!({"color": "a; admin=1"}),
        json!({"color": {"a=b": 1}}),
        json!({"color": "a\nb"}),
    ];
    check_requests(
        &cookie(true),
        &cases,
        expect![[r#"
            {"color":"blue%20sky"} => /c | cookie: color=blue%20sky
            {"color":["blue","black"]} => /c | cookie: color=blue; color=black
            {"color":{"R":100,"G":200}} => /c | cookie: R=100; G=200
            {"color":"a; admin=1"} => error: invalid argument "color": contains `;` (or `=` in a key), which would end the cookie: `style: cookie` sends values as given, so escape them as the API reads them
            {"color":{"a=b":1}} => error: invalid argument "color": contains `;` (or `=` in a key), which would end the cookie: `style: cookie` sends values as given, so escape them as the API reads them
            {"color":"a\nb"} => error: invalid argument "color": contains CR, LF or NUL, which cannot be sent in a header or cookie
        "#]],
    );
    check_requests(
        &cookie(false),
        &cases[1..3],
        expect![[r#"
            {"color":["blue","black"]} => /c | cookie: color=blue,black
            {"color":{"R":100,"G":200}} => /c | cookie: color=R,100,G,200
        "#]],
    );
}

#[test]
fn framing_headers_cannot_be_set_by_arguments() {
    let plan = plan(
        "/h",
        vec![ParameterPlan::new(
            "Host",
            ParameterLocation::Header,
            ParameterStyle::Simple,
            false,
        )],
    );
    check_requests(
        &plan,
        &[json!({"Host": "evil.example"})],
        expect![[r#"
            {"Host":"evil.example"} => error: invalid argument "Host": its header is set by the HTTP client, not by arguments
        "#]],
    );
}

#[test]
fn a_header_name_or_media_type_that_cannot_be_sent_refuses_only_calls_that_use_it() {
    let plan = plan(
        "/h",
        vec![ParameterPlan::new(
            "bad name",
            ParameterLocation::Header,
            ParameterStyle::Simple,
            false,
        )],
    );
    check_requests(
        &plan,
        &[json!({}), json!({"bad name": "x"})],
        expect![[r#"
            {} => /h
            {"bad name":"x"} => error: invalid argument "bad name": its header name cannot be sent
        "#]],
    );
    let placement = BodyPlacement::Argument("body".into());
    let plan = body_plan(BodyEncoding::Text, "text/plain\n", placement);
    expect![[r#"invalid argument "body": its media type cannot be sent"#]]
        .assert_eq(&body_of(&plan, json!({"body": "x"})));
}

#[test]
fn page_size_default_and_link_cursor_replace_the_query() {
    let plan = plan(
        "/items",
        vec![
            ParameterPlan::new(
                "per_page",
                ParameterLocation::Query,
                ParameterStyle::Form,
                true,
            ),
            ParameterPlan::new("q", ParameterLocation::Query, ParameterStyle::Form, true),
        ],
    );
    let route = Route::new(&plan);
    let extras = Extras {
        page_size: Some(("per_page", 20)),
        link_cursor: Some("cursor"),
        query_credential: Some(("api_key", "s3cret")),
    };
    let url = |arguments: Value| {
        let arguments = arguments.as_object().cloned().unwrap_or_default();
        match build(&plan, &route, &arguments, extras) {
            Ok(prepared) => prepared.path_and_query,
            Err(error) => error.to_string(),
        }
    };
    expect![[r#"/items?per_page=20&q=x&api_key=s3cret"#]].assert_eq(&url(json!({"q": "x"})));
    expect![[r#"/items?per_page=5&api_key=s3cret"#]].assert_eq(&url(json!({"per_page": 5})));
    expect![[r#"/items?page=2&per_page=20&x=%20%23y&api_key=s3cret"#]].assert_eq(&url(
        json!({"cursor": "page=2&per_page=20&api_key=stolen&x= #y"}),
    ));
    // Regression (issue 22): a query argument beside a cursor was silently dropped. One the
    // cursor agrees with goes (as the cursor says it); one it sets otherwise is refused.
    expect![[r#"/items?page=2&q=a+b&api_key=s3cret"#]]
        .assert_eq(&url(json!({"cursor": "page=2&q=a+b", "q": "a b"})));
    expect![[r#"invalid argument "q": cannot be given with "cursor", whose query sets it otherwise: the cursor already holds the next page's query; give "cursor" with the other arguments and leave "q" out"#]]
        .assert_eq(&url(json!({"cursor": "page=2&q=x", "q": "ignored"})));
    expect![[r#"invalid argument "per_page": cannot be given with "cursor", whose query sets it otherwise: the cursor already holds the next page's query; give "cursor" with the other arguments and leave "per_page" out"#]]
        .assert_eq(&url(json!({"cursor": "page=2", "per_page": 5})));
    let next = |arguments: Value, cursor: &str| {
        let arguments = arguments.as_object().cloned().unwrap_or_default();
        Value::Object(next_page_arguments(
            &plan, &route, &arguments, "cursor", cursor,
        ))
    };
    assert_eq!(
        next(
            json!({"q": "a b", "per_page": 5}),
            "page=2&q=a+b&per_page=5"
        ),
        json!({"q": "a b", "per_page": 5, "cursor": "page=2&q=a+b&per_page=5"})
    );
    assert_eq!(
        next(json!({"q": "a", "cursor": "page=2&q=a"}), "page=3&q=b"),
        json!({"cursor": "page=3&q=b"})
    );
}

fn body_plan(encoding: BodyEncoding, media_type: &str, placement: BodyPlacement) -> RequestPlan {
    let mut plan = RequestPlan::new(Method::POST, "/upload", Vec::new());
    plan.body = Some(BodyPlan {
        media_type: media_type.into(),
        encoding,
        placement,
        required: true,
        fields: Vec::new(),
    });
    plan
}

fn body_of(plan: &RequestPlan, arguments: Value) -> String {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    match build(plan, &Route::new(plan), &arguments, Extras::default()) {
        Ok(prepared) => match prepared.body {
            Some(body) => format!(
                "{}\n{}",
                String::from_utf8_lossy(body.content_type.as_bytes()),
                String::from_utf8_lossy(&body.bytes)
            ),
            None => "no body".into(),
        },
        Err(error) => error.to_string(),
    }
}

#[test]
fn bodies_are_encoded_by_their_media_type() {
    let merged = BodyPlacement::Merged(vec!["name".into(), "tags".into()]);
    let json_plan = body_plan(BodyEncoding::Json, "application/json", merged.clone());
    expect![[r#"
        application/json
        {"name":"Rex","tags":["a"]}"#]]
    .assert_eq(&body_of(
        &json_plan,
        json!({"name": "Rex", "tags": ["a"], "other": 1}),
    ));

    let form_plan = body_plan(
        BodyEncoding::Form,
        "application/x-www-form-urlencoded",
        merged,
    );
    expect![[r#"
        application/x-www-form-urlencoded
        name=R%20x%26y&tags=a&tags=b"#]]
    .assert_eq(&body_of(
        &form_plan,
        json!({"name": "R x&y", "tags": ["a", "b"]}),
    ));

    let text_plan = body_plan(
        BodyEncoding::Text,
        "text/plain",
        BodyPlacement::Argument("body".into()),
    );
    expect![[r#"
        text/plain
        hello
        world"#]]
    .assert_eq(&body_of(&text_plan, json!({"body": "hello\nworld"})));

    let binary_plan = body_plan(
        BodyEncoding::Binary,
        "image/png",
        BodyPlacement::Argument("body".into()),
    );
    expect![[r#"
        image/png
        PNG"#]]
    .assert_eq(&body_of(&binary_plan, json!({"body": "UE5H"})));
    expect![[r#"invalid argument "body": must be base64 (standard alphabet)"#]]
        .assert_eq(&body_of(&binary_plan, json!({"body": "not base64!"})));
}

#[test]
fn multipart_sends_file_arguments_as_raw_bytes() {
    let plan = body_plan(
        BodyEncoding::Multipart {
            files: vec!["file".into()],
        },
        "multipart/form-data",
        BodyPlacement::Merged(vec!["file".into(), "note".into(), "meta".into()]),
    );
    let body = body_of(
        &plan,
        json!({"file": "aGk=", "note": "a pet", "meta": {"k": 1}}),
    );
    let boundary = body
        .lines()
        .next()
        .and_then(|line| line.split("boundary=").nth(1))
        .unwrap_or_default()
        .to_string();
    expect![[r#"
        multipart/form-data; boundary=B
        --B
        Content-Disposition: form-data; name="file"; filename="file"
        Content-Type: application/octet-stream

        hi
        --B
        Content-Disposition: form-data; name="note"

        a pet
        --B
        Content-Disposition: form-data; name="meta"
        Content-Type: application/json

        {"k":1}
        --B--
    "#]]
    .assert_eq(&body.replace(&boundary, "B").replace("\r\n", "\n"));
}

#[test]
fn link_headers_name_the_next_page() {
    let link = r#"<https://api.example.com/items?page=1>; rel="prev", <https://api.example.com/items?page=3&x=a,b>; rel="next last""#;
    assert_eq!(
        next_link(link),
        Some("https://api.example.com/items?page=3&x=a,b")
    );
    assert_eq!(next_link(r#"<https://x/?page=1>; rel="prev""#), None);
    assert_eq!(
        next_link("<https://x/?page=2>; rel=next"),
        Some("https://x/?page=2")
    );
}

/// Regression (issue 22): `rel="next"` followed by another entry (GitHub's own order) was
/// missed, so ferry said there was no next page. RFC 8288's forms, and GitHub's real ones.
#[test]
fn link_headers_are_read_as_rfc_8288_writes_them() {
    // GitHub, first page of a repository's issues; then a middle page.
    let first = r#"<https://api.github.com/repositories/1300192/issues?page=2>; rel="next", <https://api.github.com/repositories/1300192/issues?page=515>; rel="last""#;
    assert_eq!(
        next_link(first),
        Some("https://api.github.com/repositories/1300192/issues?page=2")
    );
    let middle = r#"<https://api.github.com/repositories/1300192/issues?page=4>; rel="prev", <https://api.github.com/repositories/1300192/issues?page=6>; rel="next", <https://api.github.com/repositories/1300192/issues?page=515>; rel="last", <https://api.github.com/repositories/1300192/issues?page=1>; rel="first""#;
    assert_eq!(
        next_link(middle),
        Some("https://api.github.com/repositories/1300192/issues?page=6")
    );
    // GitHub's cursor pagination, with a comma inside the target.
    let cursor = r#"<https://api.github.com/orgs/ORG/audit-log?after=MS4yNjMzNTUzNDg5NDAzZSsxMnxRb3JRYXdFSmFlaGZ1a2xKd1ZmdmF3&before=>; rel="next""#;
    assert!(next_link(cursor).is_some_and(|target| target.contains("after=MS4y")));
    let last = r#"<https://api.github.com/repositories/1300192/issues?page=514>; rel="prev", <https://api.github.com/repositories/1300192/issues?page=1>; rel="first""#;
    assert_eq!(next_link(last), None);
    for (header, expected) in [
        // Several relation types in one `rel`, any case, either spacing.
        (r#"<https://x/2>; rel="last NEXT""#, Some("https://x/2")),
        (
            r#"<https://x/2>;rel=next;title="a, b; c""#,
            Some("https://x/2"),
        ),
        (
            r#"<https://x/2> ; title="say \"next\"" ; rel = "next""#,
            Some("https://x/2"),
        ),
        // A comma or semicolon inside a quoted title is not a separator.
        (
            r#"<https://x/1>; title="next, or not; rel=next", <https://x/2>; rel=next"#,
            Some("https://x/2"),
        ),
        // Only the first `rel` of a link-value counts.
        (r#"<https://x/1>; rel=prev; rel=next"#, None),
        // `nextpage` is not `next`.
        (r#"<https://x/1>; rel="nextpage""#, None),
        // Empty list elements are skipped.
        (
            r#", <https://x/1>; rel=prev,, <https://x/2>; rel=next"#,
            Some("https://x/2"),
        ),
        // Nothing after what cannot be read is trusted.
        (r#"junk, <https://x/2>; rel=next"#, None),
        (
            r#"<https://x/1>; title="never closed, <https://x/2>; rel=next"#,
            None,
        ),
        ("", None),
    ] {
        assert_eq!(next_link(header), expected, "{header}");
    }
}

#[test]
fn retry_after_reads_seconds_and_dates() {
    assert_eq!(
        http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
        Some(784_111_777)
    );
    assert_eq!(http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
    assert_eq!(http_date("yesterday"), None);
    let mut headers = http::HeaderMap::new();
    headers.insert(header::RETRY_AFTER, HeaderValue::from_static("3"));
    assert_eq!(retry_after(&headers), Some(Duration::from_secs(3)));
    headers.insert(
        header::RETRY_AFTER,
        HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
    );
    assert_eq!(retry_after(&headers), Some(Duration::ZERO));
}

#[test]
fn backoff_doubles_with_jitter_and_is_capped() {
    for attempt in 0..4 {
        let full = Duration::from_millis(100 << attempt);
        let delay = backoff(Duration::from_millis(100), attempt);
        assert!(
            delay >= full / 2 && delay <= full,
            "{delay:?} for attempt {attempt}"
        );
    }
    assert!(backoff(Duration::from_secs(5), 30) <= Duration::from_secs(10));
}

#[test]
fn idempotency_keys_are_fresh_v4_uuids() {
    let (a, b) = (uuid_v4(), uuid_v4());
    assert_ne!(a, b);
    assert_eq!(a.len(), 36);
    assert_eq!(&a[14..15], "4");
    assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
}

fn shaped(status: u16, headers: &[(&str, &str)], body: &str, shaping: Shaping<'_>) -> String {
    let mut map = http::HeaderMap::new();
    for (name, value) in headers {
        map.append(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    let observed = Response {
        status: StatusCode::from_u16(status).unwrap(),
        headers: map,
        body: body.as_bytes().to_vec(),
        truncated: false,
    };
    serde_json::to_string_pretty(&written(observed, &shaping)).unwrap()
}

/// The tool result `mcp` writes of the answer `shape` makes.
fn written(observed: Response, shaping: &Shaping<'_>) -> crate::mcp::ToolResult {
    crate::mcp::ToolResult::of(shaping.tool, Ok(shape(observed, shaping)))
}

fn report_headers() -> Vec<HeaderName> {
    REPORTED_HEADERS
        .iter()
        .map(|name| HeaderName::from_static(name))
        .collect()
}

fn shaping<'a>(report: &'a [HeaderName], secrets: &[String]) -> Shaping<'a> {
    // Leaked: a test's shaping lives as long as the test.
    let secrets: &'a Secrets = Box::leak(Box::new(Secrets::new(secrets)));
    Shaping {
        tool: "getPet",
        limit_bytes: 1024,
        report_headers: report,
        next: None,
        authenticated: false,
        secrets,
        query_credential: None,
    }
}

#[test]
fn json_success_keeps_the_body_text_exactly() {
    let report = report_headers();
    expect![[r#"
        {
          "content": [
            {
              "type": "text",
              "text": "{\"id\": 12345678901234567890123, \"name\":\"Rex\"}"
            }
          ],
          "structuredContent": {
            "id": 1.2345678901234568e+22,
            "name": "Rex"
          },
          "_meta": {
            "dev.ferry/http": {
              "status": 200,
              "headers": {
                "content-type": "application/json",
                "etag": "\"v1\""
              }
            },
            "dev.ferry/result": {
              "numbersRounded": true
            }
          }
        }"#]]
    .assert_eq(&shaped(
        200,
        &[
            ("content-type", "application/json"),
            ("etag", "\"v1\""),
            ("set-cookie", "s=1"),
            ("x-other", "1"),
        ],
        r#"{"id": 12345678901234567890123, "name":"Rex"}"#,
        shaping(&report, &[]),
    ));
}

#[test]
fn echoed_credentials_are_redacted() {
    let report = report_headers();
    let secrets = vec!["s3cret-token".to_string()];
    let result = shaped(
        400,
        &[
            ("content-type", "text/plain"),
            ("location", "https://x/?key=s3cret-token"),
        ],
        "bad key s3cret-token",
        shaping(&report, &secrets),
    );
    assert!(!result.contains("s3cret-token"), "{result}");
    assert!(result.contains("bad key [redacted]"), "{result}");
}

#[test]
fn every_occurrence_of_every_secret_is_redacted_in_any_body() {
    let secrets = Secrets::new(["s3cret", "", "k%2B"]);
    let body = b"s3crets3cret x\xff s3cre k%2B s3cret";
    let redacted = secrets.bytes(body, false);
    assert_eq!(
        String::from_utf8_lossy(&redacted),
        "[redacted][redacted] x\u{fffd} s3cre [redacted] [redacted]"
    );
    assert!(matches!(
        secrets.bytes(b"nothing here", false),
        std::borrow::Cow::Borrowed(_)
    ));
}

#[test]
fn a_byte_order_mark_does_not_make_json_undecodable() {
    let report = report_headers();
    let result = shaped(
        200,
        &[("content-type", "application/json")],
        "\u{feff}{\"a\":1}",
        shaping(&report, &[]),
    );
    assert!(result.contains("\"structuredContent\": {"), "{result}");
}

#[test]
fn undecodable_and_binary_bodies_are_errors_or_blobs_never_mislabelled() {
    let report = report_headers();
    let broken = shaped(
        200,
        &[("content-type", "application/json")],
        "{oops",
        shaping(&report, &[]),
    );
    let broken: Value = serde_json::from_str(&broken).unwrap();
    assert_eq!(broken["isError"], true);
    assert_eq!(broken["content"][1]["resource"]["mimeType"], "text/plain");
    assert_eq!(broken["content"][1]["resource"]["text"], "{oops");

    let mut headers = http::HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    let observed = Response {
        status: StatusCode::BAD_REQUEST,
        headers,
        body: vec![0xff, 0xfe, 0x00],
        truncated: false,
    };
    let result = serde_json::to_value(written(observed, &shaping(&report, &[]))).unwrap();
    assert_eq!(result["content"][1]["resource"]["blob"], "//4A");
    assert_eq!(
        result["content"][1]["resource"]["mimeType"],
        "application/octet-stream"
    );
}

#[test]
fn joined_urls_equal_parsing_the_whole_text() {
    let bases = [
        "http://127.0.0.1:8080",
        "http://example.com/",
        "https://api.example.com/v1",
        "https://api.example.com/v1/",
        "https://api.example.com/v1//",
        "http://[::1]:9000/base%20path/x",
        "http://B\u{fc}cher.example/api",
    ];
    let paths = [
        "/pets/1",
        "/",
        "/pets?limit=10&tag=a%20b",
        "/pets?",
        "/a/../b/./c",
        "/%2e%2e/x",
        "//double/slash",
        "/spaces in path?q=a b",
        "/unicode/\u{e9}t\u{e9}?q=\u{e9}",
        "/back\\slash",
        "/tab\there\n",
        "/with#fragment",
        "/trailing ",
        "/query?a=1?b=2",
        "/x?a=%zz&b=[1]|{2}",
    ];
    for base_text in bases {
        let base_url = base_url(base_text).expect("a valid base");
        let base = base_url.as_str().trim_end_matches('/');
        let base_path = base_url.path().trim_end_matches('/');
        for path in paths {
            let joined = join(base, &base_url, base_path, path).map(String::from);
            let parsed = reqwest::Url::parse(&format!("{base}{path}")).map(String::from);
            assert_eq!(joined, parsed, "{base_text} + {path}");
        }
    }
}

#[test]
fn numbers_a_float_cannot_hold_are_flagged_and_others_are_not() {
    use super::response::has_rounded_numbers;
    for exact in [
        r#"{"a": 1, "b": -9223372036854775808, "c": 18446744073709551615}"#,
        r#"[0.1, 1.5e1, 1e300, -0.0, 2.5E-3, 100.000]"#,
        r#"{"digits-in-a-string": "123456789012345678901234567890.5"}"#,
        r#"{"escaped \" 99999999999999999999999": 1}"#,
    ] {
        assert!(!has_rounded_numbers(exact.as_bytes()), "{exact}");
    }
    for rounded in [
        r#"{"id": 12345678901234567890123}"#,
        r#"[-18446744073709551616]"#,
        r#"{"pi": 3.14159265358979323846264}"#,
        r#"{"x": 0.10000000000000000001}"#,
    ] {
        assert!(has_rounded_numbers(rounded.as_bytes()), "{rounded}");
    }
}

#[test]
fn the_short_decimal_shortcut_only_passes_numbers_that_survive_a_float() {
    use super::response::{float_is_exact, short_decimal};
    let mut mantissas = Vec::new();
    for digits in [
        "1",
        "5",
        "19",
        "1999",
        "3141592653589793",
        "314159265358979",
        "100000000000000",
        "999999999999999",
        "9999999999999999",
        "123456789012345",
        "1234567890123456",
        "10000000000000001",
    ] {
        for point in 0..=digits.len() {
            let (whole, fraction) = digits.split_at(point);
            let whole = if whole.is_empty() { "0" } else { whole };
            mantissas.push(format!("{whole}.{fraction}0"));
            mantissas.push(format!("-0.000{whole}{fraction}"));
        }
    }
    let mut passed = 0;
    for mantissa in &mantissas {
        for exponent in [
            "", "e0", "e-5", "E+22", "e250", "e-250", "e-290", "e300", "e-330",
        ] {
            let token = format!("{mantissa}{exponent}");
            if short_decimal(&token) {
                passed += 1;
                assert!(float_is_exact(&token), "{token}");
            }
        }
    }
    assert!(passed > 100, "the shortcut passed only {passed} tokens");
    assert!(!short_decimal("3.141592653589793"));
    assert!(!short_decimal("1e-300"));
}

fn redacted_text(secrets: &Secrets, body: &str, cut: bool) -> String {
    String::from_utf8_lossy(&secrets.bytes(body.as_bytes(), cut)).into_owned()
}

// Regression test for issue 9: the search found only the secret as written.
#[test]
fn a_secret_is_found_in_any_mix_of_escapes() {
    let secrets = Secrets::new(["a/b+c d€😀"]);
    let cases = [
        r#"a/b+c d€😀"#,
        r#"a\/b+c d€😀"#,
        r#"\u0061\u002F\u0062\u002b\u0063\u0020\u0064\u20ac\ud83d\ude00"#,
        "a%2Fb%2Bc+d%E2%82%AC%F0%9F%98%80",
        "a%2fb%2bc%20d%e2%82%ac%f0%9f%98%80",
        r#"\u0061%2F\u0062+c d\u20AC😀"#,
        // JSON inside a JSON string: an escaped escape.
        r#"a\\/b+c d€😀"#,
    ];
    for case in cases {
        assert_eq!(
            redacted_text(&secrets, &format!("x{case}y"), false),
            "x[redacted]y",
            "{case}"
        );
    }
    // Near misses are left alone, borrowed.
    for near in ["a/b+c d€", "a%2Gb+c d€😀", r#"\ud83d"#] {
        assert!(
            matches!(secrets.bytes(near.as_bytes(), false), Cow::Borrowed(_)),
            "{near}"
        );
    }
}

#[test]
fn a_secret_with_escape_characters_of_its_own_is_found_written_either_way() {
    let secrets = Secrets::new(["k%25\\x"]);
    for case in ["k%25\\x", "k%2525%5Cx", r#"k\u002525\\x"#] {
        assert_eq!(redacted_text(&secrets, case, false), "[redacted]", "{case}");
    }
}

#[test]
fn a_secret_is_found_in_base64_at_any_offset_in_either_alphabet() {
    use base64::Engine as _;
    let secret = "tok/en+with?bits";
    let secrets = Secrets::new([secret]);
    for prefix in ["", "a", "ab", "abc"] {
        let text = format!("{prefix}{secret}!");
        for encoded in [
            base64::engine::general_purpose::STANDARD.encode(&text),
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&text),
        ] {
            let redacted = redacted_text(&secrets, &encoded, false);
            assert!(redacted.contains("[redacted]"), "{prefix} {encoded}");
        }
    }
    // Short secrets are not looked for in base64: a few characters could be anything.
    assert_eq!(redacted_text(&Secrets::new(["abc"]), "YWJj", false), "YWJj");
}

#[test]
fn the_start_of_a_secret_at_the_end_of_a_cut_body_is_redacted() {
    let secrets = Secrets::new(["s3cret-token"]);
    assert_eq!(
        redacted_text(&secrets, "key: s3cr", true),
        "key: [redacted]"
    );
    assert_eq!(
        redacted_text(&secrets, "key: s3cr%6", true),
        "key: [redacted]"
    );
    // Not cut, or too little of it to tell: kept.
    assert_eq!(redacted_text(&secrets, "key: s3cr", false), "key: s3cr");
    assert_eq!(redacted_text(&secrets, "key: s3c", true), "key: s3c");
}

// Regression test for issue 9: a `%2F` whose `%` is itself JSON-escaped is found too.
#[test]
fn a_secret_layered_in_two_escapes_is_redacted_from_value_and_text() {
    let report = report_headers();
    let result = shaped(
        200,
        &[("content-type", "application/json")],
        r#"{"n": 1, "t": "a\u00252Fb"}"#,
        shaping(&report, &["a/b".to_string()]),
    );
    let result: Value = serde_json::from_str(&result).unwrap();
    assert_eq!(
        result["structuredContent"],
        json!({"n": 1, "t": "[redacted]"})
    );
    assert_eq!(
        result["content"][0]["text"],
        r#"{"n": 1, "t": "[redacted]"}"#
    );
    assert_eq!(
        result["_meta"]["dev.ferry/result"],
        json!({"redacted": true})
    );
}

// Regression test for issue 9: extreme `Retry-After` values overflowed the retry's instant.
#[test]
fn retry_after_survives_extreme_values() {
    let after = |value: &str| {
        let mut headers = http::HeaderMap::new();
        headers.insert(header::RETRY_AFTER, HeaderValue::from_str(value).unwrap());
        retry_after(&headers)
    };
    for huge in [
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999999",
    ] {
        assert_eq!(after(huge), Some(Duration::from_secs(u64::MAX)), "{huge}");
    }
    assert_eq!(after(" 7 "), Some(Duration::from_secs(7)));
    for garbage in [
        "-5",
        "1.5",
        "1e3",
        "soon",
        "",
        "Sun, 06 Nov 1994 08:49:37 CET",
        "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 25:49:37 GMT",
        "Sun, 06 Nov -1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49 GMT",
    ] {
        assert_eq!(after(garbage), None, "{garbage:?}");
    }
    // Dates in the past mean now; dates past what a clock can hold are far, never a panic.
    assert_eq!(after("Thu, 01 Jan 1970 00:00:00 GMT"), Some(Duration::ZERO));
    for far in [
        "Fri, 31 Dec 9999 23:59:59 GMT",
        "Fri, 31 Dec 99999999999999 23:59:59 GMT",
        "Fri, 31 Dec 9223372036854775807 23:59:59 GMT",
    ] {
        assert!(
            after(far).is_none_or(|delay| delay > Duration::from_secs(86_400)),
            "{far}"
        );
    }
}

#[test]
fn a_retry_is_waited_for_only_when_it_ends_before_the_deadline() {
    let now = Instant::now();
    let deadline = now + Duration::from_secs(2);
    let backoff = Duration::from_millis(5);
    assert_eq!(
        retry_wait(Some(Duration::from_secs(1)), backoff, now, deadline),
        Some(Duration::from_secs(1))
    );
    assert_eq!(retry_wait(None, backoff, now, deadline), Some(backoff));
    for beyond in [
        Duration::from_secs(2),
        Duration::from_secs(u64::MAX),
        Duration::MAX,
    ] {
        assert_eq!(retry_wait(Some(beyond), backoff, now, deadline), None);
    }
    assert_eq!(retry_wait(None, Duration::MAX, now, deadline), None);
    // A call's own time limit may be too large for a clock, too.
    assert!(deadline_after(now, Duration::MAX) > now + Duration::from_secs(86_400));
    assert_eq!(
        deadline_after(now, Duration::from_secs(3)),
        now + Duration::from_secs(3)
    );
}

// Regression test for issue 9: each layer of escapes was decoded once, so JSON inside a JSON
// string, a doubly percent-encoded secret, base64 wrapped into lines, a space written both
// ways and an uppercased hex secret were served.
#[test]
fn a_secret_is_found_under_repeated_escapes_wrapped_base64_and_either_hex_case() {
    use base64::Engine as _;
    let secrets = Secrets::new(["Sk/9+tok=n"]);
    let nested = r#"{"echo":"{\"t\":\"Sk\\\/9+tok=n\"}"}"#;
    assert_eq!(
        redacted_text(&secrets, nested, false),
        r#"{"echo":"{\"t\":\"[redacted]\"}"}"#
    );
    let secrets = Secrets::new(["s3cr3t+T0k/en=="]);
    assert_eq!(
        redacted_text(&secrets, "x=s3cr3t%252BT0k%252Fen%253D%253D&y", false),
        "x=[redacted]&y"
    );
    let secrets = Secrets::new(["a long pass phrase"]);
    assert_eq!(
        redacted_text(&secrets, "q=a%20long+pass%20phrase&", false),
        "q=[redacted]&"
    );
    let secret = "a-secret-value-sent-upstream-that-is-long-enough-to-wrap-0123456789";
    let secrets = Secrets::new([secret]);
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("key: {secret}"));
    for newline in ["\r\n", "\n", r"\r\n"] {
        let wrapped = format!("{}{newline}{}", &encoded[..40], &encoded[40..]);
        let redacted = redacted_text(&secrets, &wrapped, false);
        assert!(redacted.contains("[redacted]"), "{newline:?}: {redacted}");
        assert!(
            !redacted.contains(&encoded[30..40]),
            "{newline:?}: {redacted}"
        );
    }
    let secrets = Secrets::new(["9f86d081884c7d65"]);
    assert_eq!(
        redacted_text(&secrets, "id 9F86D081884C7D65.", false),
        "id [redacted]."
    );
    // Only a hex secret is matched in the other case.
    let secrets = Secrets::new(["MixedCase-Token"]);
    assert_eq!(
        redacted_text(&secrets, "mixedcase-token", false),
        "mixedcase-token"
    );
}

// Regression test for issue 9: a short password or key, searched on its own, was replaced
// wherever its digits appeared, and the result was no longer JSON.
#[test]
fn a_short_secret_is_redacted_only_inside_its_credential() {
    use base64::Engine as _;
    let body = r#"{"year":2024,"id":120245}"#;
    let token = base64::engine::general_purpose::STANDARD.encode("user:2024");
    let value = HeaderValue::from_str(&format!("Basic {token}")).expect("a header value");
    let secrets = Secrets::new(obtained_secrets(&value).expect("a basic credential"));
    assert_eq!(redacted_text(&secrets, body, false), body);
    assert_eq!(
        redacted_text(&secrets, &format!("user:2024 {token}"), false),
        "[redacted] [redacted]"
    );
    let client = crate::client::Pool::new(std::time::Duration::from_secs(1), None);
    let env = |_: &str| Some("2024".to_string());
    for auth in [
        UpstreamAuth::Bearer { env: "KEY".into() },
        UpstreamAuth::ApiKey {
            location: ParameterLocation::Query,
            name: "key".into(),
            env: "KEY".into(),
        },
    ] {
        let (credential, secrets) = credential(&auth, &env, &client).expect("a credential");
        assert!(credential.is_some());
        assert_eq!(redacted_text(&Secrets::new(secrets), body, false), body);
    }
    // Long enough: redacted on its own.
    let value = HeaderValue::from_str(&format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("user:20242024")
    ))
    .expect("a header value");
    let secrets = Secrets::new(obtained_secrets(&value).expect("a basic credential"));
    assert_eq!(
        redacted_text(&secrets, "pw 20242024", false),
        "pw [redacted]"
    );
}

// Issue 9: two marks were kept per escape (16 bytes per body byte of `\/\/…`) and copied
// again for the percent layer. The time is printed, not asserted: speed belongs in
// benchmarks (`cargo test --release --lib escape_dense -- --nocapture` to read it).
#[test]
fn an_escape_dense_body_is_searched_and_a_match_in_it_mapped_back() {
    let secrets = Secrets::new(["Sk/9+tok=n"]);
    let mut body = br"\/".repeat(1 << 19);
    let started = std::time::Instant::now();
    assert!(matches!(secrets.bytes(&body, false), Cow::Borrowed(_)));
    let elapsed = started.elapsed();
    body.extend_from_slice(br"%5C%2FSk\/9%2Btok=n\\\/");
    let redacted = secrets.bytes(&body, false);
    assert_eq!(&redacted[..body.len() - 23], &body[..body.len() - 23]);
    assert_eq!(&redacted[body.len() - 23..], br"%5C%2F[redacted]\\\/");
    eprintln!("1 MB of JSON escapes searched in {elapsed:?}");
}

const TLS_DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tls");

/// An HTTPS upstream on loopback (axum over TLS, the test CA's `localhost` certificate)
/// answering `GET /pets/1` with `{"id":1}`: its base URL.
async fn https_upstream() -> String {
    let path = |name: &str| std::path::PathBuf::from(format!("{TLS_DATA}/{name}"));
    let config =
        crate::transport::tls::server_config(&path("localhost.crt"), &path("localhost.key"))
            .expect("test certificate");
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = tcp.local_addr().expect("address").port();
    let listener = crate::transport::tls::TlsListener::new(tcp, config).expect("listener");
    let router = axum::Router::new().route(
        "/pets/1",
        axum::routing::get(|| async { ([("content-type", "application/json")], r#"{"id":1}"#) }),
    );
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("https://localhost:{port}")
}

fn https_catalog(base: &str) -> (Catalog, Tool) {
    let mut tool = Tool::new(
        "getPet",
        json!({"type": "object"}),
        RequestPlan::new(Method::GET, "/pets/1", Vec::new()),
    );
    let call = &mut tool.operation_mut().expect("an operation's tool").call;
    call.timeout = std::time::Duration::from_secs(5);
    call.retries = 0;
    let server = crate::catalog::ServerInfo {
        name: "test".into(),
        title: None,
        version: "0".into(),
        instructions: None,
    };
    let mut catalog = Catalog::new(server, Some(base.to_owned()), vec![tool.clone()]);
    catalog.apis[0].connect_timeout_ms = 1_000;
    (catalog, tool)
}

fn tls_trusting(file: &str) -> Tls {
    Tls::with_roots(&std::fs::read(format!("{TLS_DATA}/{file}")).expect("PEM")).expect("parses")
}

#[tokio::test]
async fn an_https_upstream_answers_and_fails_as_a_plain_one_does() {
    let base = https_upstream().await;
    let (catalog, tool) = https_catalog(&base);
    let env = |_: &str| None;
    let upstream = Upstream::with_tls(&catalog, env, tls_trusting("ca.crt")).expect("client");
    for _ in 0..2 {
        let answer = upstream.call(&tool, &Map::new()).await.expect("an answer");
        assert_eq!(answer.http.status, 200);
        assert_eq!(answer.body, br#"{"id":1}"#);
    }
    // A certificate no trusted CA vouches for is a failure to connect, worded as today.
    let untrusting =
        Upstream::with_tls(&catalog, env, tls_trusting("localhost.crt")).expect("client");
    let outcome = untrusting.call(&tool, &Map::new()).await;
    assert!(matches!(outcome, Err(CallError::Connect)), "{outcome:?}");
    expect![[r#"could not connect to the upstream"#]].assert_eq(
        crate::mcp::ToolResult::of(&tool.name, outcome).content[0]["text"]
            .as_str()
            .unwrap_or_default(),
    );
}

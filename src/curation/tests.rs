use std::path::PathBuf;

use expect_test::{Expect, expect};

fn check(curation_text: &str, expect: Expect) {
    let (_, diagnostics) = super::parse(curation_text, "ferry.yaml", PathBuf::new())
        .expect("the test's curation is YAML");
    let written: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
    expect.assert_eq(&written.join("\n"));
}

#[test]
fn one_mistake_is_worded_the_same_in_every_section() {
    check(
        r#"
pagination: {size_argument: ""}
upstream_auth:
  client_credentials:
    token_url: https://auth.example.com/token
    client_id: ferry
    client_secret: {env: SECRET}
    audience: ""
auth:
  default_scopes: [read, 3]
credential_parameters: [token, 3]
tools:
  getPet:
    arguments: {omit: [/properties/a, 4]}
"#,
        expect![[r#"
            error: expected a string
              --> curation:auth.default_scopes.1
            error: expected a string
              --> curation:credential_parameters.1
            error: expected a non-empty string
              --> curation:pagination.size_argument
            error: expected a non-empty string
              --> curation:upstream_auth.client_credentials.audience
            error: expected a string
              --> curation:tools.getPet.arguments.omit.1"#]],
    );
}

#[test]
fn an_environment_variable_is_named_by_a_valid_name_in_every_section() {
    check(
        r#"
upstream_auth: {bearer: {env: "A=B"}}
auth:
confirm_key: {env: ""}
"#,
        expect![[r#"
            error: a key is never written in the file: name its environment variable, as `confirm_key: {env: FERRY_CONFIRM_KEY}`
              --> curation:confirm_key
            error: expected a mapping with `api_keys:` or `oauth:`
              --> curation:auth
            error: expected the name of an environment variable (not empty, no `=`)
              --> curation:upstream_auth.bearer.env"#]],
    );
}

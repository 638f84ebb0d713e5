//! Issue 29's generated-body sample through rmcp's client at both revisions: over 200
//! operations drawn with a fixed seed from the corpus (`tests/e2e/output_sample.py` chooses
//! them and generates their bodies and arguments; `scripts/setup-tests.sh` installs the
//! Python it runs on), each answering a body generated from its documented 2xx schema
//! through the sample's loopback upstream, are served as `structuredContent` that conforms to
//! the `outputSchema` rmcp listed (rmcp does not check results itself: this test validates
//! each with a 2020-12 validator, as a client with its validation on does), with and without
//! `fields:`; bodies made not to conform are `isError` results saying what did not match.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use ferry::mcp::{Server, ServerOptions};
use ferry::transport::http::HttpOptions;
use ferry::upstream::Upstream;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Map, Value};

use crate::support::start;

const MISMATCH: &str = "does not match this tool's declared output schema";
const PLACEHOLDER: &str = "http://upstream.invalid";

fn python() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    assert!(
        path.exists(),
        ".venv/bin/python is missing: run scripts/setup-tests.sh, which installs the Python the sample is generated with"
    );
    path
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/output_sample.py")
}

/// The sample's folder, written once per checkout and binary (the SDKs' tests share it).
fn sample() -> PathBuf {
    let out = Command::new(python())
        .arg(script())
        .arg("cached")
        .env("FERRY_BIN", env!("CARGO_BIN_EXE_ferry"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run output_sample.py");
    assert!(
        out.status.success(),
        "output_sample.py cached: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// The sample's upstream, a child process ended when dropped.
struct SampleUpstream {
    child: Child,
    url: String,
}

impl SampleUpstream {
    fn start(sample: &Path) -> SampleUpstream {
        let mut child = Command::new(python())
            .arg(script())
            .arg("serve")
            .arg(sample)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the sample upstream");
        let stdout = child.stdout.take().expect("its stdout");
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("its port");
        let port = line.trim().strip_prefix("PORT ").expect("PORT <n>");
        SampleUpstream {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }

    async fn answer(&self, mode: &str) {
        let answer = reqwest::Client::new()
            .post(format!("{}/_mode/{mode}", self.url))
            .timeout(std::time::Duration::from_secs(10))
            .send()
            .await
            .expect("the mode set");
        assert_eq!(answer.status(), 204);
    }
}

impl Drop for SampleUpstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn server(sample: &Path, variant: &str, upstream: &str, into: &Path) -> Server {
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        source: ferry::load::SourceArgs,
    }
    let text = std::fs::read_to_string(sample.join(format!("{variant}.yaml")))
        .expect("the curation")
        .replace(PLACEHOLDER, upstream);
    let curation = into.join(format!("{variant}.yaml"));
    std::fs::write(&curation, text).expect("write the curation");
    let flags = Flags::parse_from(["ferry", "--config", curation.to_str().expect("UTF-8")]);
    let loaded = ferry::load::load_chosen(&flags.source).expect("loaded");
    assert!(!loaded.has_errors(), "{:?}", loaded.diagnostics);
    let upstream = Upstream::new(&loaded.catalog).expect("upstream client");
    Server::new(&loaded.catalog, Some(upstream), ServerOptions::default())
}

fn project(value: &Value, fields: &[Value]) -> Value {
    match value {
        _ if fields.is_empty() => value.clone(),
        Value::Array(items) => {
            Value::Array(items.iter().map(|item| project(item, fields)).collect())
        }
        Value::Object(map) => Value::Object(
            fields
                .iter()
                .filter_map(Value::as_str)
                .filter_map(|name| map.get(name).map(|value| (name.to_string(), value.clone())))
                .collect(),
        ),
        _ => value.clone(),
    }
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(&result.content)
        .expect("content")
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| block["text"].as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_bodies_conform_for_rmcp_at_both_revisions() {
    let sample = tokio::task::spawn_blocking(sample)
        .await
        .expect("the sample");
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(sample.join("sample.json")).expect("sample"))
            .expect("sample.json");
    assert!(cases.len() >= 200, "{} operations", cases.len());
    let upstream = SampleUpstream::start(&sample);
    let folder = std::env::temp_dir().join(format!("ferry-output-sample-{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("a folder");
    let mut failures = Vec::new();
    for variant in ["whole", "fields"] {
        let server = server(&sample, variant, &upstream.url, &folder);
        let running = start(server, HttpOptions::default()).await;
        for modern in [true, false] {
            let transport =
                rmcp::transport::StreamableHttpClientTransport::from_uri(running.url.clone());
            let client = if modern {
                ().serve_with_lifecycle(
                    transport,
                    ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    },
                )
                .await
                .expect("discover")
            } else {
                ().serve(transport).await.expect("initialize")
            };
            let tools = client.list_all_tools().await.expect("tools/list");
            let tool_of = |case: &Value| -> String {
                let key = if variant == "whole" {
                    "tool"
                } else {
                    "fields_tool"
                };
                case[key].as_str().expect("a tool name").to_string()
            };
            for mode in ["conforming", "broken"] {
                upstream.answer(mode).await;
                for case in &cases {
                    if mode == "broken" && variant == "fields" && case["broken_in_fields"] != true {
                        continue;
                    }
                    let name = tool_of(case);
                    let listed = tools.iter().find(|tool| tool.name == name).expect("listed");
                    let arguments = case["arguments"].as_object().cloned().unwrap_or_default();
                    let result = client
                        .call_tool(
                            CallToolRequestParams::new(name.clone()).with_arguments(arguments),
                        )
                        .await
                        .expect("call");
                    let at = format!("{name} ({variant}, modern {modern}, {mode})");
                    if mode == "broken" {
                        if result.is_error != Some(true)
                            || result.structured_content.is_some()
                            || !text(&result).contains(MISMATCH)
                        {
                            failures.push(format!("{at}: {}", text(&result)));
                        }
                        continue;
                    }
                    let Some(structured) = result.structured_content.clone() else {
                        failures.push(format!("{at}: {}", text(&result)));
                        continue;
                    };
                    let schema = Value::Object(Map::clone(
                        listed.output_schema.as_deref().expect("an output schema"),
                    ));
                    let validator = jsonschema::draft202012::new(&schema).expect("it compiles");
                    if !validator.is_valid(&structured) {
                        failures.push(format!("{at}: {structured} against {schema}"));
                        continue;
                    }
                    let fields = case["fields"].as_array().cloned().unwrap_or_default();
                    let body = match variant {
                        "whole" => case["body"].clone(),
                        _ => project(&case["body"], &fields),
                    };
                    let expected = match (&body, modern) {
                        (Value::Object(_), _) | (_, true) => body,
                        _ => serde_json::json!({"result": body}),
                    };
                    if structured != expected {
                        failures.push(format!("{at}: served {structured}, sent {expected}"));
                    }
                }
            }
            upstream.answer("conforming").await;
            client.cancel().await.expect("close");
        }
    }
    let _ = std::fs::remove_dir_all(&folder);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures
            .iter()
            .take(25)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

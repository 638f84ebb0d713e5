//! The bundled demo: its catalog compiles cleanly, and its API answers as its document says.

use serde_json::{Value, json};

use super::*;

#[test]
fn demo_catalog_compiles_without_problems() {
    let (catalog, diagnostics) = catalog("http://127.0.0.1:1").expect("bundled files load");
    let problems: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
    assert!(problems.is_empty(), "{problems:#?}");
    let names: Vec<&str> = catalog
        .tools
        .iter()
        .map(|tool| tool.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "add_pet_and_confirm",
            "create_pet",
            "delete_pet",
            "get_pet",
            "list_pets"
        ]
    );
    assert_eq!(
        catalog.apis[0].upstream.as_deref(),
        Some("http://127.0.0.1:1")
    );
}

#[test]
fn demo_workflow_compiles_to_a_composite_tool_of_two_steps() {
    let document = Document::from_value(openapi::parse(OPENAPI, "openapi.yaml").unwrap()).unwrap();
    let (curation, _) = curation::parse(CURATION, "ferry.yaml", PathBuf::from(".")).unwrap();
    let named = curation.workflows.as_ref().map(|w| w.document.as_str());
    assert_eq!(named, Some("./pets.arazzo.yaml"));
    let file = openapi::SourceFile {
        name: "pets.arazzo.yaml".into(),
        value: openapi::parse(ARAZZO, "pets.arazzo.yaml").unwrap(),
    };
    let (mut catalog, _) = catalog::compile_chosen(&document, &curation);
    let diagnostics = catalog::add_workflows(&mut catalog, &document, &curation, &file);
    let errors: Vec<String> = diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.is_error())
        .map(ToString::to_string)
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let tools: Vec<(&str, Vec<String>)> = catalog
        .tools
        .iter()
        .filter_map(|tool| Some((tool, tool.workflow()?)))
        .map(|(tool, plan)| {
            let steps = plan
                .steps
                .iter()
                .map(|step| format!("{} = {}", step.step, step.label()));
            (tool.name.as_str(), steps.collect())
        })
        .collect();
    assert_eq!(
        tools,
        [(
            "add_pet_and_confirm",
            vec![
                "add = POST /pets".to_string(),
                "confirm = GET /pets/{petId}".to_string()
            ]
        )]
    );
}

async fn get(url: &str) -> (u16, String, Value) {
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let response = client.get(url).send().await.expect("request");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = response.json().await.expect("json");
    (status, content_type, body)
}

#[tokio::test]
async fn pets_api_lists_gets_and_reports_a_missing_pet_as_problem_details() {
    let base = start().await.expect("start");
    let (status, _, body) = get(&format!("{base}/pets?species=dog")).await;
    assert_eq!(
        (status, body),
        (
            200,
            json!([{"id": 2, "name": "Rex", "species": "dog", "age": 5}])
        )
    );
    let (status, _, body) = get(&format!("{base}/pets/1")).await;
    assert_eq!((status, &body["name"]), (200, &json!("Tom")));
    let (status, content_type, body) = get(&format!("{base}/pets/99")).await;
    assert_eq!(
        (status, content_type.as_str()),
        (404, "application/problem+json")
    );
    assert_eq!(
        body,
        json!({"type": "about:blank", "title": "Pet not found", "status": 404, "detail": "no pet has id 99"})
    );
}

//! The official Rust SDK (`rmcp`) as an independent client, at both revisions.

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::ClientLifecycleMode;
use rmcp::service::ClientServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn rmcp_client_discovers_lists_and_validates_at_2026_07_28() {
    let running = start_default().await;
    let transport = StreamableHttpClientTransport::from_uri(running.url.clone());
    let client = ()
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("discover");
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["get_pet", "list_pets"]);
    let arguments = json!({"petId": "seven", "region": "eu"});
    let result = client
        .call_tool(
            CallToolRequestParams::new("get_pet")
                .with_arguments(arguments.as_object().cloned().unwrap_or_default()),
        )
        .await
        .expect("tools/call");
    assert_eq!(result.is_error, Some(true));
    let error = client
        .call_tool(CallToolRequestParams::new("nope"))
        .await
        .expect_err("unknown tool");
    assert!(
        error.to_string().contains("-32602") || error.to_string().contains("unknown tool"),
        "{error}"
    );
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn rmcp_client_initializes_and_lists_at_2025_11_25() {
    let running = start_default().await;
    let transport = StreamableHttpClientTransport::from_uri(running.url.clone());
    let client = ().serve(transport).await.expect("initialize");
    let info = client.peer_info().expect("server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 2);
    let result = client
        .call_tool(CallToolRequestParams::new("get_pet"))
        .await
        .expect("tools/call");
    assert_eq!(result.is_error, Some(true), "petId is required");
    client.cancel().await.expect("close");
}

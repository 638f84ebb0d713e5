-- wrk script: every request is an MCP 2026-07-28 `tools/call` of getPet over Streamable HTTP,
-- with the headers a modern client sends.
wrk.method = "POST"
wrk.path = "/mcp"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "getPet"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getPet",'
   .. '"arguments":{"petId":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
   .. '"io.modelcontextprotocol/clientCapabilities":{},'
   .. '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"4"}}}}'

dofile(os.getenv("BENCH_DIR") .. "/report.lua")

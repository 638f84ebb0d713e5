npx @modelcontextprotocol/inspector --transport http --server-url http://127.0.0.1:8080/mcp

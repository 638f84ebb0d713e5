claude mcp add --transport http ferry http://127.0.0.1:8080/mcp

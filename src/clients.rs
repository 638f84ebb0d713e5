//! What an MCP client is given to reach ferry: each supported client's configuration, in the
//! form that client reads. `ferry serve --client NAME` and `ferry demo --client NAME` print it
//! for the address they listen on; `examples/clients/` holds it for the default address, and
//! an integration test holds the files and this module together, so neither drifts.

use serde_json::{Map, Value, json};

/// An MCP client ferry can write a configuration for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// Claude Code: `claude mcp add`, or a project's `.mcp.json`.
    ClaudeCode,
    /// Claude Desktop: `claude_desktop_config.json`, from which it starts ferry itself, over
    /// stdio.
    ClaudeDesktop,
    /// VS Code: a workspace's `.vscode/mcp.json`.
    VsCode,
    /// Cursor: `~/.cursor/mcp.json`, or a project's `.cursor/mcp.json`.
    Cursor,
    /// The MCP Inspector, run with npx.
    Inspector,
}

impl Client {
    /// Every client, in the order help and documentation list them.
    pub const ALL: [Client; 5] = [
        Client::ClaudeCode,
        Client::ClaudeDesktop,
        Client::VsCode,
        Client::Cursor,
        Client::Inspector,
    ];

    /// The name `--client` takes.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::ClaudeDesktop => "claude-desktop",
            Client::VsCode => "vscode",
            Client::Cursor => "cursor",
            Client::Inspector => "inspector",
        }
    }

    /// The client as its makers name it.
    pub fn title(self) -> &'static str {
        match self {
            Client::ClaudeCode => "Claude Code",
            Client::ClaudeDesktop => "Claude Desktop",
            Client::VsCode => "VS Code",
            Client::Cursor => "Cursor",
            Client::Inspector => "the MCP Inspector",
        }
    }

    /// The client `--client` names, if any.
    pub fn from_name(name: &str) -> Option<Client> {
        Client::ALL.into_iter().find(|client| client.name() == name)
    }
}

/// Where a client finds ferry.
#[derive(Debug, Clone)]
pub struct Connection {
    /// The name the client lists the server under.
    pub name: String,
    /// The Streamable HTTP endpoint, as `http://127.0.0.1:8080/mcp`.
    pub url: String,
    /// The ferry binary, for a client that starts ferry itself (over stdio).
    pub command: String,
    /// Its arguments, `--stdio` among them.
    pub args: Vec<String>,
    /// The environment variables the curation reads secrets from: a client that starts ferry
    /// must pass them, since it does not start it from the user's shell. Each is written with
    /// a placeholder, never a value.
    pub env: Vec<String>,
}

/// One piece of a client's configuration: a command to run, or what to put in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    /// The file of `examples/clients/` that holds this piece for the default address.
    pub example: &'static str,
    /// Where it goes, said to a person: `run` for a command, else the file to put it in.
    pub place: String,
    /// Whether it is a command (one line) rather than a file's content.
    pub command: bool,
    /// The command, or the file's content, without a final newline.
    pub text: String,
}

/// `client`'s configuration for reaching ferry at `connection`: every piece, the one to use
/// first first.
pub fn configuration(client: Client, connection: &Connection) -> Vec<Snippet> {
    let name = &connection.name;
    let url = &connection.url;
    let http = json!({ "type": "http", "url": url });
    match client {
        Client::ClaudeCode => vec![
            command(
                "claude-code.sh",
                format!("claude mcp add --transport http {name} {url}"),
            ),
            file(
                "claude-code.mcp.json",
                "the project's .mcp.json",
                servers("mcpServers", name, http),
            ),
        ],
        Client::ClaudeDesktop => {
            let mut server = Map::new();
            server.insert("command".into(), json!(connection.command));
            server.insert("args".into(), json!(connection.args));
            if !connection.env.is_empty() {
                let env: Map<String, Value> = connection
                    .env
                    .iter()
                    .map(|var| (var.clone(), json!(format!("<your {var}>"))))
                    .collect();
                server.insert("env".into(), Value::Object(env));
            }
            vec![file(
                "claude-desktop.json",
                "claude_desktop_config.json (Claude Desktop starts ferry itself, over stdio)",
                servers("mcpServers", name, Value::Object(server)),
            )]
        }
        Client::VsCode => vec![file(
            "vscode.mcp.json",
            "the workspace's .vscode/mcp.json",
            servers("servers", name, http),
        )],
        Client::Cursor => vec![file(
            "cursor.mcp.json",
            "~/.cursor/mcp.json, or the project's .cursor/mcp.json",
            servers("mcpServers", name, json!({ "url": url })),
        )],
        Client::Inspector => vec![
            command(
                "inspector.sh",
                format!("npx @modelcontextprotocol/inspector --transport http --server-url {url}"),
            ),
            file(
                "inspector.json",
                &format!(
                    "a file, say inspector.json, and run `npx @modelcontextprotocol/inspector --config inspector.json --server {name}`"
                ),
                servers("mcpServers", name, http),
            ),
        ],
    }
}

/// A command snippet.
fn command(example: &'static str, text: String) -> Snippet {
    Snippet {
        example,
        place: "run".to_string(),
        command: true,
        text,
    }
}

/// A file snippet: `value` written as JSON with two-space indents.
fn file(example: &'static str, place: &str, value: Value) -> Snippet {
    Snippet {
        example,
        place: place.to_string(),
        command: false,
        text: serde_json::to_string_pretty(&value).unwrap_or_default(),
    }
}

/// `{key: {name: server}}`: the one server under the key the client reads its servers from.
fn servers(key: &str, name: &str, server: Value) -> Value {
    json!({ key: { name: server } })
}

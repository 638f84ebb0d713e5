//! The client configurations of `examples/clients/`: each file is what `ferry serve --client`
//! prints for the default address (so the files and the printed text cannot drift), each,
//! read as its client reads it, names the command or URL that reaches a `ferry serve` started
//! with its defaults, and `ferry demo --client` prints the same forms for its own address.
//! `UPDATE_EXPECT=1` rewrites the files from `ferry::clients`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use ferry::clients::{self, Client, Connection};
use serde_json::{Value, json};

/// What the examples are written for: `ferry serve --config /absolute/path/to/ferry.yaml`
/// with its default listen address, serving the README's quick start (GitHub's API, its
/// token in `GITHUB_TOKEN`).
fn example() -> Connection {
    Connection {
        name: "ferry".to_string(),
        url: default_url(),
        command: "/absolute/path/to/ferry".to_string(),
        args: [
            "serve",
            "--stdio",
            "--config",
            "/absolute/path/to/ferry.yaml",
        ]
        .map(String::from)
        .to_vec(),
        env: vec!["GITHUB_TOKEN".to_string()],
    }
}

/// The endpoint `ferry serve` listens on by default: the default of `--listen`, as its help
/// says, and the MCP path.
fn default_url() -> String {
    let help = ferry(&["serve", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    let listen = help
        .split("--listen <LISTEN>")
        .nth(1)
        .and_then(|rest| rest.split("[default: ").nth(1))
        .and_then(|rest| rest.split(']').next())
        .expect("`ferry serve --help` gives --listen's default");
    format!("http://{listen}{}", ferry::transport::http::ENDPOINT)
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/clients")
}

fn read(name: &str) -> String {
    let path = examples().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn json_file(name: &str) -> Value {
    serde_json::from_str(&read(name)).unwrap_or_else(|error| panic!("{name}: {error}"))
}

/// The words of a one-line command file.
fn words(name: &str) -> Vec<String> {
    let text = read(name);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{name} is one command: {text:?}");
    lines[0].split_whitespace().map(String::from).collect()
}

fn ferry(arguments: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(arguments)
        .stdin(Stdio::null())
        .output()
        .expect("ferry runs")
}

#[test]
fn every_example_is_what_ferry_prints_for_the_default_address() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let connection = example();
    assert_eq!(connection.url, "http://127.0.0.1:8080/mcp");
    let mut expected = vec!["README.md".to_string()];
    for client in Client::ALL {
        for snippet in clients::configuration(client, &connection) {
            let path = examples().join(snippet.example);
            let text = format!("{}\n", snippet.text);
            if update {
                std::fs::write(&path, &text).expect("write the example");
            }
            assert_eq!(
                read(snippet.example),
                text,
                "examples/clients/{} is not what `ferry serve --client {}` prints; \
                 UPDATE_EXPECT=1 rewrites it",
                snippet.example,
                client.name()
            );
            expected.push(snippet.example.to_string());
        }
    }
    let mut found: Vec<String> = std::fs::read_dir(examples())
        .expect("examples/clients/ is there")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    found.sort();
    expected.sort();
    assert_eq!(
        found, expected,
        "examples/clients/ holds exactly these files"
    );
    let readme = read("README.md");
    for name in expected.iter().filter(|name| *name != "README.md") {
        assert!(
            readme.contains(&format!("`{name}`")),
            "examples/clients/README.md says what {name} is"
        );
    }
}

#[test]
fn each_example_is_in_its_clients_format_and_reaches_ferry_serve() {
    let url = default_url();
    let http = json!({"type": "http", "url": url});

    // Claude Code: `claude mcp add --transport http NAME URL`, or a project's .mcp.json.
    assert_eq!(
        words("claude-code.sh"),
        [
            "claude",
            "mcp",
            "add",
            "--transport",
            "http",
            "ferry",
            url.as_str()
        ]
    );
    assert_eq!(
        json_file("claude-code.mcp.json")["mcpServers"]["ferry"],
        http
    );

    // VS Code: top-level `servers`, not `mcpServers`.
    let vscode = json_file("vscode.mcp.json");
    assert_eq!(vscode["servers"]["ferry"], http);
    assert!(vscode.get("mcpServers").is_none());

    // Cursor: `mcpServers`, a remote server by its `url`.
    assert_eq!(
        json_file("cursor.mcp.json")["mcpServers"]["ferry"],
        json!({"url": url})
    );

    // MCP Inspector: the command, and its configuration file.
    assert_eq!(
        words("inspector.sh"),
        [
            "npx",
            "@modelcontextprotocol/inspector",
            "--transport",
            "http",
            "--server-url",
            url.as_str()
        ]
    );
    assert_eq!(json_file("inspector.json")["mcpServers"]["ferry"], http);

    // Claude Desktop starts ferry over stdio: an absolute command, arguments that ferry
    // takes, and the variables the curation reads.
    let desktop = &json_file("claude-desktop.json")["mcpServers"]["ferry"];
    let command = desktop["command"].as_str().expect("a command");
    assert!(
        command.starts_with('/') && command.ends_with("/ferry"),
        "{command}"
    );
    let args: Vec<&str> = desktop["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|arg| arg.as_str().expect("a string"))
        .collect();
    assert_eq!(args[..2], ["serve", "--stdio"]);
    assert_eq!(args[2], "--config");
    assert!(args[3].starts_with('/') && args[3].ends_with("/ferry.yaml"));
    assert_eq!(
        desktop["env"]
            .as_object()
            .expect("env")
            .keys()
            .collect::<Vec<_>>(),
        ["GITHUB_TOKEN"]
    );
    // Its arguments are ferry's own: they parse, and ferry goes on to read the curation.
    let served = ferry(&args);
    let stderr = String::from_utf8_lossy(&served.stderr);
    assert_eq!(served.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("reading curation file /absolute/path/to/ferry.yaml"),
        "{stderr}"
    );
}

#[test]
fn demo_prints_the_configuration_of_the_client_asked_for() {
    for client in Client::ALL.map(Some).into_iter().chain([None]) {
        let mut arguments = vec!["demo", "--listen", "127.0.0.1:0", "--workers", "1"];
        if let Some(client) = client {
            arguments.extend(["--client", client.name()]);
        }
        let (endpoint, announced) = announcement(&arguments);
        let connection = Connection {
            name: "ferry-pets".to_string(),
            url: endpoint,
            command: String::new(),
            args: vec!["demo".to_string(), "--stdio".to_string()],
            env: Vec::new(),
        };
        let snippets = clients::configuration(client.unwrap_or(Client::ClaudeCode), &connection);
        match client {
            Some(Client::ClaudeDesktop) => {
                // The command is the binary's own path, which the test reads back.
                let start = announced.find('{').expect("a JSON configuration");
                let end = announced.rfind('}').expect("its end");
                let printed: Value =
                    serde_json::from_str(&announced[start..=end]).expect("it is JSON");
                let server = &printed["mcpServers"]["ferry-pets"];
                assert_eq!(server["args"], json!(["demo", "--stdio"]));
                let command = PathBuf::from(server["command"].as_str().expect("a command"));
                assert_eq!(
                    command.canonicalize().expect("the command exists"),
                    Path::new(env!("CARGO_BIN_EXE_ferry"))
                        .canonicalize()
                        .expect("the binary")
                );
            }
            Some(_) => {
                for snippet in &snippets {
                    assert!(
                        announced.contains(&snippet.text),
                        "`ferry demo --client {}` prints {:?}:\n{announced}",
                        client.map_or("", Client::name),
                        snippet.text
                    );
                }
            }
            None => {
                // Without --client: the Claude Code command alone, and how to ask for more.
                assert!(announced.contains(&snippets[0].text), "{announced}");
                assert!(!announced.contains("mcpServers"), "{announced}");
                assert!(announced.contains("--client NAME"), "{announced}");
            }
        }
    }
}

/// Starts `ferry` with `arguments` (a demo on a free port), reads its stderr until the
/// announcement ends, stops it; returns the endpoint it listened on and what it announced.
fn announcement(arguments: &[&str]) -> (String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(arguments)
        .env("RUST_LOG", "ferry=info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ferry starts");
    let stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let (send, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    let mut endpoint = None;
    let mut announced = String::new();
    loop {
        let Ok(line) = lines.recv_timeout(Duration::from_secs(10)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ferry did not announce itself:\n{announced}");
        };
        if let Some(at) = line.find("MCP endpoint: ") {
            endpoint = Some(line[at + "MCP endpoint: ".len()..].trim().to_string());
        }
        announced.push_str(&line);
        announced.push('\n');
        if line.starts_with("Stop with Ctrl-C") {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    (endpoint.expect("the endpoint is announced"), announced)
}

//! `--client NAME` of `ferry serve` and `ferry demo`: what a client needs to reach the server
//! just started, printed on stderr once HTTP listens (stdout belongs to the stdio transport).

use clap::builder::{PossibleValuesParser, TypedValueParser};
use ferry::clients::{self, Client, Connection};

/// The parser of `--client`: one of the names of [`Client::ALL`], listed in `--help`.
pub fn client_parser() -> impl TypedValueParser<Value = Client> {
    PossibleValuesParser::new(Client::ALL.map(Client::name))
        .try_map(|name| Client::from_name(&name).ok_or("not a client ferry knows"))
}

/// How to connect `client` to `connection`: each piece of its configuration, said where it
/// goes. Without a client, the Claude Code command (one line, and a client that reads a form
/// no other client misreads), and how to ask for another client's configuration.
pub fn instructions(connection: &Connection, client: Option<Client>) -> String {
    let shown = client.unwrap_or(Client::ClaudeCode);
    let mut snippets = clients::configuration(shown, connection);
    if client.is_none() {
        snippets.truncate(1);
    }
    let mut out = String::new();
    for (index, snippet) in snippets.iter().enumerate() {
        let lead = if index == 0 {
            format!("To connect {}, ", shown.title())
        } else {
            "\nor ".to_string()
        };
        let text = if snippet.command {
            format!("  {}", snippet.text)
        } else {
            snippet.text.clone()
        };
        let place = if snippet.command {
            snippet.place.clone()
        } else {
            format!("put this in {}", snippet.place)
        };
        out.push_str(&format!("{lead}{place}:\n\n{text}\n"));
    }
    if client.is_none() {
        let names: Vec<&str> = Client::ALL.iter().map(|client| client.name()).collect();
        out.push_str(&format!(
            "\nFor another client's configuration, add --client NAME ({}).\n",
            names.join(", ")
        ));
    }
    out
}

/// The binary running now, as a client that starts ferry should run it: its absolute path,
/// or `ferry` when the system cannot say.
pub fn this_binary() -> String {
    std::env::current_exe()
        .map(|path| path.display().to_string())
        .unwrap_or_else(|_| "ferry".to_string())
}

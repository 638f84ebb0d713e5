//! The server a transport answers with, swapped whole when the catalog is reloaded.
//!
//! A request loads the current [`Server`] once, as it starts, and keeps that `Arc` until it is
//! answered: a call in flight finishes on the catalog it began with, while requests that start
//! after a swap see the new one. Loading is an atomic load and a reference count
//! (`arc-swap`), with no lock on the request path.

use std::sync::Arc;

use arc_swap::ArcSwap;
use tokio::sync::watch;

use super::Server;

/// The current server, shared by every transport and worker that serves it.
#[derive(Clone)]
pub struct Serving(Arc<Shared>);

struct Shared {
    server: ArcSwap<Server>,
    /// Counts the swaps that changed the tool list, for `subscriptions/listen` streams.
    tools_changed: watch::Sender<u64>,
}

impl Serving {
    pub fn new(server: Arc<Server>) -> Serving {
        Serving(Arc::new(Shared {
            server: ArcSwap::new(server),
            tools_changed: watch::Sender::new(0),
        }))
    }

    /// The server to answer one request with.
    pub fn load(&self) -> Arc<Server> {
        self.0.server.load_full()
    }

    /// Serves `server` from the next request on and returns the one it replaces; requests
    /// that already loaded that one finish on it. `tools_changed`: the tool list differs, so
    /// open subscriptions that asked for `toolsListChanged` are told.
    pub fn replace(&self, server: Arc<Server>, tools_changed: bool) -> Arc<Server> {
        let old = self.0.server.swap(server);
        if tools_changed {
            self.0.tools_changed.send_modify(|changes| *changes += 1);
        }
        old
    }

    /// Turns changed each time a swap changes the tool list.
    pub fn tool_list_changes(&self) -> watch::Receiver<u64> {
        self.0.tools_changed.subscribe()
    }
}

impl std::fmt::Debug for Serving {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serving").finish_non_exhaustive()
    }
}

impl From<Arc<Server>> for Serving {
    fn from(server: Arc<Server>) -> Serving {
        Serving::new(server)
    }
}

impl From<Server> for Serving {
    fn from(server: Server) -> Serving {
        Serving::new(Arc::new(server))
    }
}

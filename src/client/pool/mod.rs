//! The connections exchanges go out on, kept between them. Every thread that calls shares
//! one [`Pool`] (per connect timeout), and a kept connection is taken again only on the
//! thread that last used it: on ferry's serving threads, each running its own
//! single-threaded runtime, that is the thread whose runtime its socket is registered with,
//! so a call never drives a socket through another thread's runtime. The kept connections
//! are held in shards by thread, so threads seldom wait on one another's lock, and each
//! shard keeps at most [`MAX_IDLE`].

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use http::Uri;

use super::tls::Tls;
use super::wire::{self, Connection};
use super::{Failure, Request, Response, Sink};

/// How long an unused kept connection is kept.
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// How often kept connections are looked over, closing the expired ones and those the
/// server closed, so that none lingers half-closed while no call comes.
const SWEEP_EVERY: Duration = Duration::from_secs(15);
/// Unused connections kept per shard (per serving thread, as long as there are no more
/// threads than shards).
const MAX_IDLE: usize = 64;
/// Shards of kept connections: threads made one after another (ferry's serving threads)
/// each get one of their own up to this many.
const SHARDS: usize = 16;

/// Connections kept between exchanges, all opened within one connect timeout. Cheap to
/// clone: clones share the connections.
#[derive(Debug, Clone)]
pub struct Pool(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    connect_timeout: Duration,
    /// How HTTPS sessions are opened; `None` where only plain HTTP is called.
    tls: Option<Tls>,
    shards: [Shard; SHARDS],
    sweep_every: Duration,
}

/// The kept connections of the threads that hash to it, oldest first. Aligned so that two
/// threads' shards never share a cache line.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Shard {
    idle: Mutex<VecDeque<Idle>>,
    /// A task looks over the shard's kept connections while there are any.
    sweeping: AtomicBool,
}

#[derive(Debug)]
struct Idle {
    connection: Connection,
    /// The thread that put it back.
    thread: ThreadId,
    since: Instant,
}

impl Pool {
    /// A pool whose connections must open within `connect_timeout`; `tls`, when given, is how
    /// its HTTPS connections are opened (without it an `https` request fails to connect).
    pub fn new(connect_timeout: Duration, tls: Option<Tls>) -> Pool {
        Pool::with_sweep(connect_timeout, tls, SWEEP_EVERY)
    }

    fn with_sweep(connect_timeout: Duration, tls: Option<Tls>, sweep_every: Duration) -> Pool {
        Pool(Arc::new(Shared {
            connect_timeout,
            tls,
            shards: Default::default(),
            sweep_every,
        }))
    }

    /// Sends `request` and reads at most `limit` bytes of the answer's body, on a kept
    /// connection to its origin when this thread has one.
    pub async fn send(&self, request: &Request, limit: usize) -> Result<Response, Failure> {
        self.send_to(request, limit, None).await
    }

    /// [`Pool::send`], handing the body to `sink` as it comes when the sink asks for it.
    /// Were the request sent once more on a fresh connection (a kept one closed on it), the
    /// sink has seen no head yet.
    pub async fn send_to(
        &self,
        request: &Request,
        limit: usize,
        mut sink: Option<&mut (dyn Sink + Send)>,
    ) -> Result<Response, Failure> {
        let no_host = || Failure::Connect {
            timeout: false,
            detail: "the request names no host".to_owned(),
        };
        let origin = origin(&request.uri).ok_or_else(no_host)?;
        let (secure, default_port) = match request.uri.scheme_str() {
            Some("https") => (true, ":443"),
            Some("http") => (false, ":80"),
            _ => return Err(no_host()),
        };
        // The `Host` header leaves out the default port, as other clients do.
        let host = origin.strip_suffix(default_port).unwrap_or(origin);
        let idle = self.checkout(origin, secure);
        let reused = idle.is_some();
        let mut connection = match idle {
            Some(connection) => connection,
            None => self.open(&request.uri, origin, secure).await?,
        };
        let first: Option<&mut (dyn Sink + Send)> = match &mut sink {
            Some(sink) => Some(&mut **sink),
            None => None,
        };
        let mut outcome = connection.exchange_to(request, host, limit, first).await;
        if reused
            && matches!(outcome, Err(wire::Error::Closed { nothing: true, .. }))
            && request.idempotent
        {
            // The server closed the idle connection as the request went out on it, or
            // before: no answer came, and the method allows sending it again, so it goes once
            // more on a fresh connection, as hyper's client did. This is not one of the
            // caller's retries, which a connection that was never kept gets only if allowed.
            connection = self.open(&request.uri, origin, secure).await?;
            outcome = connection.exchange_to(request, host, limit, sink).await;
        }
        match outcome {
            Ok(answer) => {
                if answer.reusable {
                    self.put_back(connection);
                }
                Ok(Response {
                    status: answer.status,
                    headers: answer.headers,
                    body: answer.body,
                    truncated: answer.truncated,
                })
            }
            Err(wire::Error::Closed { error, .. }) => Err(Failure::Closed {
                timeout: error.kind() == std::io::ErrorKind::TimedOut,
                detail: error.to_string(),
            }),
            Err(wire::Error::Head(malformed, detail)) => Err(Failure::Head(malformed, detail)),
            Err(wire::Error::Body {
                status,
                headers,
                detail,
            }) => Err(Failure::Body {
                status,
                headers: Box::new(headers),
                detail,
            }),
        }
    }

    /// [`Pool::send`] within `timeout`, connecting included: past it, a failure that says
    /// no answer came in time.
    pub async fn send_within(
        &self,
        request: &Request,
        limit: usize,
        timeout: Duration,
    ) -> Result<Response, Failure> {
        tokio::time::timeout(timeout, self.send(request, limit))
            .await
            .unwrap_or_else(|_| {
                Err(Failure::Closed {
                    timeout: true,
                    detail: format!("no answer within {} ms", timeout.as_millis()),
                })
            })
    }

    /// How many connections are kept.
    #[cfg(test)]
    fn kept(&self) -> usize {
        self.0
            .shards
            .iter()
            .map(|shard| {
                shard
                    .idle
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .len()
            })
            .sum()
    }

    /// A new connection to `uri`'s host (`origin`), within the connect timeout.
    async fn open(&self, uri: &Uri, origin: &str, secure: bool) -> Result<Connection, Failure> {
        let host = uri.host().unwrap_or_default();
        let port = uri.port_u16().unwrap_or(if secure { 443 } else { 80 });
        let tls = match (&self.0.tls, secure) {
            (Some(tls), true) => Some(tls),
            (None, true) => {
                return Err(Failure::Connect {
                    timeout: false,
                    detail: format!("connecting to {host}:{port}: no TLS set up for https"),
                });
            }
            (_, false) => None,
        };
        Connection::open(host, port, origin, self.0.connect_timeout, tls)
            .await
            .map_err(|error| Failure::Connect {
                timeout: error.kind() == std::io::ErrorKind::TimedOut,
                detail: format!("connecting to {host}:{port}: {error}"),
            })
    }

    /// The newest connection to `origin` (over TLS when `secure`) this thread kept that is
    /// still open; expired and closed ones met on the way are closed.
    fn checkout(&self, origin: &str, secure: bool) -> Option<Connection> {
        let thread = thread::current().id();
        let shard = self.0.shard(thread);
        let now = Instant::now();
        let mut closed = Vec::new();
        let found = loop {
            let mut idle = shard.idle.lock().unwrap_or_else(PoisonError::into_inner);
            while idle
                .front()
                .is_some_and(|entry| now.duration_since(entry.since) >= IDLE_TIMEOUT)
            {
                closed.extend(idle.pop_front());
            }
            let Some(position) = idle.iter().rposition(|entry| {
                entry.thread == thread
                    && entry.connection.origin() == origin
                    && entry.connection.is_tls() == secure
            }) else {
                break None;
            };
            let entry = idle.remove(position);
            drop(idle);
            if let Some(mut entry) = entry {
                if entry.connection.is_open() {
                    break Some(entry.connection);
                }
                closed.push(entry);
            }
        };
        // Closed outside the lock.
        drop(closed);
        found
    }

    /// Keeps `connection` for a later exchange on this thread, closing the shard's oldest
    /// beyond [`MAX_IDLE`], and starts the shard's sweep if none runs.
    fn put_back(&self, mut connection: Connection) {
        connection.rest();
        let thread = thread::current().id();
        let index = shard_index(thread);
        let shard = &self.0.shards[index];
        let entry = Idle {
            connection,
            thread,
            since: Instant::now(),
        };
        let mut idle = shard.idle.lock().unwrap_or_else(PoisonError::into_inner);
        let dropped = if idle.len() >= MAX_IDLE {
            idle.pop_front()
        } else {
            None
        };
        idle.push_back(entry);
        drop(idle);
        drop(dropped);
        // After the push, so that a sweep that found the shard empty and stopped is
        // followed by a new one.
        if !shard.sweeping.swap(true, Ordering::AcqRel) {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(sweep(Arc::downgrade(&self.0), index, self.0.sweep_every));
                }
                Err(_) => shard.sweeping.store(false, Ordering::Release),
            }
        }
    }
}

impl Shared {
    fn shard(&self, thread: ThreadId) -> &Shard {
        &self.shards[shard_index(thread)]
    }
}

/// The shard of `thread`'s kept connections. Thread ids count up from one as threads are
/// made, so taking the id itself, not a hash of it, gives consecutive threads shards of their
/// own.
fn shard_index(thread: ThreadId) -> usize {
    /// Keeps the one integer a `ThreadId` hashes as.
    #[derive(Default)]
    struct Id(u64);
    impl Hasher for Id {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            for &byte in bytes {
                self.0 = self.0.rotate_left(8) ^ u64::from(byte);
            }
        }
        fn write_u64(&mut self, value: u64) {
            self.0 ^= value;
        }
    }
    let mut id = Id::default();
    thread.hash(&mut id);
    (id.finish() % SHARDS as u64) as usize
}

/// Every `every` while the pool lives and its shard `index` keeps connections, closes those
/// expired or closed by the server.
async fn sweep(shared: Weak<Shared>, index: usize, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let shard = &shared.shards[index];
        let now = Instant::now();
        let mut idle = shard.idle.lock().unwrap_or_else(PoisonError::into_inner);
        let mut closed = Vec::new();
        for mut entry in std::mem::take(&mut *idle) {
            if now.duration_since(entry.since) < IDLE_TIMEOUT && entry.connection.is_open() {
                idle.push_back(entry);
            } else {
                closed.push(entry);
            }
        }
        let empty = idle.is_empty();
        if empty {
            shard.sweeping.store(false, Ordering::Release);
        }
        drop(idle);
        drop(closed);
        if empty {
            return;
        }
    }
}

/// `host:port` of an absolute `uri`, without any user information.
fn origin(uri: &Uri) -> Option<&str> {
    let authority = uri.authority()?.as_str();
    let origin = authority
        .rsplit_once('@')
        .map_or(authority, |(_, rest)| rest);
    (!origin.is_empty()).then_some(origin)
}

#[cfg(test)]
mod tests;

//! Spreading accepted connections over serving threads. One task accepts every connection
//! and hands each to the next thread in turn, so every thread gets an even share however the
//! threads happen to wake; each thread serves its share with a [`Share`], a listener to give
//! to [`crate::transport::http::serve`].

use std::io;
use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// Accepted connections waiting for their thread, per thread at most; the acceptor waits
/// while a thread's queue is full.
const QUEUED: usize = 256;

/// The connections one thread serves.
pub struct Share {
    /// Which share this is, from 0: named in the log.
    index: usize,
    local: SocketAddr,
    queued: mpsc::Receiver<(std::net::TcpStream, SocketAddr)>,
}

/// Splits `listener`'s connections into `threads` shares (at least one). The returned task
/// accepts and hands out connections until it is dropped or every share is.
pub fn spread(
    listener: TcpListener,
    threads: usize,
) -> io::Result<(impl Future<Output = ()> + Send + 'static, Vec<Share>)> {
    let local = listener.local_addr()?;
    let (senders, shares): (Vec<_>, Vec<_>) = (0..threads.max(1))
        .map(|index| {
            let (sender, queued) = mpsc::channel(QUEUED);
            (
                sender,
                Share {
                    index,
                    local,
                    queued,
                },
            )
        })
        .unzip();
    Ok((accept_loop(listener, senders), shares))
}

impl axum::serve::Listener for Share {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Some((stream, peer)) = self.queued.recv().await else {
                // The acceptor ended: no connection comes any more, as on a closed listener.
                return std::future::pending().await;
            };
            // Registers the connection with this thread's runtime.
            match TcpStream::from_std(stream) {
                Ok(stream) => {
                    tracing::debug!(worker = self.index, %peer, "connection accepted");
                    return (stream, peer);
                }
                Err(error) => tracing::warn!(%peer, %error, "cannot take over a connection"),
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}

async fn accept_loop(
    mut listener: TcpListener,
    mut senders: Vec<mpsc::Sender<(std::net::TcpStream, SocketAddr)>>,
) {
    let mut next = 0;
    while !senders.is_empty() {
        // axum's listener waits out accept errors (no file descriptors left, say) itself.
        let (stream, peer) = axum::serve::Listener::accept(&mut listener).await;
        // Leaves this runtime's reactor; the receiving thread registers it with its own.
        let stream = match stream.into_std() {
            Ok(stream) => stream,
            Err(error) => {
                tracing::warn!(%peer, %error, "cannot hand over a connection");
                continue;
            }
        };
        let mut connection = (stream, peer);
        while !senders.is_empty() {
            next %= senders.len();
            match senders[next].send(connection).await {
                Ok(()) => {
                    next += 1;
                    break;
                }
                // That thread stopped serving: the others share its part from now on.
                Err(mpsc::error::SendError(back)) => {
                    senders.remove(next);
                    connection = back;
                }
            }
        }
    }
}

//! HTTP/1.1 on one connection, plain TCP or a TLS session over it: writing a request and
//! reading its answer, with the framing rules of RFC 9112. A call drives its connection
//! itself, in its own task, so an answer costs no hand-over to a connection task and back;
//! that hand-over and a general client's pool were the call path's largest costs after the
//! kernel's. Which connections are kept between calls is [`super::pool`]'s.

use std::io::{self, Write as _};
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::{Buf, BytesMut};
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, StatusCode, Version};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use super::tls::Tls;
use super::{Malformed, Request, Sink};

/// At most this many header lines in a response head, as hyper's client allows.
const MAX_HEADERS: usize = 100;
/// At most this many bytes of response head, as hyper's client allows.
const MAX_HEAD_BYTES: usize = 8192 + 4096 * 100;
/// Interim (1xx) answers skipped before one is final; more is not HTTP a server sends.
const MAX_INTERIM: usize = 16;
/// The longest chunk-size line or trailer line read, and all trailers together.
const MAX_LINE: usize = 4096;
const MAX_TRAILERS: usize = 16 * 1024;
/// The least room a read is given: more than one answer's head and a small body, so a read
/// that comes back short shows the socket drained and the next call's liveness check can
/// skip its system call. A read that fills its room doubles the next one's, up to
/// [`MAX_READ_ROOM`], so a large body takes few reads.
const READ_ROOM: usize = 8192;
const MAX_READ_ROOM: usize = 256 * 1024;
/// A kept connection gives back buffers grown past this.
const KEPT_BUFFER: usize = 64 * 1024;

/// One open connection, with what it has read beyond the answer it was last asked for. The
/// stream is a [`Stream`] except where the fuzzing harness feeds bytes.
#[derive(Debug)]
pub(crate) struct Connection<S = Stream> {
    stream: S,
    /// The `host:port` it was opened to (over TLS when the stream says so).
    origin: Box<str>,
    /// Bytes read and not yet taken.
    read: BytesMut,
    /// The request being written, kept for its allocation.
    write: Vec<u8>,
    /// How much the next read asks for.
    room: usize,
}

/// A response read whole (or cut at the size cap).
#[derive(Debug)]
pub(crate) struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    /// The body went on past the size cap; the rest was not read.
    pub truncated: bool,
    /// The connection may carry another request.
    pub reusable: bool,
}

/// How an exchange failed.
#[derive(Debug)]
pub(crate) enum Error {
    /// The request could not be written (and no answer came), or the connection failed
    /// before a whole head came. `nothing` when not one byte of an answer came, so the
    /// upstream cannot have answered.
    Closed { nothing: bool, error: io::Error },
    /// The answer was not a response head ferry reads.
    Head(Malformed, &'static str),
    /// A head came, then the body failed.
    Body {
        status: StatusCode,
        headers: HeaderMap,
        detail: String,
    },
}

/// A response head as read.
#[derive(Debug)]
struct Head {
    status: StatusCode,
    version: Version,
    headers: HeaderMap,
}

/// How an answer's body ends (RFC 9112 §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Empty,
    Length(u64),
    Chunked,
    /// Until the upstream closes the connection.
    Close,
}

/// A connection's byte stream: plain TCP, or a TLS session over it.
#[derive(Debug)]
pub(crate) enum Stream {
    Plain(TcpStream),
    /// Boxed: a session's state is large beside a socket's, and kept connections move.
    Tls(Box<TlsStream<TcpStream>>),
}

impl Connection<Stream> {
    /// Opens a connection to `host` (a name, an IPv4 address or a bracketed IPv6 one) and
    /// `port`, known as `origin`, in a TLS session when `tls` is given. A name's addresses
    /// are tried in turn, each given an equal share of `connect_timeout`, as hyper's
    /// connector does; the TLS handshake gets what is left of it. Resolving the name is
    /// bounded by the caller's deadline only. A connect that ran out of time is `TimedOut`;
    /// a handshake that failed (a certificate not trusted, say) is the connect's failure.
    pub async fn open(
        host: &str,
        port: u16,
        origin: &str,
        connect_timeout: Duration,
        tls: Option<&Tls>,
    ) -> io::Result<Connection> {
        let bare = host
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
            .unwrap_or(host);
        let addresses: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => tokio::net::lookup_host((bare, port)).await?.collect(),
        };
        let deadline = tokio::time::Instant::now() + connect_timeout;
        let share = connect_timeout / u32::try_from(addresses.len()).unwrap_or(u32::MAX).max(1);
        let mut last = io::Error::new(
            io::ErrorKind::NotFound,
            format!("{bare} resolves to no address"),
        );
        let mut connected = None;
        for address in addresses {
            match tokio::time::timeout(share, TcpStream::connect(address)).await {
                Ok(Ok(stream)) => {
                    connected = Some(stream);
                    break;
                }
                Ok(Err(error)) => last = error,
                Err(_) => {
                    last = io::Error::new(io::ErrorKind::TimedOut, format!("{address} timed out"));
                }
            }
        }
        let stream = connected.ok_or(last)?;
        stream.set_nodelay(true)?;
        let Some(tls) = tls else {
            return Ok(Connection::over(Stream::Plain(stream), origin));
        };
        match tokio::time::timeout_at(deadline, tls.connect(bare, stream)).await {
            Ok(Ok(session)) => Ok(Connection::over(Stream::Tls(Box::new(session)), origin)),
            Ok(Err(error)) => Err(io::Error::new(
                error.kind(),
                format!("TLS handshake: {error}"),
            )),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the TLS handshake timed out",
            )),
        }
    }

    /// Whether the connection runs in a TLS session.
    pub fn is_tls(&self) -> bool {
        matches!(self.stream, Stream::Tls(_))
    }

    /// Whether an idle connection can still carry a request: the server has neither closed
    /// it nor sent anything unasked, as far as the runtime has seen (a close that arrived
    /// while this thread was busy and not yet polled for is missed; see the pool's resend).
    /// Costs no system call when nothing arrived since the last read drained the socket.
    pub fn is_open(&mut self) -> bool {
        let mut probe = [0u8; 1];
        match &mut self.stream {
            Stream::Plain(stream) => {
                matches!(stream.try_read(&mut probe), Err(error) if error.kind() == io::ErrorKind::WouldBlock)
            }
            // Read through the session, never the socket under it: what came may be TLS
            // records no request asked for but no byte of an answer either (a session
            // ticket), which rustls takes in; a close, a byte of data or an error ends it.
            Stream::Tls(session) => {
                let mut buffer = ReadBuf::new(&mut probe);
                let mut context = Context::from_waker(Waker::noop());
                Pin::new(session.as_mut())
                    .poll_read(&mut context, &mut buffer)
                    .is_pending()
            }
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(stream) => Pin::new(stream).poll_read(context, buffer),
            Stream::Tls(session) => Pin::new(session.as_mut()).poll_read(context, buffer),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(stream) => Pin::new(stream).poll_write(context, bytes),
            Stream::Tls(session) => Pin::new(session.as_mut()).poll_write(context, bytes),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(stream) => Pin::new(stream).poll_flush(context),
            Stream::Tls(session) => Pin::new(session.as_mut()).poll_flush(context),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(stream) => Pin::new(stream).poll_shutdown(context),
            Stream::Tls(session) => Pin::new(session.as_mut()).poll_shutdown(context),
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Connection<S> {
    /// A connection over `stream`, opened to `origin`.
    pub(crate) fn over(stream: S, origin: &str) -> Connection<S> {
        Connection {
            stream,
            origin: origin.into(),
            read: BytesMut::new(),
            write: Vec::new(),
            room: READ_ROOM,
        }
    }

    /// The `host:port` the connection was opened to.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Writes `request` (to `host`, the `Host` header's value) and reads its answer, keeping
    /// at most `limit` bytes of the body.
    pub(crate) async fn exchange(
        &mut self,
        request: &Request,
        host: &str,
        limit: usize,
    ) -> Result<Answer, Error> {
        self.exchange_to(request, host, limit, None).await
    }

    /// [`Connection::exchange`], handing the body to `sink` as it comes when the sink asks
    /// for it on seeing the head; the answer's body is then empty.
    pub(crate) async fn exchange_to(
        &mut self,
        request: &Request,
        host: &str,
        limit: usize,
        mut sink: Option<&mut (dyn Sink + Send)>,
    ) -> Result<Answer, Error> {
        encode(request, host, &mut self.write);
        // A TLS session may hold back the last of what it encrypted until flushed; a socket
        // flushes at once.
        let written = match self.stream.write_all(&self.write).await {
            Ok(()) => self.stream.flush().await,
            failed => failed,
        };
        let wrote_all = written.is_ok();
        let head = match written {
            Ok(()) => self.read_head().await?,
            // An upstream may answer and close before it has read a whole request (a 413 or
            // a 401 to a large body): that answer is the result. The request is written whole
            // before any answer is read, so one that answers while still reading a body
            // larger than the sockets' buffers is only cut by the call's deadline.
            // Its failure is the write's, but whether any of an answer came, and a head that
            // came malformed, stay as read: a request half answered is not sent again.
            Err(error) => self.read_head().await.map_err(|failed| match failed {
                Error::Closed { nothing, .. } => Error::Closed { nothing, error },
                failed => failed,
            })?,
        };
        let Head {
            status,
            version,
            headers,
        } = head;
        let framing = framing(&request.method, status, version, &headers)
            .map_err(|detail| Error::Head(Malformed::Invalid, detail))?;
        let keep_alive = wrote_all && keep_alive(version, &headers) && framing != Framing::Close;
        let mut body = Body::new(framing, limit);
        if let Some(sink) = sink.take()
            && sink.head(status, &headers)
        {
            body.bytes = Vec::new();
            body.sink = Some(sink);
        }
        if let Err(detail) = self.read_body(&mut body).await {
            return Err(Error::Body {
                status,
                headers,
                detail,
            });
        }
        Ok(Answer {
            status,
            headers,
            reusable: keep_alive && !body.truncated && self.read.is_empty(),
            truncated: body.truncated,
            body: body.bytes,
        })
    }

    /// Reads until a final response head, skipping interim (1xx) ones.
    async fn read_head(&mut self) -> Result<Head, Error> {
        let mut interim = 0;
        let mut received = !self.read.is_empty();
        loop {
            if !self.read.is_empty() {
                if let Some((used, head)) = parse_head(&self.read)? {
                    self.read.advance(used);
                    if head.status == StatusCode::SWITCHING_PROTOCOLS {
                        return Err(Error::Head(
                            Malformed::Invalid,
                            "a protocol switch ferry did not ask for",
                        ));
                    }
                    if head.status.is_informational() {
                        interim += 1;
                        if interim > MAX_INTERIM {
                            return Err(Error::Head(Malformed::Invalid, "too many 1xx answers"));
                        }
                        continue;
                    }
                    return Ok(head);
                }
                if self.read.len() >= MAX_HEAD_BYTES {
                    return Err(Error::Head(Malformed::TooLarge, "response head too large"));
                }
            }
            let nothing = !received;
            match self.fill().await {
                Ok(0) => {
                    return Err(Error::Closed {
                        nothing,
                        error: io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "connection closed before a whole response head",
                        ),
                    });
                }
                Ok(_) => received = true,
                Err(error) => return Err(Error::Closed { nothing, error }),
            }
        }
    }

    /// Reads `body` to its end, or to the size cap.
    async fn read_body(&mut self, body: &mut Body<'_>) -> Result<(), String> {
        match body.framing {
            Framing::Empty => Ok(()),
            Framing::Length(length) => self.read_exact_into(body, length).await,
            Framing::Close => loop {
                if body.take(&mut self.read, usize::MAX) {
                    return Ok(());
                }
                if self.fill().await.map_err(|error| error.to_string())? == 0 {
                    return Ok(());
                }
            },
            Framing::Chunked => loop {
                let line = self.line().await?;
                let size = chunk_size(&line)?;
                if size == 0 {
                    return self.trailers().await;
                }
                self.read_exact_into(body, size).await?;
                if body.truncated {
                    return Ok(());
                }
                if !self.line().await?.is_empty() {
                    return Err("a chunk is longer than its size says".to_owned());
                }
            },
        }
    }

    /// Moves the next `length` bytes of the connection into `body`, stopping at its cap.
    async fn read_exact_into(&mut self, body: &mut Body<'_>, length: u64) -> Result<(), String> {
        let mut left = length;
        loop {
            let take = usize::try_from(left).unwrap_or(usize::MAX);
            let before = self.read.len();
            if body.take(&mut self.read, take) {
                return Ok(());
            }
            left -= (before - self.read.len()) as u64;
            if left == 0 {
                return Ok(());
            }
            if body.len() == body.limit {
                // Full, and the length says more follows: cut without waiting for it.
                body.truncated = true;
                return Ok(());
            }
            match self.fill().await {
                Ok(0) => return Err("connection closed before the body ended".to_owned()),
                Ok(_) => {}
                Err(error) => return Err(error.to_string()),
            }
        }
    }

    /// The next line (without its CRLF), at most [`MAX_LINE`] long.
    async fn line(&mut self) -> Result<BytesMut, String> {
        loop {
            if let Some(end) = self.read.iter().position(|&byte| byte == b'\n') {
                if end > MAX_LINE {
                    return Err("a chunk line is too long".to_owned());
                }
                let mut line = self.read.split_to(end + 1);
                line.truncate(end);
                if line.last() != Some(&b'\r') {
                    return Err("a chunk line does not end in CRLF".to_owned());
                }
                line.truncate(end - 1);
                return Ok(line);
            }
            if self.read.len() > MAX_LINE {
                return Err("a chunk line is too long".to_owned());
            }
            match self.fill().await {
                Ok(0) => return Err("connection closed before the body ended".to_owned()),
                Ok(_) => {}
                Err(error) => return Err(error.to_string()),
            }
        }
    }

    /// Skips the trailer section after the last chunk, up to its empty line.
    async fn trailers(&mut self) -> Result<(), String> {
        let mut total = 0;
        loop {
            let line = self.line().await?;
            if line.is_empty() {
                return Ok(());
            }
            total += line.len();
            if total > MAX_TRAILERS {
                return Err("the trailers are too long".to_owned());
            }
        }
    }

    /// Reads what the socket has into the read buffer; `Ok(0)` at its end.
    async fn fill(&mut self) -> io::Result<usize> {
        // `reserve` moves what is left to the front of the buffer when that makes the room.
        let room = self.room.max(self.read.len());
        if self.read.capacity() - self.read.len() < room {
            self.read.reserve(room);
        }
        let read = self.stream.read_buf(&mut self.read).await?;
        self.room = if read >= room {
            (room * 2).min(MAX_READ_ROOM)
        } else {
            READ_ROOM
        };
        Ok(read)
    }

    /// Makes the connection ready to be kept idle: buffers a large answer or request grew
    /// are given back.
    pub fn rest(&mut self) {
        if self.read.capacity() > KEPT_BUFFER {
            self.read = BytesMut::new();
        }
        if self.write.capacity() > KEPT_BUFFER {
            self.write = Vec::new();
        }
        self.room = READ_ROOM;
    }
}

/// A body being collected, up to its size cap: kept, or handed to a sink as it comes.
struct Body<'s> {
    framing: Framing,
    bytes: Vec<u8>,
    /// Where the body goes instead of `bytes`.
    sink: Option<&'s mut (dyn Sink + Send)>,
    /// How much of the body was handed to the sink.
    sunk: usize,
    limit: usize,
    truncated: bool,
}

impl<'s> Body<'s> {
    fn new(framing: Framing, limit: usize) -> Body<'s> {
        let expected = match framing {
            Framing::Length(length) => usize::try_from(length).unwrap_or(usize::MAX),
            _ => 0,
        };
        Body {
            framing,
            bytes: body_for(expected, limit),
            sink: None,
            sunk: 0,
            limit,
            truncated: false,
        }
    }

    /// How much of the body came, kept or handed on.
    fn len(&self) -> usize {
        self.bytes.len() + self.sunk
    }

    /// Moves up to `most` bytes from `read` into the body; true when the cap was passed,
    /// so reading stops.
    fn take(&mut self, read: &mut BytesMut, most: usize) -> bool {
        let taken = read.len().min(most);
        if let Some(sink) = &mut self.sink {
            let room = self.limit - self.sunk;
            let given = taken.min(room);
            if given > 0 {
                sink.body(&read[..given]);
            }
            self.sunk += given;
            if taken > room {
                self.truncated = true;
                return true;
            }
            read.advance(taken);
            return false;
        }
        if append(&mut self.bytes, &read[..taken], self.limit) {
            self.truncated = true;
            return true;
        }
        read.advance(taken);
        false
    }
}

/// Room for a body of `expected` bytes kept to `limit`: never more than a mebibyte ahead of
/// what came, whatever a length says.
fn body_for(expected: usize, limit: usize) -> Vec<u8> {
    Vec::with_capacity(expected.min(limit).min(1 << 20))
}

/// Appends `chunk` to `body` up to `limit` bytes in all; true when it did not fit whole.
fn append(body: &mut Vec<u8>, chunk: &[u8], limit: usize) -> bool {
    let room = limit - body.len();
    if chunk.len() > room {
        body.extend_from_slice(&chunk[..room]);
        return true;
    }
    body.extend_from_slice(chunk);
    false
}

/// Writes the request line, the headers and the body of `request` into `out`: the target in
/// origin form, `Host` first, `Content-Length` when there is a body, and `User-Agent` and
/// `Accept: */*` when the request has none (what HTTP clients send by default).
fn encode(request: &Request, host: &str, out: &mut Vec<u8>) {
    out.clear();
    let target = request
        .uri
        .path_and_query()
        .map_or("/", |path_and_query| path_and_query.as_str());
    out.extend_from_slice(request.method.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\nhost: ");
    out.extend_from_slice(host.as_bytes());
    out.extend_from_slice(b"\r\n");
    // Whether the request names its own, noted on the way rather than looked up after.
    let (mut user_agent, mut accept) = (false, false);
    for (name, value) in &request.headers {
        user_agent |= name == header::USER_AGENT;
        accept |= name == header::ACCEPT;
        // The framing is ferry's to write, whatever a credential's header is named.
        if name == header::HOST
            || name == header::CONTENT_LENGTH
            || name == header::TRANSFER_ENCODING
        {
            continue;
        }
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if !user_agent {
        out.extend_from_slice(b"user-agent: ");
        out.extend_from_slice(super::USER_AGENT.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if !accept {
        out.extend_from_slice(b"accept: */*\r\n");
    }
    let body = request.body.as_deref().unwrap_or_default();
    if !body.is_empty() {
        out.extend_from_slice(b"content-length: ");
        // Written in place: `Vec<u8>`'s writes cannot fail.
        let _ = write!(out, "{}", body.len());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
}

/// A response head at the start of `bytes`, with its length; `None` when more must be read.
fn parse_head(bytes: &[u8]) -> Result<Option<(usize, Head)>, Error> {
    // Left uninitialised: the parser writes only the lines it finds, so a head of a few
    // lines does not pay for clearing room for a hundred.
    let mut lines = [const { std::mem::MaybeUninit::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut response,
        bytes,
        &mut lines,
    );
    let used = match parsed {
        Ok(httparse::Status::Complete(used)) => used,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(Error::Head(Malformed::TooLarge, "too many header lines"));
        }
        Err(_) => return Err(Error::Head(Malformed::Invalid, "not an HTTP response head")),
    };
    let invalid = |detail| Error::Head(Malformed::Invalid, detail);
    let status = response
        .code
        .and_then(|code| StatusCode::from_u16(code).ok())
        .ok_or_else(|| invalid("an invalid status code"))?;
    let version = match response.version {
        Some(0) => Version::HTTP_10,
        _ => Version::HTTP_11,
    };
    let mut headers = HeaderMap::with_capacity(response.headers.len());
    for line in response.headers.iter() {
        let name = HeaderName::from_bytes(line.name.as_bytes())
            .map_err(|_| invalid("an invalid header name"))?;
        let value =
            HeaderValue::from_bytes(line.value).map_err(|_| invalid("an invalid header value"))?;
        headers.append(name, value);
    }
    Ok(Some((
        used,
        Head {
            status,
            version,
            headers,
        },
    )))
}

/// How the body of an answer to `method` with this head ends.
fn framing(
    method: &Method,
    status: StatusCode,
    version: Version,
    headers: &HeaderMap,
) -> Result<Framing, &'static str> {
    if *method == Method::HEAD
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED
    {
        return Ok(Framing::Empty);
    }
    if let Some(last) = headers
        .get_all(header::TRANSFER_ENCODING)
        .iter()
        .next_back()
    {
        if version == Version::HTTP_10 {
            return Err("transfer-encoding in an HTTP/1.0 answer");
        }
        let chunked = last
            .as_bytes()
            .rsplit(|&byte| byte == b',')
            .next()
            .is_some_and(|coding| coding.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        return Ok(if chunked {
            Framing::Chunked
        } else {
            Framing::Close
        });
    }
    let mut length = None;
    for value in headers.get_all(header::CONTENT_LENGTH) {
        for part in value.as_bytes().split(|&byte| byte == b',') {
            let part = part.trim_ascii();
            let parsed = std::str::from_utf8(part)
                .ok()
                .filter(|text| !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit()))
                .and_then(|text| text.parse::<u64>().ok())
                .ok_or("an invalid content-length")?;
            if length.is_some_and(|length| length != parsed) {
                return Err("conflicting content-length values");
            }
            length = Some(parsed);
        }
    }
    Ok(length.map_or(Framing::Close, Framing::Length))
}

/// Whether the upstream lets the connection carry another request. An answer with both
/// lengths is one RFC 9112 says to treat as an error: its chunked framing is read, but the
/// connection is not trusted again.
fn keep_alive(version: Version, headers: &HeaderMap) -> bool {
    if headers.contains_key(header::TRANSFER_ENCODING)
        && headers.contains_key(header::CONTENT_LENGTH)
    {
        return false;
    }
    let says = |token: &[u8]| {
        headers.get_all(header::CONNECTION).iter().any(|value| {
            value
                .as_bytes()
                .split(|&byte| byte == b',')
                .any(|part| part.trim_ascii().eq_ignore_ascii_case(token))
        })
    };
    if says(b"close") {
        return false;
    }
    version == Version::HTTP_11 || says(b"keep-alive")
}

/// The size of a chunk from its size line: hex digits, then optional whitespace and any
/// extensions after `;` (RFC 9112 §7.1). Leading zeros are allowed; a size past `u64` is
/// not.
fn chunk_size(line: &[u8]) -> Result<u64, String> {
    let invalid = || "an invalid chunk size".to_owned();
    let end = line
        .iter()
        .position(|byte| !byte.is_ascii_hexdigit())
        .unwrap_or(line.len());
    let (digits, rest) = line.split_at(end);
    let extension = rest
        .iter()
        .find(|&&byte| byte != b' ' && byte != b'\t')
        .is_none_or(|&byte| byte == b';');
    if digits.is_empty() || !extension {
        return Err(invalid());
    }
    let significant = &digits[digits.iter().take_while(|&&byte| byte == b'0').count()..];
    if significant.len() > 16 {
        return Err(invalid());
    }
    significant.iter().try_fold(0u64, |size, &byte| {
        let digit = char::from(byte).to_digit(16).ok_or_else(invalid)?;
        Ok(size << 4 | u64::from(digit))
    })
}

#[cfg(test)]
pub(crate) mod tests;

//! Accepting connections within limits an operator sets: how many may be
//! open at once, how long one may stay silent, and what the accept loop
//! does when the process runs out of file descriptors.
//!
//! tonic's own listener retries a failed `accept` at once: at the
//! descriptor limit (EMFILE) every retry fails again, and the loop spins a
//! core while no client gets in. Here a failed `accept` waits before the
//! next (10 ms, doubling up to a second, back to 10 ms at the next
//! success). A connection beyond `max_connections` is closed as soon as
//! it is accepted, so the process keeps descriptors for its database and
//! plugins, and the client learns at once instead of timing out. A
//! connection that sends nothing for `idle` (or nothing at all within
//! `handshake` of being accepted) is closed: the server's HTTP/2 pings
//! make every live client answer well within that, so only sockets that
//! are dead, or held open by a client that speaks no gRPC, are dropped.
//! This module never looks at what a connection carries.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};
use tokio_stream::Stream;
use tonic::transport::server::{Connected, TcpConnectInfo};

/// What connections may do.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Connections open at once; more are closed as they come.
    pub max_connections: usize,
    /// A connection that sends nothing for this long is closed.
    pub idle: Duration,
    /// A new connection must send its first bytes within this.
    pub handshake: Duration,
}

/// The first wait after a failed `accept`, and the longest.
const FIRST_BACKOFF: Duration = Duration::from_millis(10);
const LONGEST_BACKOFF: Duration = Duration::from_secs(1);

/// The connections a listener accepts, within `limits`.
pub struct Incoming {
    listener: TcpListener,
    limits: Limits,
    open: Arc<AtomicUsize>,
    /// Waiting after a failed `accept`.
    backoff: Option<Pin<Box<Sleep>>>,
    next_backoff: Duration,
    /// When a refusal or failure was last logged (at most one a second).
    last_warning: Option<Instant>,
}

impl Incoming {
    pub fn new(listener: TcpListener, limits: Limits) -> Incoming {
        Incoming {
            listener,
            limits,
            open: Arc::new(AtomicUsize::new(0)),
            backoff: None,
            next_backoff: FIRST_BACKOFF,
            last_warning: None,
        }
    }

    /// Whether to log now (at most once a second, so a flood of refused
    /// connections does not become a flood of log lines).
    fn may_warn(&mut self) -> bool {
        let now = Instant::now();
        let due = self
            .last_warning
            .is_none_or(|last| now.duration_since(last) >= Duration::from_secs(1));
        if due {
            self.last_warning = Some(now);
        }
        due
    }
}

impl Stream for Incoming {
    type Item = io::Result<Connection>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(backoff) = self.backoff.as_mut() {
                ready!(backoff.as_mut().poll(cx));
                self.backoff = None;
            }
            match ready!(self.listener.poll_accept(cx)) {
                Ok((stream, peer)) => {
                    self.next_backoff = FIRST_BACKOFF;
                    let open = self.open.fetch_add(1, Ordering::AcqRel) + 1;
                    let counted = Counted(self.open.clone());
                    crate::metrics::connections_open(open);
                    if open > self.limits.max_connections {
                        drop((stream, counted));
                        crate::metrics::connection_refused();
                        if self.may_warn() {
                            tracing::warn!(%peer, max = self.limits.max_connections, "connection limit reached: new connections are closed (--max-connections)");
                        }
                        continue;
                    }
                    // Answers are written at once: without TCP_NODELAY,
                    // Nagle's algorithm meets delayed ACKs and adds ~40 ms
                    // to larger replies.
                    let _ = stream.set_nodelay(true);
                    return Poll::Ready(Some(Ok(Connection::new(stream, counted, self.limits))));
                }
                Err(e) => {
                    // EMFILE, ENFILE, ENOBUFS: retrying at once fails
                    // again. Any other error (a connection reset before
                    // it was accepted) waits the first step only.
                    let wait = self.next_backoff;
                    self.next_backoff = (wait * 2).min(LONGEST_BACKOFF);
                    if self.may_warn() {
                        tracing::warn!(error = %e, ?wait, "accepting a connection failed; waiting before the next");
                    }
                    self.backoff = Some(Box::pin(tokio::time::sleep(wait)));
                }
            }
        }
    }
}

/// One open connection, counted until it is dropped.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        let open = self.0.fetch_sub(1, Ordering::AcqRel) - 1;
        crate::metrics::connections_open(open);
    }
}

/// An accepted connection, closed when it stays silent too long.
pub struct Connection {
    stream: TcpStream,
    _counted: Counted,
    idle: Duration,
    handshake: Duration,
    /// When the connection last sent something (or was accepted).
    last_read: Instant,
    /// Whether it has sent anything yet.
    greeted: bool,
    /// Wakes the reader when the connection may have been silent too long.
    timer: Pin<Box<Sleep>>,
}

impl Connection {
    fn new(stream: TcpStream, counted: Counted, limits: Limits) -> Connection {
        let now = Instant::now();
        Connection {
            stream,
            _counted: counted,
            idle: limits.idle,
            handshake: limits.handshake,
            last_read: now,
            greeted: false,
            timer: Box::pin(tokio::time::sleep_until(now + limits.handshake)),
        }
    }

    /// The instant the connection is closed if it sends nothing before.
    fn deadline(&self) -> Instant {
        let limit = if self.greeted {
            self.idle
        } else {
            self.handshake
        };
        self.last_read + limit
    }
}

impl Connected for Connection {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.stream.connect_info()
    }
}

impl AsyncRead for Connection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.stream).poll_read(cx, buf) {
            Poll::Ready(result) => {
                if buf.filled().len() > before {
                    // The timer is moved only when it fires: a read costs
                    // a clock reading, not a timer update.
                    self.last_read = Instant::now();
                    self.greeted = true;
                }
                Poll::Ready(result)
            }
            Poll::Pending => {
                // The timer runs to the handshake limit first; when it
                // fires on a connection that spoke since, it is set again
                // to the idle limit after its last bytes.
                loop {
                    if self.timer.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    let deadline = self.deadline();
                    if Instant::now() >= deadline {
                        return Poll::Ready(Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            "the connection was silent too long",
                        )));
                    }
                    self.timer.as_mut().reset(deadline);
                }
            }
        }
    }
}

impl AsyncWrite for Connection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

//! A session's WebSocket after the upgrade, and the pumps that write to it: the socket type,
//! its reader, the vectored frame writer, and the polite close — shared by the session
//! connections and the raw-throughput endpoint, and knowing neither.

use super::metrics::{Metrics, Reclaim};
use crate::ws::{self, Opcode, Role, WsError};
use std::future::Future;
use std::io::IoSlice;
use std::time::{Duration, Instant};
use tokio::io::{split, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::sync::Notify;
use tokio::time::timeout;
use tracing::{debug, warn};

/// How long an HTTP reply, a refusal, or the close of a connection whose client stopped
/// reading may take.
pub const LINGER: Duration = Duration::from_secs(1);

/// Reads from the client's side of a session's WebSocket.
pub struct WsReader<S> {
    half: ReadHalf<S>,
    frames: ws::Reader,
}

/// A session's WebSocket after the upgrade: the stream's two halves, each driven by its own
/// future.
pub struct WebSocket<S> {
    pub reader: WsReader<S>,
    pub writer: WriteHalf<S>,
    /// What the client's TCP stack has acknowledged, where the socket tells.
    pub acks: Option<AckProbe>,
}

/// Bytes read from the socket at a time: client frames are small (credit) to a few hundred KiB
/// (an OT-extension chunk).
const READ_CHUNK: usize = 64 << 10;

impl<S: AsyncRead + AsyncWrite> WebSocket<S> {
    /// `rest`: bytes the client sent after its request head, already read; `acks`: the probe
    /// of the TCP connection under `stream` ([`AckProbe::of`]).
    pub fn new(stream: S, acks: Option<AckProbe>, rest: &[u8], max_message: usize) -> Self {
        let (half, writer) = split(stream);
        WebSocket { reader: WsReader { half, frames: ws::Reader::new(Role::Server, max_message, rest, READ_CHUNK) }, writer, acks }
    }
}

/// What the client sent next.
pub enum ClientMessage {
    Binary(Vec<u8>),
    Text,
    Ping(Vec<u8>),
    Pong,
    /// A Close frame, or the end of the stream.
    Closed,
}

impl<S: AsyncRead> WsReader<S> {
    pub async fn next_message(&mut self) -> Result<ClientMessage, ReadError> {
        loop {
            if let Some(message) = self.frames.next_message()? {
                return Ok(match message {
                    ws::Message::Binary(payload) => ClientMessage::Binary(self.frames.payload(&payload).to_vec()),
                    ws::Message::Text => ClientMessage::Text,
                    ws::Message::Ping(data) => ClientMessage::Ping(data),
                    ws::Message::Pong => ClientMessage::Pong,
                    ws::Message::Close(_) => ClientMessage::Closed,
                });
            }
            let n = self.half.read(self.frames.spare()).await?;
            if n == 0 {
                return Ok(ClientMessage::Closed);
            }
            self.frames.filled(n);
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Ws(#[from] WsError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// What the client's TCP stack has acknowledged of what the server sent (Linux's `TCP_INFO`,
/// `tcpi_bytes_acked`): how a write that waits tells a client that reads, however slowly, from
/// one that stopped. The write call alone cannot: Linux wakes a writer blocked on a full send
/// buffer only once about a third of it has drained, which at a few tens of KB/s takes longer
/// than the write timeout although the client takes bytes all along.
pub struct AckProbe {
    /// A second descriptor of the connection's socket, so that the probe never outlives it.
    #[cfg(target_os = "linux")]
    socket: std::os::fd::OwnedFd,
}

impl AckProbe {
    /// The probe of an accepted connection; `None` where the system does not tell (then a write
    /// is judged by whether its call takes a byte).
    #[cfg(target_os = "linux")]
    pub fn of(tcp: &tokio::net::TcpStream) -> Option<AckProbe> {
        use std::os::fd::AsFd;
        let probe = AckProbe { socket: tcp.as_fd().try_clone_to_owned().ok()? };
        probe.acked().map(|_| probe)
    }

    #[cfg(not(target_os = "linux"))]
    pub fn of(_tcp: &tokio::net::TcpStream) -> Option<AckProbe> {
        None
    }

    /// Bytes the peer has acknowledged so far; `None` if the kernel does not report them
    /// (before Linux 4.1).
    #[cfg(target_os = "linux")]
    fn acked(&self) -> Option<u64> {
        use std::os::fd::AsRawFd;
        // SAFETY: an all-zero tcp_info is a valid value of this plain C struct of integers.
        let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        // SAFETY: the descriptor is open (we own it); `info` is writable for `len` bytes, and
        // the kernel writes at most `len` bytes and returns the length it wrote in `len`.
        let rc = unsafe { libc::getsockopt(self.socket.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_INFO, (&raw mut info).cast(), &mut len) };
        let reported = std::mem::offset_of!(libc::tcp_info, tcpi_bytes_acked) + std::mem::size_of::<u64>();
        (rc == 0 && len as usize >= reported).then_some(info.tcpi_bytes_acked)
    }

    #[cfg(not(target_os = "linux"))]
    fn acked(&self) -> Option<u64> {
        None
    }
}

/// How often a write that waits looks at what the client acknowledged.
const ACK_CHECK_EVERY: Duration = Duration::from_secs(1);

/// When a write to the client counts as stalled: after `limit` without the client taking a
/// byte — without its TCP stack acknowledging one where `acks` tells, else without the write
/// call taking one. A slow reader is not stalled, however long the whole write takes; whether
/// it is fast enough is the session's progress rate to judge, from its credit.
#[derive(Clone, Copy)]
pub struct Stall<'a> {
    pub limit: Duration,
    pub acks: Option<&'a AckProbe>,
}

impl Stall<'_> {
    /// Judged by each call alone: for the short writes of a refusal or a close.
    pub fn per_call(limit: Duration) -> Stall<'static> {
        Stall { limit, acks: None }
    }

    /// `op` to its end, or `TimedOut` once the client has taken nothing for the limit.
    async fn wait<T>(self, op: impl Future<Output = std::io::Result<T>>) -> std::io::Result<T> {
        tokio::pin!(op);
        let (mut since, mut acked) = (Instant::now(), self.acks.and_then(AckProbe::acked));
        loop {
            let left = self.limit.saturating_sub(since.elapsed());
            let check = if acked.is_some() { left.min(ACK_CHECK_EVERY) } else { left };
            if let Ok(result) = timeout(check, &mut op).await {
                return result;
            }
            let now_acked = self.acks.and_then(AckProbe::acked);
            if now_acked > acked {
                (since, acked) = (Instant::now(), now_acked);
            } else if since.elapsed() >= self.limit {
                return Err(std::io::ErrorKind::TimedOut.into());
            }
        }
    }
}

/// Writes whole server frames (unmasked) and flushes (TLS holds records until then): the
/// headers beside the payloads, one vectored write for all of them, looping over partial
/// writes, each within `stall`.
pub async fn write_messages<W: AsyncWrite + Unpin>(w: &mut W, opcode: Opcode, payloads: &[Vec<u8>], stall: Stall<'_>) -> std::io::Result<()> {
    let mut headers = vec![[0u8; ws::MAX_HEADER]; payloads.len()];
    let mut parts: Vec<&[u8]> = Vec::with_capacity(2 * payloads.len());
    let lens: Vec<usize> = payloads.iter().zip(headers.iter_mut()).map(|(p, h)| ws::write_header(opcode, p.len(), None, h)).collect();
    for ((h, &n), p) in headers.iter().zip(&lens).zip(payloads) {
        parts.push(&h[..n]);
        parts.push(p);
    }
    let (mut part, mut offset) = (0, 0);
    while part < parts.len() {
        let slices: Vec<IoSlice> = std::iter::once(IoSlice::new(&parts[part][offset..])).chain(parts[part + 1..].iter().map(|p| IoSlice::new(p))).collect();
        let mut written = stall.wait(w.write_vectored(&slices)).await?;
        if written == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        while part < parts.len() && written >= parts[part].len() - offset {
            written -= parts[part].len() - offset;
            part += 1;
            offset = 0;
        }
        offset += written;
    }
    stall.wait(w.flush()).await
}

/// Frames queued at once go out in one vectored write of at most this many bytes.
const COALESCE_BYTES: usize = 1 << 20;

/// Where `write_frames` takes its frames from, and where written ones go: dropped, or back to
/// the producer for reuse (`spent`; the raw-throughput endpoint's, so that it measures the
/// transport and not its own copying).
pub struct Outbox<'a> {
    pub frames: &'a flume::Receiver<Vec<u8>>,
    pub spent: Option<&'a flume::Sender<Vec<u8>>>,
}

/// Tells a connection's writer to stop: its session's slot was reclaimed for another client.
#[derive(Default)]
pub struct StopSignal {
    stopped: std::sync::atomic::AtomicBool,
    notify: Notify,
}

impl StopSignal {
    pub fn stop(&self) {
        self.stopped.store(true, std::sync::atomic::Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    pub fn is_stopped(&self) -> bool {
        self.stopped.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Returns once [`stop`](Self::stop) has been called; never for `None`.
    async fn stopped(signal: Option<&StopSignal>) {
        let Some(signal) = signal else { return std::future::pending().await };
        loop {
            // Created before the check: a stop between the two still wakes it.
            let notified = signal.notify.notified();
            if signal.is_stopped() {
                return;
            }
            notified.await;
        }
    }
}

/// How [`write_frames`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// The session thread ended and everything it sent is written.
    All,
    /// A write failed, or the client stopped reading.
    Failed,
    /// Stopped by its [`StopSignal`]: between messages (the client can still be told why), or
    /// in the middle of one (nothing more can be said on this connection).
    Stopped { mid_message: bool },
}

/// The session thread's frames to the client, until the thread ends, a write fails, or `stop`;
/// pongs for the client's pings between them, each before any frame that comes after it (a
/// ping read before the client's Close is answered before the server's Close, RFC 6455
/// §5.5.2). A write may wait on the client as long as `stall` allows: longer means the client
/// stopped reading.
pub async fn write_frames<W>(w: &mut W, outbox: Outbox<'_>, pongs: Option<&flume::Receiver<Vec<u8>>>, stall: Stall<'_>, stop: Option<&StopSignal>, metrics: &Metrics) -> Written
where
    W: AsyncWrite + Unpin,
{
    let Outbox { frames: outbox, spent } = outbox;
    let mut batch = Vec::new();
    loop {
        let first = tokio::select! {
            biased;
            () = StopSignal::stopped(stop) => return Written::Stopped { mid_message: false },
            // Pongs first: the reader queues a ping's pong before it hands the session thread
            // anything read after the ping, so the session's end cannot overtake it.
            Some(ping) = recv_pong(pongs) => {
                match write_unless_stopped(w, Opcode::Pong, &[ping], stall, stop, metrics).await {
                    None => continue,
                    Some(end) => return end,
                }
            }
            frame = outbox.recv_async() => frame.ok(),
        };
        let Some(first) = first else { break };
        // Send what is ready together: fewer, larger socket writes.
        let mut bytes = first.len();
        batch.push(first);
        while bytes < COALESCE_BYTES {
            let Ok(next) = outbox.try_recv() else { break };
            bytes += next.len();
            batch.push(next);
        }
        if let Some(end) = write_unless_stopped(w, Opcode::Binary, &batch, stall, stop, metrics).await {
            return end;
        }
        for frame in batch.drain(..) {
            metrics.sent(frame.len());
            if let Some(spent) = spent {
                let _ = spent.try_send(frame);
            }
        }
    }
    Written::All
}

/// [`write_messages`]: `None` once written, else how the writer ends — it failed, or `stop`
/// came first, in the middle of a message.
async fn write_unless_stopped<W: AsyncWrite + Unpin>(w: &mut W, opcode: Opcode, payloads: &[Vec<u8>], stall: Stall<'_>, stop: Option<&StopSignal>, metrics: &Metrics) -> Option<Written> {
    tokio::select! {
        result = write_messages(w, opcode, payloads, stall) => (!written(result, metrics)).then_some(Written::Failed),
        () = StopSignal::stopped(stop) => Some(Written::Stopped { mid_message: true }),
    }
}

/// The next pong to send; never, without a pong channel (or once it is closed).
async fn recv_pong(pongs: Option<&flume::Receiver<Vec<u8>>>) -> Option<Vec<u8>> {
    match pongs {
        Some(pongs) => pongs.recv_async().await.ok(),
        None => std::future::pending().await,
    }
}

/// Whether a write went through (and logs, and counts a client that stopped reading, if not).
fn written(result: std::io::Result<()>, metrics: &Metrics) -> bool {
    match result {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
            warn!("the client stopped reading: dropping the connection");
            metrics.reclaimed(Reclaim::NotReading);
            false
        }
        Err(e) => {
            debug!(error = %e, "write failed");
            false
        }
    }
}

/// The status of a WebSocket close (RFC 6455 §7.4.1): why the server ends the connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloseStatus {
    pub code: u16,
    /// Shown to the client's code (at most 123 bytes go out).
    pub reason: String,
}

impl CloseStatus {
    /// 1000: the session is over, nothing went wrong at the WebSocket level.
    pub fn normal() -> CloseStatus {
        CloseStatus { code: 1000, reason: String::new() }
    }

    /// What the client did wrong at the WebSocket level: 1009 for a message over the size
    /// limit, 1007 for text that is not UTF-8, 1002 for any other broken rule of RFC 6455.
    pub fn violation(e: &WsError) -> CloseStatus {
        CloseStatus { code: e.close_code(), reason: e.to_string() }
    }
}

/// Sends a WebSocket close with `status`, ends our side of the TCP stream (the server closes
/// first, RFC 6455 §7.1.1), and reads until the client closes too — all within `linger`.
/// Reading matters: closing a socket with unread input resets the connection, and the client
/// could lose the last frames it has not read yet.
pub async fn close<S: AsyncRead + AsyncWrite + Unpin>(ws: WebSocket<S>, linger: Duration, status: &CloseStatus) {
    let WebSocket { mut reader, mut writer, acks: _ } = ws;
    let _ = timeout(linger, async {
        let _ = write_messages(&mut writer, Opcode::Close, &[ws::close_payload(status.code, &status.reason)], Stall::per_call(linger)).await;
        let _ = writer.shutdown().await;
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.half.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    })
    .await;
}

//! A session's WebSocket after the upgrade, and the pumps that write to it: the socket type,
//! its reader, the vectored frame writer, and the polite close — shared by the session
//! connections and the raw-throughput endpoint, and knowing neither.

use super::metrics::{Metrics, Reclaim};
use crate::ws::{self, Opcode, Role, WsError};
use std::io::IoSlice;
use std::time::Duration;
use tokio::io::{split, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
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
}

/// Bytes read from the socket at a time: client frames are small (credit) to a few hundred KiB
/// (an OT-extension chunk).
const READ_CHUNK: usize = 64 << 10;

impl<S: AsyncRead + AsyncWrite> WebSocket<S> {
    /// `rest`: bytes the client sent after its request head, already read.
    pub fn new(stream: S, rest: &[u8], max_message: usize) -> Self {
        let (half, writer) = split(stream);
        WebSocket { reader: WsReader { half, frames: ws::Reader::new(Role::Server, max_message, rest, READ_CHUNK) }, writer }
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

/// Writes whole server frames (unmasked) and flushes (TLS holds records until then): the
/// headers beside the payloads, one vectored write for all of them, looping over partial
/// writes. `stall`: how long the socket may take no byte at all (then `TimedOut`); a slow
/// reader that takes some bytes in time is not stalled, however long the whole write takes.
pub async fn write_messages<W: AsyncWrite + Unpin>(w: &mut W, opcode: Opcode, payloads: &[Vec<u8>], stall: Duration) -> std::io::Result<()> {
    let stalled = || std::io::Error::from(std::io::ErrorKind::TimedOut);
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
        let mut written = timeout(stall, w.write_vectored(&slices)).await.map_err(|_| stalled())??;
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
    timeout(stall, w.flush()).await.map_err(|_| stalled())?
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

/// The session thread's frames to the client, until the thread ends (true) or a write fails
/// (false); pongs for the client's pings between them, each before any frame that comes after
/// it (a ping read before the client's Close is answered before the server's Close, RFC 6455
/// §5.5.2). A write may wait at most `write_timeout` for the socket to take a byte: longer
/// means the client stopped reading.
pub async fn write_frames<W>(w: &mut W, outbox: Outbox<'_>, pongs: Option<&flume::Receiver<Vec<u8>>>, write_timeout: Duration, metrics: &Metrics) -> bool
where
    W: AsyncWrite + Unpin,
{
    let Outbox { frames: outbox, spent } = outbox;
    let mut batch = Vec::new();
    loop {
        let first = match pongs {
            // Pongs first: the reader queues a ping's pong before it hands the session thread
            // anything read after the ping, so the session's end cannot overtake it.
            Some(pongs) => tokio::select! {
                biased;
                Ok(ping) = pongs.recv_async() => {
                    if !written(write_messages(w, Opcode::Pong, &[ping], write_timeout).await, metrics) {
                        return false;
                    }
                    continue;
                }
                frame = outbox.recv_async() => frame.ok(),
            },
            None => outbox.recv_async().await.ok(),
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
        if !written(write_messages(w, Opcode::Binary, &batch, write_timeout).await, metrics) {
            return false;
        }
        for frame in batch.drain(..) {
            metrics.sent(frame.len());
            if let Some(spent) = spent {
                let _ = spent.try_send(frame);
            }
        }
    }
    true
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
    let WebSocket { mut reader, mut writer } = ws;
    let _ = timeout(linger, async {
        let _ = write_messages(&mut writer, Opcode::Close, &[ws::close_payload(status.code, &status.reason)], linger).await;
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

//! A session's WebSocket after the upgrade, and the pumps that write to it: the socket type,
//! its reader, the vectored frame writer, and the polite close — shared by the session
//! connections and the raw-throughput endpoint, and knowing neither.

use super::metrics::Metrics;
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
/// writes.
pub async fn write_messages<W: AsyncWrite + Unpin>(w: &mut W, opcode: Opcode, payloads: &[Vec<u8>]) -> std::io::Result<()> {
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
        let mut written = w.write_vectored(&slices).await?;
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
    w.flush().await
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
/// (false); pongs for the client's pings between them. Each write may take at most
/// `write_timeout`: longer means the client stopped reading.
pub async fn write_frames<W>(w: &mut W, outbox: Outbox<'_>, pongs: Option<&flume::Receiver<Vec<u8>>>, write_timeout: Duration, metrics: &Metrics) -> bool
where
    W: AsyncWrite + Unpin,
{
    let Outbox { frames: outbox, spent } = outbox;
    let mut batch = Vec::new();
    loop {
        let first = match pongs {
            Some(pongs) => tokio::select! {
                frame = outbox.recv_async() => frame.ok(),
                Ok(ping) = pongs.recv_async() => {
                    if !within(write_timeout, write_messages(w, Opcode::Pong, &[ping])).await {
                        return false;
                    }
                    continue;
                }
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
        if !within(write_timeout, write_messages(w, Opcode::Binary, &batch)).await {
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

/// Whether a write completed in time (and logs why not).
async fn within(limit: Duration, write: impl std::future::Future<Output = std::io::Result<()>>) -> bool {
    match timeout(limit, write).await {
        Ok(Ok(())) => true,
        Ok(Err(e)) => {
            debug!(error = %e, "write failed");
            false
        }
        Err(_) => {
            warn!("the client stopped reading: dropping the connection");
            false
        }
    }
}

/// Sends a WebSocket close, ends our side of the TCP stream (the server closes first, RFC 6455
/// §7.1.1), and reads until the client closes too — all within `linger`. Reading matters:
/// closing a socket with unread input resets the connection, and the client could lose the last
/// frames it has not read yet.
pub async fn close<S: AsyncRead + AsyncWrite + Unpin>(ws: WebSocket<S>, linger: Duration) {
    let WebSocket { mut reader, mut writer } = ws;
    let _ = timeout(linger, async {
        let _ = write_messages(&mut writer, Opcode::Close, &[ws::close_payload(1000, "")]).await;
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

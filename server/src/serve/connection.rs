//! One TCP (or TLS) connection: the request head, then either a plain HTTP answer or a
//! WebSocket that carries one session.
//!
//! A session's WebSocket is pumped by two futures of one task, on the two halves of the stream:
//! the reader hands client frames to the session thread (and stops reading the socket while the
//! thread's inbox is full), the writer sends the thread's frames — header and payload in one
//! vectored write, several frames at once when they are queued, never copied ([`crate::ws`]).
//! They never wait for each other, so a client that floods frames cannot deadlock the writer,
//! and a client that stops reading only stalls its own writer — until the write timeout drops
//! it.

use super::http::{self, HttpError, Route};
use super::metrics::Metrics;
use super::raw;
use super::session::{self, Inbound, SessionChannels, SessionSettings};
use super::{Phase, Server};
use crate::ws::{self, Opcode, Role, WsError};
use garblet_core::protocol::{ErrorCode, Frame, Services};
use std::io::IoSlice;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{split, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::timeout;
use tokio_rustls::TlsAcceptor;
use tracing::{debug, error, info, info_span, warn, Instrument};

/// How long an HTTP reply, a refusal, or the close of a connection whose client stopped
/// reading may take.
pub const LINGER: Duration = Duration::from_secs(1);

/// How long a closed connection waits for its session thread to finish counting how it ended.
const SESSION_END_GRACE: Duration = Duration::from_secs(5);

/// Serves one accepted TCP connection, through TLS if configured.
pub async fn accept(tcp: TcpStream, peer: SocketAddr, tls: Option<TlsAcceptor>, server: Arc<Server>) {
    // The handshake timeout runs from the TCP accept to the client's hello.
    let deadline = Instant::now() + server.limits.handshake_timeout();
    match tls {
        None => serve(tcp, peer, deadline, server).await,
        Some(acceptor) => match tokio::time::timeout_at(deadline.into(), acceptor.accept(tcp)).await {
            Ok(Ok(stream)) => serve(stream, peer, deadline, server).await,
            Ok(Err(e)) => debug!(%peer, error = %e, "TLS handshake failed"),
            Err(_) => debug!(%peer, "TLS handshake timed out"),
        },
    }
}

async fn serve<S>(mut stream: S, peer: SocketAddr, deadline: Instant, server: Arc<Server>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (head, rest) = match tokio::time::timeout_at(deadline.into(), http::read_head(&mut stream)).await {
        Ok(Ok(request)) => request,
        Ok(Err(HttpError::Closed | HttpError::Io(_))) => return,
        Ok(Err(e)) => return reply(stream, http::error_response(400, "Bad Request", &e.to_string())).await,
        Err(_) => return reply(stream, http::error_response(408, "Request Timeout", "no complete request in time")).await,
    };
    let origin = head.header("origin").map(str::to_string);
    let origin_allowed = server.origins.allows(origin.as_deref());
    // Browsers may read the JSON endpoints from allowed origins only.
    let cors = origin.as_deref().filter(|_| origin_allowed);
    let route = http::route(&head, server.limits.max_frame_bytes as usize, server.raw_throughput_endpoint);
    let upgrade = matches!(route, Route::Session | Route::RawThroughput { .. });
    if upgrade && !origin_allowed {
        info!(%peer, origin = origin.as_deref().unwrap_or("(none)"), "WebSocket refused: origin not allowed");
        return reply(stream, http::error_response(403, "Forbidden", "this origin may not open sessions here")).await;
    }
    match route {
        Route::Health => {
            let body = serde_json::json!({ "status": "ok", "version": env!("CARGO_PKG_VERSION"), "sessions_active": server.metrics.sessions_active() });
            reply(stream, http::json_response(&body.to_string(), cors)).await
        }
        Route::Metrics => reply(stream, http::json_response(&server.metrics.to_json().to_string(), cors)).await,
        Route::Services => reply(stream, http::json_response(server.services.catalog_json(), cors)).await,
        Route::Refuse { status, reason, message } => reply(stream, http::error_response(status, reason, &message)).await,
        Route::Session | Route::RawThroughput { .. } => {
            let accept = match http::websocket_accept(&head) {
                Ok(accept) => accept,
                Err(message) => return reply(stream, http::error_response(400, "Bad Request", message)).await,
            };
            if stream.write_all(&http::switching_protocols(&accept)).await.is_err() {
                return;
            }
            let ws = WebSocket::new(stream, &rest, server.limits.max_frame_bytes as usize);
            match route {
                Route::RawThroughput { bytes, frame } => raw::serve(ws, bytes, frame, &server).await,
                _ => session(ws, peer, deadline, &server).await,
            }
        }
    }
}

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

/// Writes a whole HTTP response and closes.
async fn reply<S: AsyncWrite + Unpin>(mut stream: S, response: Vec<u8>) {
    let _ = timeout(LINGER, async {
        stream.write_all(&response).await?;
        stream.shutdown().await
    })
    .await;
}

async fn session<S>(ws: WebSocket<S>, peer: SocketAddr, deadline: Instant, server: &Server)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Ok(permit) = server.sessions.clone().try_acquire_owned() else {
        server.metrics.session_refused();
        info!(%peer, "session refused: the server is full");
        let message = format!("the server is running its maximum of {} sessions; try again later", server.limits.max_sessions);
        return refuse(ws, ErrorCode::Busy, &message).await;
    };
    // Counted until the connection is closed, not just until the session thread ends: the
    // client may still be reading the last frames, and a graceful shutdown waits for that.
    let _active = server.metrics.session_started();
    let id = server.next_session_id();
    let span = info_span!("session", id, %peer);
    let settings = SessionSettings { garbler: server.garbler_config(), hello_deadline: deadline, idle_timeout: server.limits.idle_timeout() };
    span.in_scope(|| info!("session started"));
    match session::spawn(id, settings, server.services.clone(), server.metrics.clone(), permit, span.clone()) {
        Ok(channels) => {
            let finished = channels.finished.clone();
            pump(ws, channels, server.shutdown.clone(), &server.metrics, server.limits.idle_timeout(), server.limits.max_frame_bytes as usize).instrument(span).await;
            // The session stays active in /metrics until its thread has counted how it ended
            // (completed, failed, cancelled), so that a reader who sees no active session sees
            // every outcome. The thread stops soon after the pump drops its channels.
            let _ = timeout(SESSION_END_GRACE, finished.recv_async()).await;
        }
        Err(e) => {
            span.in_scope(|| error!(error = %e, "cannot start a session thread"));
            refuse(ws, ErrorCode::Internal, "the server cannot start a session now").await
        }
    }
}

/// Moves frames between the WebSocket and the session thread until the session ends.
async fn pump<S>(ws: WebSocket<S>, channels: SessionChannels, shutdown: watch::Receiver<Phase>, metrics: &Metrics, idle_timeout: Duration, max_frame: usize)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let WebSocket { mut reader, mut writer } = ws;
    // Pongs for the client's pings, from the reader to the writer.
    let (pongs_tx, pongs) = flume::bounded::<Vec<u8>>(4);
    let client_reads = {
        let reading = read_frames(&mut reader, &channels.inbox, &pongs_tx, shutdown, metrics, max_frame);
        let writing = write_frames(&mut writer, Outbox { frames: &channels.outbox, spent: None }, Some(&pongs), idle_timeout, metrics);
        tokio::pin!(reading, writing);
        tokio::select! {
            // The session ended and everything it said is sent (or the client stopped reading).
            all_sent = &mut writing => {
                if !all_sent {
                    // The client may have spoken before it went: a cancel's Error frame comes
                    // right before its close. Let the reader hand over what already arrived.
                    let _ = timeout(LINGER, &mut reading).await;
                }
                all_sent
            }
            // The client left or broke the rules: the session thread knows; let it send its
            // last frames (an Error frame, say), but not for ever.
            () = &mut reading => timeout(idle_timeout, &mut writing).await.unwrap_or(false),
        }
    };
    // Dropping our ends tells a session thread that is still running to stop.
    drop(channels);
    // A client that reads may still be evaluating the last window of data: give it the idle
    // timeout to finish and close; one that stopped reading gets no more time.
    close(WebSocket { reader, writer }, if client_reads { idle_timeout } else { LINGER }).await;
}

/// Client frames to the session thread; also forwards the shutdown phases, and the client's
/// pings to the writer.
async fn read_frames<S: AsyncRead>(reader: &mut WsReader<S>, inbox: &flume::Sender<Inbound>, pongs: &flume::Sender<Vec<u8>>, mut shutdown: watch::Receiver<Phase>, metrics: &Metrics, max_frame: usize) {
    // A session that starts while the server is already draining must hear of it too.
    shutdown.mark_changed();
    let mut shutdown_open = true;
    loop {
        let next = tokio::select! {
            next = reader.next_message() => next,
            changed = shutdown.changed(), if shutdown_open => {
                let message = match changed.map(|()| *shutdown.borrow_and_update()) {
                    Ok(Phase::Running) => continue,
                    Ok(Phase::Draining) => Inbound::Drain,
                    Ok(Phase::Aborting) => Inbound::Abort,
                    Err(_) => { shutdown_open = false; continue }
                };
                if inbox.send_async(message).await.is_err() {
                    return;
                }
                continue;
            }
        };
        let (inbound, last) = match next {
            Ok(ClientMessage::Binary(bytes)) => {
                metrics.received(bytes.len());
                (Inbound::Frame(bytes), false)
            }
            Ok(ClientMessage::Ping(data)) => {
                let _ = pongs.try_send(data);
                continue;
            }
            Ok(ClientMessage::Pong) => continue,
            Ok(ClientMessage::Text) => (Inbound::Violation { code: ErrorCode::Protocol, message: "a text message: Garblet frames are binary WebSocket messages".into() }, true),
            Err(ReadError::Ws(WsError::TooLong { len, .. })) => (Inbound::Violation { code: ErrorCode::Limit, message: format!("a message of {len} bytes: this server takes frames of at most {max_frame} bytes") }, true),
            Ok(ClientMessage::Closed) => (Inbound::Closed, true),
            Err(e) => {
                debug!(error = %e, "connection error");
                (Inbound::Closed, true)
            }
        };
        if inbox.send_async(inbound).await.is_err() || last {
            return;
        }
    }
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

/// Refuses a session with an `Error` frame.
async fn refuse<S: AsyncRead + AsyncWrite + Unpin>(mut ws: WebSocket<S>, code: ErrorCode, message: &str) {
    let frame = Frame::Error { code: code as u16, message: message.into() }.encode();
    let _ = timeout(LINGER, write_messages(&mut ws.writer, Opcode::Binary, &[frame])).await;
    close(ws, LINGER).await;
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

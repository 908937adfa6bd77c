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

use super::addresses::{Busy, ConnectionGuard};
use super::http::{self, HttpError, Route};
use super::metrics::{Metrics, Refusal, PROMETHEUS_CONTENT_TYPE};
use super::proxy::Peer;
use super::raw;
use super::server::{Phase, Server};
use super::session::{self, retry_after_ms, Inbound, SessionChannels, SessionPlaces, SessionSettings};
use super::slots::Activity;
use super::socket::{close, write_frames, write_messages, AckProbe, ClientMessage, CloseStatus, Outbox, ReadError, Stall, WebSocket, Written, WsReader, LINGER};
use super::addresses::Addresses;
use crate::ws::{Opcode, WsError};
use garblet_core::protocol::frame::DEFAULT_WINDOW;
use garblet_core::protocol::{ErrorCode, Frame, Services};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::timeout;
use tokio_rustls::TlsAcceptor;
use tracing::{debug, error, info, info_span, Instrument};

/// How long a closed connection waits for its session thread to finish counting how it ended.
const SESSION_END_GRACE: Duration = Duration::from_secs(5);

/// When a client refused because the server runs its maximum of sessions (or of window memory)
/// may try again: sessions end at no time the server knows, and most last seconds.
const RETRY_WHEN_FULL: Duration = Duration::from_secs(5);

/// The pump's timeouts: how long a session that ended may still take to send its last frames
/// (`idle`), and how long one write may wait without the client taking a byte (`write`).
struct Timeouts {
    idle: Duration,
    write: Duration,
}

/// Serves one accepted TCP connection, through TLS if configured. `admitted`: counted against
/// its address, or over the address's maximum — then it is refused once its request says how
/// (HTTP 503, or a Busy frame for a WebSocket), with little time to say it; `None` for a
/// trusted proxy's connection, counted against the client its request names.
pub async fn accept(tcp: TcpStream, peer: SocketAddr, admitted: Option<Result<ConnectionGuard, Busy>>, tls: Option<TlsAcceptor>, server: Arc<Server>) {
    // The handshake timeout runs from the TCP accept to the client's hello.
    let deadline = Instant::now() + if matches!(admitted, Some(Err(_))) { LINGER } else { server.limits.handshake_timeout() };
    let acks = AckProbe::of(&tcp);
    match tls {
        None => serve(tcp, acks, peer, admitted, deadline, server).await,
        Some(acceptor) => match tokio::time::timeout_at(deadline.into(), acceptor.accept(tcp)).await {
            Ok(Ok(stream)) => serve(stream, acks, peer, admitted, deadline, server).await,
            Ok(Err(e)) => debug!(%peer, error = %e, "TLS handshake failed"),
            Err(_) => debug!(%peer, "TLS handshake timed out"),
        },
    }
}

async fn serve<S>(mut stream: S, acks: Option<AckProbe>, tcp_peer: SocketAddr, admitted: Option<Result<ConnectionGuard, Busy>>, deadline: Instant, server: Arc<Server>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (head, rest) = match tokio::time::timeout_at(deadline.into(), http::read_head(&mut stream)).await {
        Ok(Ok(request)) => request,
        Ok(Err(HttpError::Closed | HttpError::Io(_))) => return,
        Ok(Err(e)) => return reply(stream, http::error_response(400, "Bad Request", &e.to_string())).await,
        Err(_) => return reply(stream, http::error_response(408, "Request Timeout", "no complete request in time")).await,
    };
    let peer = server.proxies.peer(tcp_peer, head.headers(server.proxies.header().name()));
    let admitted = admitted.unwrap_or_else(|| server.addresses.connect(peer.client));
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
    let _connection = match admitted {
        Ok(guard) => guard,
        Err(busy) => {
            info!(%peer, outcome = "refused", reason = %busy.message, "connection refused");
            // A browser sees no HTTP status of a refused upgrade: it hears the refusal as a
            // Busy frame.
            if upgrade {
                if let Ok(accept) = http::websocket_accept(&head) {
                    if stream.write_all(&http::switching_protocols(&accept)).await.is_ok() {
                        let ws = WebSocket::new(stream, acks, &rest, server.limits.max_frame_bytes as usize);
                        return refuse(ws, ErrorCode::Busy, &busy.message, Some(busy.retry_after)).await;
                    }
                    return;
                }
            }
            return reply(stream, http::busy_response(&busy.message, busy.retry_after)).await;
        }
    };
    match route {
        Route::Health => {
            let body = serde_json::json!({ "status": "ok", "version": env!("CARGO_PKG_VERSION"), "sessions_active": server.metrics.sessions_active() });
            reply(stream, http::json_response(&body.to_string(), cors)).await
        }
        Route::Metrics => reply(stream, http::response(200, "OK", PROMETHEUS_CONTENT_TYPE, &server.metrics.to_prometheus(), cors)).await,
        Route::MetricsJson => reply(stream, http::json_response(&server.metrics.to_json().to_string(), cors)).await,
        Route::Services => reply(stream, http::json_response(server.services.catalog_json(), cors)).await,
        Route::Refuse { status, reason, message } => reply(stream, http::error_response(status, reason, &message)).await,
        Route::Session | Route::RawThroughput { .. } => {
            let accept = match http::websocket_accept(&head) {
                Ok(accept) => accept,
                Err(message) => return reply(stream, http::upgrade_refusal(message)).await,
            };
            if stream.write_all(&http::switching_protocols(&accept)).await.is_err() {
                return;
            }
            let ws = WebSocket::new(stream, acks, &rest, server.limits.max_frame_bytes as usize);
            match route {
                Route::RawThroughput { bytes, frame } => raw::serve(ws, bytes, frame, &server).await,
                _ => session(ws, peer, deadline, &server).await,
            }
        }
    }
}

/// Writes a whole HTTP response and closes.
async fn reply<S: AsyncWrite + Unpin>(mut stream: S, response: Vec<u8>) {
    let _ = timeout(LINGER, async {
        stream.write_all(&response).await?;
        stream.shutdown().await
    })
    .await;
}

async fn session<S>(ws: WebSocket<S>, peer: Peer, deadline: Instant, server: &Server)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    // The address's own limits first: a refusal there is the address's doing, not the server's.
    let address = match server.addresses.start_session(peer.client) {
        Ok(guard) => guard,
        Err(busy) => {
            info!(%peer, outcome = "refused", reason = %busy.message, "session refused");
            return refuse(ws, ErrorCode::Busy, &busy.message, Some(busy.retry_after)).await;
        }
    };
    // A free slot, or, when none is, one reclaimed from a session with a weaker claim.
    let Some(slot) = server.slots.admit(Addresses::key(peer.client)).await else {
        server.metrics.session_refused();
        info!(%peer, outcome = "refused", "session refused: the server is full");
        let message = format!("the server is running its maximum of {} sessions; try again later", server.limits.max_sessions);
        return refuse(ws, ErrorCode::Busy, &message, Some(RETRY_WHEN_FULL)).await;
    };
    // The protocol's default window to start with; a session whose client asks for more (in its
    // hello, or later when its stream waits on the network) takes more as it goes.
    let Some(window) = server.windows.reserve(server.limits.max_window_bytes.min(DEFAULT_WINDOW)) else {
        server.metrics.refused(Refusal::WindowMemory);
        info!(%peer, outcome = "refused", "session refused: the sessions' windows take all of max_window_memory_bytes");
        let message = "the server holds its maximum of unacknowledged data for other sessions; try again later";
        return refuse(ws, ErrorCode::Busy, message, Some(RETRY_WHEN_FULL)).await;
    };
    // Counted until the connection is closed, not just until the session thread ends: the
    // client may still be reading the last frames, and a graceful shutdown waits for that.
    let _active = server.metrics.session_started();
    let id = server.next_session_id();
    let span = info_span!("session", id, %peer);
    let garbler = server.garbler_config();
    let settings = SessionSettings {
        garbler,
        computation_threads: server.computation_threads,
        helpers: server.helpers.clone(),
        garbling: server.garbling,
        hello_deadline: deadline,
        idle_timeout: server.limits.idle_timeout(),
        min_credit_bytes_per_sec: server.limits.min_credit_bytes_per_sec as f64,
        progress_grace: server.limits.progress_grace(),
        request_and_gates: server.request_and_gates.clone(),
        hook: server.session_hook.clone(),
        prepared_ot: server.prepared_ots.try_recv().ok(),
    };
    span.in_scope(|| info!(window = window.bytes, "session started"));
    let activity = slot.activity.clone();
    match session::spawn(id, settings, server.services.clone(), server.metrics.clone(), SessionPlaces { slot, address, window, memory: server.computation_memory.grant() }, span.clone()) {
        Ok(channels) => {
            let finished = channels.finished.clone();
            let timeouts = Timeouts { idle: server.limits.idle_timeout(), write: server.limits.write_timeout() };
            pump(ws, channels, &activity, server.shutdown.clone(), &server.metrics, timeouts, server.limits.max_frame_bytes as usize).instrument(span).await;
            // The session stays active in /metrics until its thread has counted how it ended
            // (completed, failed, cancelled), so that a reader who sees no active session sees
            // every outcome. The thread stops soon after the pump drops its channels.
            let _ = timeout(SESSION_END_GRACE, finished.recv_async()).await;
        }
        Err(e) => {
            span.in_scope(|| error!(error = %e, "cannot start a session thread"));
            refuse(ws, ErrorCode::Internal, "the server cannot start a session now", None).await
        }
    }
}

/// What a client whose session's slot went to another client hears.
const RECLAIMED: &str = "every session slot of this server was taken, and a new client had the better claim to this session's: its address runs more sessions than the newcomer's, or it ran no computation for a while; try again later";

/// Moves frames between the WebSocket and the session thread until the session ends, or until
/// its slot is reclaimed for another client (`activity`'s stop signal).
async fn pump<S>(ws: WebSocket<S>, channels: SessionChannels, activity: &Activity, shutdown: watch::Receiver<Phase>, metrics: &Metrics, timeouts: Timeouts, max_frame: usize)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let WebSocket { mut reader, mut writer, acks } = ws;
    // Pongs for the client's pings, from the reader to the writer.
    let (pongs_tx, pongs) = flume::bounded::<Vec<u8>>(4);
    let stall = Stall { limit: timeouts.write, acks: acks.as_ref() };
    let (written, status) = {
        let reading = read_frames(&mut reader, &channels.inbox, &pongs_tx, shutdown, metrics, max_frame);
        let writing = write_frames(&mut writer, Outbox { frames: &channels.outbox, spent: None }, Some(&pongs), stall, Some(&activity.stop), metrics);
        tokio::pin!(reading, writing);
        tokio::select! {
            // The session ended and everything it said is sent (or the client stopped reading,
            // or the slot was reclaimed).
            written = &mut writing => {
                let mut status = CloseStatus::normal();
                if written == Written::Failed {
                    // The client may have spoken before it went: a cancel's Error frame comes
                    // right before its close. Let the reader hand over what already arrived.
                    if let Ok(Some(violation)) = timeout(LINGER, &mut reading).await {
                        status = violation;
                    }
                }
                (written, status)
            }
            // The client left or broke the rules: the session thread knows; let it send its
            // last frames (an Error frame, say), but not for ever.
            violation = &mut reading => (timeout(timeouts.idle, &mut writing).await.unwrap_or(Written::Failed), violation.unwrap_or_else(CloseStatus::normal)),
        }
    };
    // Dropping our ends tells a session thread that is still running to stop (a reclaimed one
    // at once, wherever it waits: its slot goes to the client that reclaimed it).
    drop(channels);
    let ws = WebSocket { reader, writer, acks };
    match written {
        // A client that reads may still be evaluating the last window of data: give it the
        // idle timeout to finish and close; one that stopped reading gets no more time.
        Written::All => close(ws, timeouts.idle, &status).await,
        Written::Failed => close(ws, LINGER, &status).await,
        Written::Stopped { mid_message: false } => refuse(ws, ErrorCode::Busy, RECLAIMED, Some(RETRY_WHEN_FULL)).await,
        // Part of a message is out: nothing more can be said on this connection; dropping it
        // closes it.
        Written::Stopped { mid_message: true } => {}
    }
}

/// Client frames to the session thread; also forwards the shutdown phases, and the client's
/// pings to the writer. Ends with the close status of a client that broke the WebSocket rules.
async fn read_frames<S: AsyncRead>(reader: &mut WsReader<S>, inbox: &flume::Sender<Inbound>, pongs: &flume::Sender<Vec<u8>>, mut shutdown: watch::Receiver<Phase>, metrics: &Metrics, max_frame: usize) -> Option<CloseStatus> {
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
                    return None;
                }
                continue;
            }
        };
        let (inbound, close) = match next {
            Ok(ClientMessage::Binary(bytes)) => {
                metrics.received(bytes.len());
                (Inbound::Frame(bytes), None)
            }
            Ok(ClientMessage::Ping(data)) => {
                let _ = pongs.try_send(data);
                continue;
            }
            Ok(ClientMessage::Pong) => continue,
            // Well-formed WebSocket, but not this protocol's: 1003, "cannot accept this type of
            // data" (RFC 6455 §7.4.1).
            Ok(ClientMessage::Text) => {
                let message = "a text message: Garblet frames are binary WebSocket messages";
                (Inbound::Violation { code: ErrorCode::Protocol, message: message.into() }, Some(CloseStatus { code: 1003, reason: message.into() }))
            }
            Err(ReadError::Ws(e)) => {
                let message = match e {
                    WsError::TooLong { len, .. } => format!("a message of {len} bytes: this server takes frames of at most {max_frame} bytes"),
                    WsError::Protocol(_) | WsError::InvalidUtf8(_) => e.to_string(),
                };
                let code = if matches!(e, WsError::TooLong { .. }) { ErrorCode::Limit } else { ErrorCode::Protocol };
                (Inbound::Violation { code, message }, Some(CloseStatus::violation(&e)))
            }
            Ok(ClientMessage::Closed) => (Inbound::Closed, Some(CloseStatus::normal())),
            Err(ReadError::Io(e)) => {
                debug!(error = %e, "connection error");
                (Inbound::Closed, Some(CloseStatus::normal()))
            }
        };
        if inbox.send_async(inbound).await.is_err() {
            return None;
        }
        if let Some(status) = close {
            return Some(status);
        }
    }
}

/// Refuses a session with an `Error` frame; `retry_after` for a refusal that passes.
async fn refuse<S: AsyncRead + AsyncWrite + Unpin>(mut ws: WebSocket<S>, code: ErrorCode, message: &str, retry_after: Option<Duration>) {
    let frame = Frame::Error { code: code as u16, message: message.into(), retry_after_ms: retry_after.map(retry_after_ms) }.encode();
    let _ = timeout(LINGER, write_messages(&mut ws.writer, Opcode::Binary, &[frame], Stall::per_call(LINGER))).await;
    close(ws, LINGER, &CloseStatus::normal()).await;
}

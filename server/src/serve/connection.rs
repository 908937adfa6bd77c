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
use super::server::{Phase, Server};
use super::session::{self, Inbound, SessionChannels, SessionSettings};
use super::socket::{close, write_frames, write_messages, ClientMessage, Outbox, ReadError, WebSocket, WsReader, LINGER};
use crate::ws::{Opcode, WsError};
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

/// Refuses a session with an `Error` frame.
async fn refuse<S: AsyncRead + AsyncWrite + Unpin>(mut ws: WebSocket<S>, code: ErrorCode, message: &str) {
    let frame = Frame::Error { code: code as u16, message: message.into() }.encode();
    let _ = timeout(LINGER, write_messages(&mut ws.writer, Opcode::Binary, &[frame])).await;
    close(ws, LINGER).await;
}

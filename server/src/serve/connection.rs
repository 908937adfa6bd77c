//! One TCP (or TLS) connection: the request head, then either a plain HTTP answer or a
//! WebSocket that carries one session.
//!
//! A session's WebSocket is pumped by two futures of one task: the reader hands client frames to
//! the session thread (and stops reading the socket while the thread's inbox is full), the
//! writer sends the thread's frames. They never wait for each other, so a client that floods
//! frames cannot deadlock the writer, and a client that stops reading only stalls its own
//! writer — until the write timeout drops it.

use super::http::{self, HttpError, Route};
use super::metrics::Metrics;
use super::raw;
use super::session::{self, Inbound, SessionChannels, SessionSettings};
use super::{Phase, Server};
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use garblet_core::protocol::{ErrorCode, Frame, Services};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::timeout;
use tokio_rustls::TlsAcceptor;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;
use tracing::{debug, error, info, info_span, warn, Instrument};

/// How long an HTTP reply, a refusal, or the close of a connection whose client stopped
/// reading may take.
pub const LINGER: Duration = Duration::from_secs(1);

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
            let ws = WebSocketStream::from_partially_read(stream, rest, Role::Server, Some(websocket_config(server.limits.max_frame_bytes as usize))).await;
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

fn websocket_config(max_frame: usize) -> WebSocketConfig {
    WebSocketConfig::default().max_message_size(Some(max_frame)).max_frame_size(Some(max_frame))
}

async fn session<S>(ws: WebSocketStream<S>, peer: SocketAddr, deadline: Instant, server: &Server)
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
        Ok(channels) => pump(ws, channels, server.shutdown.clone(), &server.metrics, server.limits.idle_timeout(), server.limits.max_frame_bytes as usize).instrument(span).await,
        Err(e) => {
            span.in_scope(|| error!(error = %e, "cannot start a session thread"));
            refuse(ws, ErrorCode::Internal, "the server cannot start a session now").await
        }
    }
}

/// Moves frames between the WebSocket and the session thread until the session ends.
async fn pump<S>(ws: WebSocketStream<S>, channels: SessionChannels, shutdown: watch::Receiver<Phase>, metrics: &Metrics, idle_timeout: Duration, max_frame: usize)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (mut sink, mut stream) = ws.split();
    let client_reads = {
        let reader = read_frames(&mut stream, &channels.inbox, shutdown, metrics, max_frame);
        let writer = write_frames(&mut sink, &channels.outbox, idle_timeout, metrics);
        tokio::pin!(reader, writer);
        tokio::select! {
            // The session ended and everything it said is sent (or the client stopped reading).
            all_sent = &mut writer => all_sent,
            // The client left or broke the rules: the session thread knows; let it send its
            // last frames (an Error frame, say), but not for ever.
            () = &mut reader => timeout(idle_timeout, &mut writer).await.unwrap_or(false),
        }
    };
    // Dropping our ends tells a session thread that is still running to stop.
    drop(channels);
    if let Ok(ws) = stream.reunite(sink) {
        // A client that reads may still be evaluating the last window of data: give it the
        // idle timeout to finish and close; one that stopped reading gets no more time.
        close(ws, if client_reads { idle_timeout } else { LINGER }).await;
    }
}

/// Client frames to the session thread; also forwards the shutdown phases.
async fn read_frames<St>(stream: &mut St, inbox: &flume::Sender<Inbound>, mut shutdown: watch::Receiver<Phase>, metrics: &Metrics, max_frame: usize)
where
    St: Stream<Item = Result<Message, WsError>> + Unpin,
{
    // A session that starts while the server is already draining must hear of it too.
    shutdown.mark_changed();
    let mut shutdown_open = true;
    loop {
        let next = tokio::select! {
            next = stream.next() => next,
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
            Some(Ok(Message::Binary(bytes))) => {
                metrics.received(bytes.len());
                (Inbound::Frame(Vec::from(bytes)), false)
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
            Some(Ok(Message::Text(_))) => (Inbound::Violation { code: ErrorCode::Protocol, message: "a text message: Garblet frames are binary WebSocket messages".into() }, true),
            Some(Err(WsError::Capacity(e))) => (Inbound::Violation { code: ErrorCode::Limit, message: format!("{e}: this server takes frames of at most {max_frame} bytes") }, true),
            Some(Ok(Message::Close(_))) | None => (Inbound::Closed, true),
            Some(Err(e)) => {
                debug!(error = %e, "connection error");
                (Inbound::Closed, true)
            }
        };
        if inbox.send_async(inbound).await.is_err() || last {
            return;
        }
    }
}

/// The session thread's frames to the client, until the thread ends (true) or a write fails
/// (false). Each write may take at most `write_timeout`: longer means the client stopped reading.
pub async fn write_frames<Si>(sink: &mut Si, outbox: &flume::Receiver<Vec<u8>>, write_timeout: Duration, metrics: &Metrics) -> bool
where
    Si: Sink<Message, Error = WsError> + Unpin,
{
    while let Ok(mut frame) = outbox.recv_async().await {
        // Queue what is ready, then flush once: fewer, larger socket writes.
        loop {
            let len = frame.len();
            if !within(write_timeout, sink.feed(Message::Binary(frame.into()))).await {
                return false;
            }
            metrics.sent(len);
            match outbox.try_recv() {
                Ok(next) => frame = next,
                Err(_) => break,
            }
        }
        if !within(write_timeout, sink.flush()).await {
            return false;
        }
    }
    true
}

/// Whether a write completed in time (and logs why not).
async fn within(limit: Duration, write: impl std::future::Future<Output = Result<(), WsError>>) -> bool {
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
async fn refuse<S: AsyncRead + AsyncWrite + Unpin>(mut ws: WebSocketStream<S>, code: ErrorCode, message: &str) {
    let frame = Frame::Error { code: code as u16, message: message.into() }.encode();
    let _ = timeout(LINGER, ws.send(Message::Binary(frame.into()))).await;
    close(ws, LINGER).await;
}

/// Sends a WebSocket close, ends our side of the TCP stream (the server closes first, RFC 6455
/// §7.1.1), and reads until the client closes too — all within `linger`. Reading matters:
/// closing a socket with unread input resets the connection, and the client could lose the last
/// frames it has not read yet.
pub async fn close<S: AsyncRead + AsyncWrite + Unpin>(mut ws: WebSocketStream<S>, linger: Duration) {
    let _ = timeout(linger, async {
        let _ = ws.close(None).await;
        let raw = ws.get_mut();
        let _ = raw.shutdown().await;
        let mut buf = [0u8; 4096];
        while let Ok(n) = raw.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    })
    .await;
}

//! `GET /bench/raw?bytes=N&frame=F` (WebSocket; only with `raw_throughput_endpoint = true`):
//! sends N bytes in messages of F bytes as fast as the connection takes them, through the same
//! path as a session's frames — a thread handing over each frame, the bounded channel, the
//! writer — so that `garblet bench session` can set the session's speed beside the transport's.
//! The frames are made once and reused: a session writes each byte once, as it garbles, and
//! that belongs to garbling; here nothing is written, so the CPU a transfer takes is the
//! transport's alone.

use super::server::Server;
use super::socket::{close, write_frames, CloseStatus, Outbox, Stall, WebSocket, LINGER};
use tokio::io::{AsyncRead, AsyncWrite};
use tracing::{info, warn};

const OUTBOX_FRAMES: usize = 8;

pub async fn serve<S>(mut ws: WebSocket<S>, bytes: u64, frame: usize, server: &Server)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    // It occupies a session's place: the benchmark endpoint must not bypass max_sessions.
    let Some(permit) = server.slots.try_acquire() else {
        return close(ws, LINGER, &CloseStatus::normal()).await;
    };
    let (tx, rx) = flume::bounded::<Vec<u8>>(OUTBOX_FRAMES);
    // Room for every frame in flight (queued, being written, written but not yet taken back).
    let (spent_tx, spent) = flume::bounded::<Vec<u8>>(2 * OUTBOX_FRAMES + 2);
    let producer = std::thread::Builder::new().name("raw-throughput".into()).spawn(move || {
        let _permit = permit;
        let mut left = bytes;
        while left > 0 {
            let n = left.min(frame as u64) as usize;
            let mut next = spent.try_recv().unwrap_or_else(|_| vec![0x5a_u8; frame]);
            next.truncate(n);
            if tx.send(next).is_err() {
                return;
            }
            left -= n as u64;
        }
    });
    if let Err(e) = producer {
        warn!(error = %e, "cannot start the raw-throughput thread");
        return close(ws, LINGER, &CloseStatus::normal()).await;
    }
    info!(bytes, frame, "raw throughput transfer");
    let stall = Stall { limit: server.limits.write_timeout(), acks: ws.acks.as_ref() };
    write_frames(&mut ws.writer, Outbox { frames: &rx, spent: Some(&spent_tx) }, None, stall, None, &server.metrics).await;
    drop(rx);
    close(ws, LINGER, &CloseStatus::normal()).await;
}

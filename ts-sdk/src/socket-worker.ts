/// <reference lib="webworker" />
/**
 * The socket worker: owns the WebSocket and does nothing else, so the socket is always read.
 *
 * Why a thread of its own: Chromium reads a WebSocket's data from the network process on the
 * thread that owns the socket, between that thread's tasks. In the engine's worker, every
 * millisecond spent evaluating or on the base OTs would be a millisecond the socket is not
 * read — transfer and evaluation would take turns instead of overlapping. Here, frames are
 * taken as they come and handed to the engine's worker over a MessagePort, transferred (not
 * copied); what the engine sends goes out the same way.
 *
 * What the engine sends arrives here transferred too, and `send` copies it into the socket's
 * queue; the buffer then goes back to the engine's worker, to be freed there. Left here, sent
 * buffers (the authenticated mode's flights go in frames of up to a megabyte) wait for this
 * worker's garbage collection, and V8 collects a heap that allocates so little of its own
 * seldom: the tab held over a hundred of them at times, more the longer a computation ran.
 * The engine's worker collects about twice a second.
 *
 * One socket at a time; the worker stays for the next session. Messages carry the session's
 * `sid`, so that a late frame of a closed socket never reaches the next session.
 */
import type { FromSocket, ToSocket } from './protocol.js';

declare const self: DedicatedWorkerGlobalScope;

let port: MessagePort | undefined;
let socket: { sid: number; ws: WebSocket } | undefined;

const post = (m: FromSocket, transfer: Transferable[] = []) => port?.postMessage(m, transfer);

function open(sid: number, url: string): void {
  socket?.ws.close();
  let ws: WebSocket;
  try {
    ws = new WebSocket(url);
  } catch (e) {
    return post({ type: 'failed', sid, message: `cannot connect to ${url}: ${(e as Error).message}` });
  }
  ws.binaryType = 'arraybuffer';
  let opened = false;
  ws.onopen = () => {
    opened = true;
    post({ type: 'open', sid });
  };
  ws.onmessage = (ev) => {
    const frame = ev.data as ArrayBuffer;
    post({ type: 'frame', sid, frame }, [frame]);
  };
  // An error is always followed by a close event, which says what became of the socket.
  ws.onclose = (ev) => {
    if (socket?.ws === ws) socket = undefined;
    if (opened) post({ type: 'closed', sid, reason: ev.reason || `code ${ev.code}` });
    else post({ type: 'failed', sid, message: `cannot connect to ${url} (code ${ev.code})` });
  };
  socket = { sid, ws };
}

function onEngineMessage(m: ToSocket): void {
  if (m.type === 'open') return open(m.sid, m.url);
  if (socket?.sid !== m.sid) return;
  if (m.type === 'send') {
    if (socket.ws.readyState === WebSocket.OPEN) socket.ws.send(m.frame);
    post({ type: 'sent', sid: m.sid, frame: m.frame }, [m.frame]);
  } else {
    socket.ws.close();
  }
}

// The page hands over the port to the engine's worker once, when it creates the pair.
self.onmessage = (ev: MessageEvent<{ port: MessagePort }>) => {
  port = ev.data.port;
  port.onmessage = (e: MessageEvent<ToSocket>) => onEngineMessage(e.data);
};

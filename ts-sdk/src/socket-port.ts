/**
 * The engine's side of a socket worker (socket-worker.ts): a Transport over the MessagePort
 * that joins them. Frames move as transferred ArrayBuffers, never copied.
 */
import type { Transport } from './engine.js';
import { ConnectionError } from './errors.js';
import { joinedByChannel, movableBuffer, type FromSocket, type ToSocket } from './protocol.js';

let sessionId = 0;

/** Opens a WebSocket to `url` in the socket worker behind `port`; resolves to a transport over it once it is open. */
export function openSocket(port: MessagePort, url: string): Promise<Transport> {
  const sid = ++sessionId;
  const send = (m: ToSocket, transfer: Transferable[] = []) => port.postMessage(m, transfer);
  const transport: Transport = {
    send: (frame) => {
      const buffer = movableBuffer(frame);
      send({ type: 'send', sid, frame: buffer }, [buffer]);
    },
    close: () => send({ type: 'close', sid }),
  };
  return new Promise((resolve, reject) => {
    // Messages of an earlier session's socket (a late frame, its close) carry its sid: ignored.
    port.onmessage = ({ data: m }: MessageEvent<FromSocket>) => {
      if (m.sid !== sid) return;
      switch (m.type) {
        case 'open':
          return resolve(transport);
        case 'failed':
          return reject(new ConnectionError(m.message, 'unreachable'));
        case 'frame':
          return transport.onFrame?.(new Uint8Array(m.frame));
        case 'sent':
          return; // garbage now, in this worker's heap, which is collected often
        case 'closed':
          return transport.onClose?.(m.reason);
      }
    };
    send({ type: 'open', sid, url });
  });
}

/** A socket worker joined to the current thread by a MessageChannel; returns the port to use with `openSocket`. */
export function startSocketWorker(script?: string): { worker: Worker; port: MessagePort } {
  return joinedByChannel(script ? new Worker(script, { type: 'module' }) : new Worker(new URL('./socket-worker.js', import.meta.url), { type: 'module' }));
}

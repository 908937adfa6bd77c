/**
 * Raw WebSocket receive throughput, in a worker as the SDK's socket is: the server's
 * `/bench/raw` endpoint sends `bytes` in messages of `frame` bytes; we only count them.
 */
self.onmessage = ({ data: { url } }) => {
  const ws = new WebSocket(url);
  ws.binaryType = 'arraybuffer';
  let opened = 0;
  let last = 0;
  let bytes = 0;
  let messages = 0;
  ws.onopen = () => (opened = performance.now());
  ws.onmessage = (ev) => {
    bytes += ev.data.byteLength;
    messages++;
    last = performance.now();
  };
  ws.onerror = () => self.postMessage({ error: `WebSocket error on ${url}` });
  ws.onclose = () => self.postMessage({ bytes, messages, ms: last - opened });
};

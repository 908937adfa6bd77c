/** A WebSocket to `url`, open, delivering ArrayBuffers (for the page and for its workers). */
export function openSocket(url) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => resolve(ws);
    ws.onerror = () => reject(new Error(`cannot open ${url}`));
  });
}

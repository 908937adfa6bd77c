/**
 * What Chromium's own WebSocket sees of the server, from a page: a binary round trip (the
 * ServerHello, then the Error frame that answers a probe), the close code and reason the server
 * sends for a text message and for an oversized one, the close handshake a page starts, and
 * the handshake's negotiation (Chromium offers permessage-deflate; a subprotocol it insists on
 * fails the connection). The server sends no pings, so there is none for Chromium to answer.
 * docs/websocket.md has the table.
 */
import { expect, test, type Page } from '@playwright/test';
import { serverUrl } from '../support/servers';
import { hello, maxMessage, probe } from '../support/ws-conformance';

type Step = 'binary' | 'text' | 'oversized' | 'close-4000' | 'subprotocol';

interface BrowserSeen {
  /** The first byte of each binary message: 0x81 ServerHello, 0x7f Error. */
  types: number[];
  errors: [number, string][];
  /** CloseEvent: code, reason, wasClean. */
  close: [number, string, boolean];
  extensions: string;
  protocol: string;
}

/** Opens a WebSocket from the page, does `step` once it is open, and waits for its close. */
function inBrowser(page: Page, step: Step): Promise<BrowserSeen> {
  const args = { url: serverUrl(), step, hello: Array.from(hello()), probe: Array.from(probe('browser-binary')), oversized: maxMessage() + 1 };
  return page.evaluate(({ url, step, hello, probe, oversized }) => {
    const ws = new WebSocket(url, step === 'subprotocol' ? ['garblet.v1'] : []);
    ws.binaryType = 'arraybuffer';
    const seen: BrowserSeen = { types: [], errors: [], close: [0, '', false], extensions: '', protocol: '' };
    return new Promise<BrowserSeen>((resolve) => {
      ws.onopen = () => {
        seen.extensions = ws.extensions;
        seen.protocol = ws.protocol;
        if (step === 'binary') {
          ws.send(new Uint8Array(hello));
          ws.send(new Uint8Array(probe));
        } else if (step === 'text') ws.send('hello');
        else if (step === 'oversized') ws.send(new Uint8Array(oversized).fill(0x42));
        else if (step === 'close-4000') ws.close(4000, 'bye');
      };
      ws.onmessage = (e) => {
        const bytes = new Uint8Array(e.data as ArrayBuffer);
        seen.types.push(bytes[0]);
        if (bytes[0] === 0x7f) {
          const view = new DataView(bytes.buffer);
          const length = view.getUint16(3, true);
          seen.errors.push([view.getUint16(1, true), new TextDecoder().decode(bytes.subarray(5, 5 + length))]);
        }
      };
      ws.onclose = (e) => {
        seen.close = [e.code, e.reason, e.wasClean];
        resolve(seen);
      };
    });
  }, args);
}

test.beforeEach(async ({ page }) => {
  // A page from an origin the server allows (its own address: http://127.0.0.1:port).
  await page.goto(`${serverUrl().replace(/^ws/, 'http')}/health`);
});

test('a binary round trip: the ServerHello, the Error frame for the probe, a clean 1000', async ({ page }) => {
  expect(await inBrowser(page, 'binary')).toEqual({
    types: [0x81, 0x7f],
    errors: [[2, "the server has no service 'browser-binary'"]],
    close: [1000, '', true],
    // Chromium offered permessage-deflate; the server took no extension and no subprotocol.
    extensions: '',
    protocol: '',
  });
});

test('a text message: an Error frame, then 1003 with the reason', async ({ page }) => {
  const reason = 'a text message: Garblet frames are binary WebSocket messages';
  const seen = await inBrowser(page, 'text');
  expect([seen.errors, seen.close]).toEqual([[[1, reason]], [1003, reason, true]]);
});

test('a message over max_frame_bytes: an Error frame, then 1009 with the reason', async ({ page }) => {
  const max = maxMessage();
  const seen = await inBrowser(page, 'oversized');
  expect([seen.errors, seen.close]).toEqual([
    [[4, `a message of ${max + 1} bytes: this server takes frames of at most ${max} bytes`]],
    [1009, `a message of ${max + 1} bytes; at most ${max} are taken`, true],
  ]);
});

test("the page closes with 4000: the server's reply, 1000, is what the page sees", async ({ page }) => {
  const seen = await inBrowser(page, 'close-4000');
  expect([seen.errors, seen.close]).toEqual([[], [1000, '', true]]);
});

test('a subprotocol the page insists on: the server names none and Chromium fails the connection', async ({ page }) => {
  const seen = await inBrowser(page, 'subprotocol');
  expect([seen.types, seen.close]).toEqual([[], [1006, '', false]]);
});

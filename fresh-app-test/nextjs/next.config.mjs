// The Garblet server the app talks to, for its Content-Security-Policy.
const garbletServer = process.env.GARBLET_SERVER ?? 'wss://garblet.example.com'
const dev = process.env.NODE_ENV === 'development'

const csp = [
  "default-src 'self'",
  // Next's inline scripts; compiling WebAssembly; and in development, React's eval.
  `script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'${dev ? " 'unsafe-eval'" : ''}`,
  "style-src 'self' 'unsafe-inline'",
  // The SDK's workers: its own files, or Blob URLs of their checked bytes with `integrity`.
  "worker-src 'self' blob:",
  // The SDK fetches its WebAssembly (and with `integrity` its worker scripts) from the app.
  `connect-src 'self' ${garbletServer}`,
].join('; ')

/** @type {import('next').NextConfig} */
export default {
  async headers() {
    return [{ source: '/:path*', headers: [{ key: 'Content-Security-Policy', value: csp }] }]
  },
}

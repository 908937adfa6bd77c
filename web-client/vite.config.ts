import { defineConfig } from 'vite';

export default defineConfig({
  // The SDK finds its worker and its WebAssembly with `new URL(…, import.meta.url)`; pre-bundling
  // it would move browser.js away from worker.js and ../wasm/, so it is served as it is.
  optimizeDeps: { exclude: ['garblet'] },
  // The SDK's worker is an ES module (it imports the wasm-bindgen glue).
  worker: { format: 'es' },
  // The SDK's pinned worker bundles stay files: inlined as data: URLs (Vite's default below
  // 4 KiB) the SDK would fetch them from data:, which a CSP's connect-src must then allow.
  build: { target: 'es2022', assetsInlineLimit: (file) => (file.endsWith('.bundle.js') ? false : undefined) },
  server: { host: '127.0.0.1', port: 5173 },
  preview: { host: '127.0.0.1', port: 4173 },
});

import adapter from '@sveltejs/adapter-auto'
import { sveltekit } from '@sveltejs/kit/vite'
import { defineConfig } from 'vite'

// The Garblet server the app talks to, for its Content-Security-Policy.
const garbletServer = process.env.GARBLET_SERVER ?? 'wss://garblet.example.com'

export default defineConfig({
	plugins: [
		sveltekit({
			adapter: adapter(),
			// SvelteKit adds hashes or nonces for its own inline scripts.
			csp: {
				mode: 'auto',
				directives: {
					'default-src': ['self'],
					'script-src': ['self', 'wasm-unsafe-eval'],
					'style-src': ['self', 'unsafe-inline'],
					// The SDK's workers: its own files, or Blob URLs of their checked bytes with `integrity`.
					'worker-src': ['self', 'blob:'],
					// The SDK fetches its WebAssembly (and with `integrity` its worker scripts) from the app.
					'connect-src': ['self', garbletServer]
				}
			}
		})
	]
})

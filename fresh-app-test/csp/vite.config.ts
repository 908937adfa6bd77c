import { defineConfig } from 'vite'

// The test serves the built app under the SDK README's Content-Security-Policy for a static app
// (GARBLET_CSP), as a static host would send it.
export default defineConfig({ preview: { headers: { 'Content-Security-Policy': process.env.GARBLET_CSP ?? '' } } })

import { defineConfig } from 'vite'

// Vite 7 and older pre-bundle dependencies with esbuild, which moves the SDK's code away from its
// worker and wasm files under `vite dev`: this is the one line such an app needs (Vite 8 needs none).
export default defineConfig({ optimizeDeps: { exclude: ['garblet'] } })

// The SDK's README, "SvelteKit": the page that uses the SDK renders in the browser only (the SDK
// starts Web Workers and fetches its WebAssembly), never on the server.
export const ssr = false

'use client'
// The SDK's README, "Next.js": the component that uses the SDK is loaded in the browser only
// (it starts Web Workers and fetches its WebAssembly), never rendered on the server.
import dynamic from 'next/dynamic'

const GarbletResult = dynamic(() => import('./result'), {
  ssr: false,
  loading: () => (
    <pre id="result" data-state="running">
      loading
    </pre>
  ),
})

export default GarbletResult

'use client'
import { useEffect, useState } from 'react'
import { compute, type Outcome } from './compute'

export default function Result() {
  const [outcome, setOutcome] = useState<Outcome>()
  useEffect(() => {
    // React runs an effect twice in development (strict mode): the first run is aborted.
    const controller = new AbortController()
    void compute(location.search, controller.signal).then((o) => controller.signal.aborted || setOutcome(o))
    return () => controller.abort()
  }, [])
  return (
    <pre id="result" data-state={outcome?.state ?? 'running'}>
      {outcome?.text ?? 'running'}
    </pre>
  )
}

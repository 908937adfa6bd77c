// The app's entry: compute (compute.ts, copied in by the test) and show the outcome in #result.
import { compute } from './compute'

const result = document.querySelector<HTMLPreElement>('#result')!
compute(location.search).then(({ state, text }) => {
  result.textContent = text
  result.dataset.state = state
})

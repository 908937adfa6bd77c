// A server component, rendered on the server: it only places the client component.
import GarbletResult from './garblet-result'

export default function Page() {
  return (
    <main>
      <GarbletResult />
    </main>
  )
}

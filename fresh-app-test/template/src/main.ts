// A web app's use of the SDK, as its README shows it: connect, look at the catalog, run
// computations, read the outputs. The page takes the server and its inputs from its URL and
// writes what it learned as JSON into #result, for the test to check against plaintext
// references.
import { apps, Garblet, GarbletError, hex, type ServiceInfo } from 'garblet'

const result = document.querySelector<HTMLPreElement>('#result')!
const query = new URLSearchParams(location.search)
const param = (name: string): string => {
  const value = query.get(name)
  if (value === null) throw new Error(`the page's URL has no ?${name}=`)
  return value
}

function show(state: 'done' | 'failed', value: unknown): void {
  result.textContent = JSON.stringify(value)
  result.dataset.state = state
}

async function main(): Promise<void> {
  const session = await Garblet.connect(param('server'))
  try {
    const services: ServiceInfo[] = session.services()
    const aes = session.service('aes128')
    if (!aes) throw new Error('the server has no aes128 service')
    const distance = await apps.editDistance(session, param('text'))
    const { outputs } = await session.run('aes128', { plaintext: hex(param('block')) })
    const blocks = await apps.encryptAes(session, hexBytes(param('blocks')))
    show('done', {
      services: services.length,
      aesInputs: aes.inputs.map((f) => `${f.name}:${f.bits}`),
      distance: distance.value,
      ciphertext: outputs.ciphertext.hex,
      ciphertexts: [...blocks.value].map((b) => b.toString(16).padStart(2, '0')).join(''),
      andGates: blocks.stats.evaluator.and_gates,
    })
  } finally {
    session.close()
  }
}

function hexBytes(digits: string): Uint8Array {
  return Uint8Array.from(digits.match(/../g) ?? [], (byte) => parseInt(byte, 16))
}

main().catch((e: unknown) => show('failed', { error: e instanceof GarbletError ? `${e.name}: ${e.message}` : String(e) }))

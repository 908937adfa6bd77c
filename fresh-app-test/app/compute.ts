// What every fresh app computes, whatever its framework: it connects, looks at the catalog,
// runs computations and reads the outputs, as the SDK's README shows it. The server and the
// inputs come from the page's URL (?server=…&text=…&block=…&blocks=…, and &integrity to pin
// the SDK's own files); the test checks the JSON of what it learned against plaintext references.
import { apps, Garblet, GarbletError, hex, integrity, type ServiceInfo } from 'garblet'

export interface Outcome {
  state: 'done' | 'failed'
  /** JSON: what the app learned, or `{ error }`. */
  text: string
}

export async function compute(search: string, signal?: AbortSignal): Promise<Outcome> {
  try {
    return { state: 'done', text: JSON.stringify(await learn(new URLSearchParams(search), signal)) }
  } catch (e) {
    return { state: 'failed', text: JSON.stringify({ error: e instanceof GarbletError ? `${e.name}: ${e.message}` : String(e) }) }
  }
}

async function learn(query: URLSearchParams, signal?: AbortSignal) {
  const param = (name: string): string => {
    const value = query.get(name)
    if (value === null) throw new Error(`the page's URL has no ?${name}=`)
    return value
  }
  const session = await Garblet.connect(param('server'), { signal, integrity: query.has('integrity') ? integrity : undefined })
  try {
    const services: ServiceInfo[] = session.services()
    const aes = session.service('aes128')
    if (!aes) throw new Error('the server has no aes128 service')
    const distance = await apps.editDistance(session, param('text'), { signal })
    const { outputs } = await session.run('aes128', { plaintext: hex(param('block')) }, { signal })
    const blocks = await apps.encryptAes(session, hexBytes(param('blocks')), { signal })
    return {
      services: services.length,
      aesInputs: aes.inputs.map((f) => `${f.name}:${f.bits}`),
      distance: distance.value,
      ciphertext: outputs.ciphertext.hex,
      ciphertexts: [...blocks.value].map((b) => b.toString(16).padStart(2, '0')).join(''),
      andGates: blocks.stats.evaluator.and_gates,
    }
  } finally {
    session.close()
  }
}

function hexBytes(digits: string): Uint8Array {
  return Uint8Array.from(digits.match(/../g) ?? [], (byte) => parseInt(byte, 16))
}

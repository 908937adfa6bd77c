/** Plaintext references, written independently of the circuits they check. */
import { createCipheriv } from 'node:crypto';

export { levenshtein, popcount, smithWaterman } from '../../test-support/references.mjs';

export function aes128(key: Buffer, block: Buffer): Buffer {
  const cipher = createCipheriv('aes-128-ecb', key, null);
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(block), cipher.final()]);
}

/** Random strings over an alphabet, for inputs the tests make up. */
export function randomString(alphabet: string, length: number): string {
  const letters = [...alphabet];
  return Array.from({ length }, () => letters[Math.floor(Math.random() * letters.length)]).join('');
}

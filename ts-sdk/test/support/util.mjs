/** Small helpers shared by the tests. */
import { randomBytes } from 'node:crypto';

/** Rejects with `what` if `promise` has not settled within `ms` — a hang becomes a failure. */
export function within(ms, what, promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A uniformly random unsigned integer of `bits` bits. */
export function randomUint(bits) {
  return BigInt(`0x${randomBytes(Math.ceil(bits / 8)).toString('hex')}`) & ((1n << BigInt(bits)) - 1n);
}

/** `v` as a signed integer of `bits` bits (two's complement). */
export function toSigned(v, bits) {
  return BigInt.asIntN(bits, v);
}

/** `v` (possibly negative) as its `bits`-bit two's complement. */
export function toUnsigned(v, bits) {
  return BigInt.asUintN(bits, v);
}

export const hex = (bytes) => Buffer.from(bytes).toString('hex');
export const fromHex = (text) => new Uint8Array(Buffer.from(text, 'hex'));

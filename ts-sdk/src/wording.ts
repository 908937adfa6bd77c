/**
 * What the SDK says of an input that does not fit its service: one sentence per mistake,
 * `NAME takes …; what was given`, worded as the `garblet` command line says it
 * (server/src/client/wording.rs), so that a user reads the same thing in an app's error, on the
 * demo page and in a terminal. The `InputError`'s fields carry the same facts for code.
 */

/** 1234567 → "1,234,567". */
export function thousands(n: number | bigint): string {
  return BigInt(n).toLocaleString('en-US');
}

/** "1 byte", "16 bytes". */
export function count(n: number | bigint, one: string, many: string): string {
  return `${thousands(n)} ${BigInt(n) === 1n ? one : many}`;
}

/** "0 to 4,294,967,295" for a 32-bit input; "0 to 2^900 − 1" where the decimal is too long to read. */
function numberRange(width: number): string {
  return width <= 64 ? `0 to ${thousands((1n << BigInt(width)) - 1n)}` : `0 to 2^${width} − 1`;
}

/** "-128 to 127" for an 8-bit signed input; "-2^899 to 2^899 − 1" past 64 bits. */
function signedRange(width: number): string {
  if (width === 0) return '0 to 0';
  const max = (1n << BigInt(width - 1)) - 1n;
  return width <= 64 ? `-${thousands(max + 1n)} to ${thousands(max)}` : `-2^${width - 1} to 2^${width - 1} − 1`;
}

/** "d takes a whole number from -128 to 127". */
export function signedNumber(name: string, width: number): string {
  return `${name} takes a whole number from ${signedRange(width)}`;
}

/** A signed number outside its input's range: too small below it, too large above. */
export function signedOutOfRange(name: string, width: number, value: bigint, text: bigint | string): string {
  return `${signedNumber(name, width)}; ${String(text).trim()} is ${value < 0n ? 'too small' : 'too large'}`;
}

/** Text where a signed number belongs. */
export function notASignedNumber(name: string, width: number, text: string): string {
  return `${signedNumber(name, width)}; '${text.trim()}' is not one (write decimal digits, or hexadecimal after 0x, after an optional minus sign)`;
}

/** "b takes a whole number from 0 to 18,446,744,073,709,551,615". */
export function wholeNumber(name: string, width: number): string {
  return `${name} takes a whole number from ${numberRange(width)}`;
}

/** A number below 0: "y takes a whole number from 0 to 4,294,967,295; -5 is negative". */
export function negative(name: string, width: number, value: bigint | string): string {
  return `${wholeNumber(name, width)}; ${String(value).trim()} is negative`;
}

/** A number wider than its input. */
export function tooLarge(name: string, width: number, value: bigint | string): string {
  return `${wholeNumber(name, width)}; ${String(value).trim()} is too large`;
}

/** Text where a number belongs. */
export function notANumber(name: string, width: number, text: string): string {
  return `${wholeNumber(name, width)}; '${text.trim()}' is not one (write decimal digits, or hexadecimal after 0x)`;
}

/** Bytes of the wrong length: "plaintext takes exactly 16 bytes (32 hex digits); 2 given". */
export function bytesLength(name: string, want: number, given: number): string {
  return `${name} takes exactly ${count(want, 'byte', 'bytes')} (${thousands(2 * want)} hex digits); ${thousands(given)} given`;
}

/** How a text input's symbols are called: bases for DNA, characters for Latin-1 text, letters for any other alphabet (amino acids). */
export function symbolNoun(alphabet: string): [one: string, many: string] {
  if (alphabet === 'ACGT') return ['base', 'bases'];
  return [...alphabet].length === 256 ? ['character', 'characters'] : ['letter', 'letters'];
}

/** A text of a fixed length, given another: "b takes exactly 100 bases; 99 given". */
export function textLength(name: string, alphabet: string, want: number, given: number): string {
  const [one, many] = symbolNoun(alphabet);
  return `${name} takes exactly ${count(want, one, many)}; ${thousands(given)} given`;
}

/**
 * A value whose length is a parameter, outside its range, counted in `noun` (`symbolNoun`'s for
 * a text): "b accepts at most 2,000 bases; 8,000 given".
 */
export function lengthRange(name: string, [one, many]: [string, string], min: number, max: number, given: number): string {
  const bound = given > max ? `at most ${count(max, one, many)}` : `at least ${count(min, one, many)}`;
  return `${name} accepts ${bound}; ${thousands(given)} given`;
}

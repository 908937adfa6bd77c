/** Numbers as people read them. */

const SI = ['', 'k', 'M', 'G', 'T'];

/** 12 345 678 → "12.3 M". */
export function count(n: number): string {
  let i = 0;
  while (Math.abs(n) >= 1000 && i < SI.length - 1) {
    n /= 1000;
    i++;
  }
  return i === 0 ? String(Math.round(n)) : `${n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0)} ${SI[i]}`;
}

/** Bytes in binary units: "3.4 MiB". */
export function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0)} ${units[i]}`;
}

/** Milliseconds: "0.4 ms", "840 ms", "12.3 s". */
export function duration(ms: number): string {
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** Integers with thin-space thousands: "5 120". */
export function integer(n: number | bigint): string {
  return n.toLocaleString('en-US').replace(/,/g, '\u2009');
}

export function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Hex digits (spaces and a 0x allowed) → bytes; undefined if they are not whole bytes. */
export function parseHex(text: string): Uint8Array | undefined {
  const digits = text.replace(/\s+/g, '').replace(/^0x/i, '');
  if (digits.length % 2 !== 0 || !/^[0-9a-f]*$/i.test(digits)) return undefined;
  return Uint8Array.from({ length: digits.length / 2 }, (_, i) => parseInt(digits.slice(2 * i, 2 * i + 2), 16));
}

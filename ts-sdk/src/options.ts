/** `ConnectOptions`' and `RunOptions`' settings, checked and with their defaults, for both entry points. */
import type { ConnectOptions, Security } from './types.js';

/** The credit window a session starts with unless `window` says otherwise. */
export const DEFAULT_WINDOW = 4 << 20;
/** The smallest window the protocol has (`MIN_WINDOW` in the core): a few batches of garbled data. */
const MIN_WINDOW = 64 << 10;
/** A window travels as a u32. */
const MAX_WINDOW = 2 ** 32 - 1;

/** What the engine's evaluator is created with. */
export interface EvaluatorSettings {
  /** The credit window to start with, bytes. */
  window: number;
  /** The most the window may grow to, bytes; the core's default (32 MiB) when absent. */
  maxWindow?: number;
  /** The garbling schemes to accept (`ConnectOptions.garbling`). */
  garbling?: string;
}

function checkWindow(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new TypeError(`${name} must be a whole number of bytes, not ${typeof value === 'number' ? value : typeof value}`);
  }
  if (value < MIN_WINDOW || value > MAX_WINDOW) {
    throw new RangeError(`${name} must be between ${MIN_WINDOW} (64 KiB) and ${MAX_WINDOW} bytes, not ${value}`);
  }
  return value;
}

/**
 * The evaluator's settings from `options`: `window` defaults to 4 MiB, or to `maxWindow` where
 * that is smaller. Throws a TypeError for a window that is not a whole number, a RangeError for
 * one outside 64 KiB – 4 GiB or a `window` above `maxWindow`.
 */
export function evaluatorSettings(options: ConnectOptions): EvaluatorSettings {
  const maxWindow = checkWindow('maxWindow', options.maxWindow);
  const window = checkWindow('window', options.window) ?? Math.min(DEFAULT_WINDOW, maxWindow ?? DEFAULT_WINDOW);
  if (maxWindow !== undefined && window > maxWindow) {
    throw new RangeError(`window (${window} bytes) must not be above maxWindow (${maxWindow} bytes)`);
  }
  return { window, maxWindow, garbling: options.garbling };
}

/** A circuit identity as `RunOptions.expectCircuit` takes it. */
const CIRCUIT_PIN = /^sha256:[0-9a-f]{64}$/i;

/**
 * `RunOptions.expectCircuit`, checked: `sha256:` and 64 hex digits (either case), or absent.
 * Throws a TypeError for anything else, before the run touches the connection.
 */
export function checkedCircuitPin(pin: unknown): string | undefined {
  if (pin === undefined) return undefined;
  if (typeof pin !== 'string' || !CIRCUIT_PIN.test(pin)) {
    throw new TypeError(`expectCircuit must be 'sha256:' and 64 hex digits, not ${typeof pin === 'string' ? JSON.stringify(pin) : typeof pin}`);
  }
  return pin.toLowerCase();
}

/** The security modes, weakest first: a mode gives everything the ones before it give. */
export const SECURITY_MODES: readonly Security[] = ['standard', 'cut-and-choose', 'authenticated'];

/**
 * `ConnectOptions.require` or `RunOptions.security` (named `name`), checked: one of
 * {@link SECURITY_MODES}, or absent. Throws a TypeError for anything else, before the
 * connection or the run starts.
 */
export function checkedSecurity(name: string, value: unknown): Security | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !(SECURITY_MODES as readonly string[]).includes(value)) {
    const given = typeof value === 'string' ? JSON.stringify(value) : typeof value;
    throw new TypeError(`${name} must be ${SECURITY_MODES.map((m) => `'${m}'`).join(' or ')}, not ${given}`);
  }
  return value as Security;
}

/** Whether mode `a` gives at least what mode `b` gives. */
export function atLeast(a: Security, b: Security): boolean {
  return SECURITY_MODES.indexOf(a) >= SECURITY_MODES.indexOf(b);
}

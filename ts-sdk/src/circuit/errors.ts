/**
 * Compile-time errors, located in the developer's source: the first stack frame outside this
 * library is the line of the circuit that asked for the impossible.
 */

/** What went wrong, for code that branches on it. */
export type CircuitErrorReason =
  /** Two operands, or a value and its declared type, have different widths. */
  | 'width-mismatch'
  /** Signed and unsigned values mixed, or a value where another type was declared. */
  | 'type-mismatch'
  /** A secret value was used where JavaScript needs a known one: a loop bound, an `if`, an index. */
  | 'secret-control-flow'
  /** An input declared without `garbler(…)` or `evaluator(…)`. */
  | 'no-owner'
  /** An output returned that `outputs` does not name, or one named and not returned. */
  | 'no-recipient'
  /** A declaration that cannot be built: a zero or fractional width, an unknown party. */
  | 'bad-declaration'
  /** The trace recorded more gates than a circuit may have (a loop on a secret condition?). */
  | 'too-large'
  /** A value of one circuit used while compiling another, or outside any compilation. */
  | 'outside-circuit';

/** Where in the developer's file an error arose. */
export interface SourceLocation {
  file: string;
  line: number;
  column: number;
}

/** The file this module was loaded from: frames in its directory are the library's own. */
const libraryDir: string | undefined = (() => {
  const here = frames(new Error().stack ?? '')[0]?.file;
  return here === undefined ? undefined : here.slice(0, here.lastIndexOf('/') + 1);
})();

/** `file:line:column` of each frame of a V8 (`at f (file:1:2)`) or Firefox/Safari (`f@file:1:2`) stack. */
function frames(stack: string): SourceLocation[] {
  const out: SourceLocation[] = [];
  for (const line of stack.split('\n')) {
    const m = /(?:\(|@|at )([^\s()@]+?):(\d+):(\d+)\)?\s*$/.exec(line);
    if (m) out.push({ file: m[1], line: Number(m[2]), column: Number(m[3]) });
  }
  return out;
}

/** The first frame of `stack` outside this library, as a path where it is a file: URL. */
export function locate(stack: string | undefined): SourceLocation | undefined {
  const frame = frames(stack ?? '').find((f) => libraryDir === undefined || !f.file.startsWith(libraryDir));
  if (!frame) return undefined;
  return { ...frame, file: frame.file.startsWith('file://') ? decodeURIComponent(frame.file.slice('file://'.length)) : frame.file };
}

/** A stack captured now, deep enough to reach past the library's frames. */
export function captureStack(): string | undefined {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 64;
  const stack = new Error().stack;
  Error.stackTraceLimit = limit;
  return stack;
}

/**
 * A circuit that cannot be compiled. `location` is the developer's line that caused it (where
 * the stack reached one); the message starts with it, `file:line:column: `.
 */
export class CircuitError extends Error {
  readonly reason: CircuitErrorReason;
  readonly location?: SourceLocation;
  /** The message without the location. */
  readonly detail: string;

  constructor(reason: CircuitErrorReason, detail: string, at?: string) {
    const location = locate(at ?? captureStack());
    super(location ? `${location.file}:${location.line}:${location.column}: ${detail}` : detail);
    this.name = 'CircuitError';
    this.reason = reason;
    this.detail = detail;
    this.location = location;
  }
}

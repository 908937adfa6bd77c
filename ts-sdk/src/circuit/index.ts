/**
 * `garblet/circuit`: write the function f(server's input, client's input) as a TypeScript
 * function over typed values, and compile it to a Bristol Fashion circuit and its manifest
 * for `garblet serve`. No Node APIs: it compiles in browsers too. See ts-sdk/README.md.
 */

export { circuit, compile, compileWithHash, MAX_GATES } from './compile.js';
export type { Circuit, CircuitSpec, CompileOptions, Compiled, GateCounts, Manifest, ManifestInput, ManifestOutput, OutputSpec, OutputValue } from './compile.js';
export { CircuitError } from './errors.js';
export type { CircuitErrorReason, SourceLocation } from './errors.js';
export { array, bit, bytes, evaluator, garbler, int, uint } from './types.js';
export type { ArrayType, BitType, BytesType, Input, IntType, Output, Owner, Recipient, Type, TypeDescription, UIntType, ValueOf } from './types.js';
export { Bit, constant, Int, popcount, select, sum, UInt } from './values.js';
export type { Constant, Selectable } from './values.js';

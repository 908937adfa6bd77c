// 64-bit addition modulo 2^64 (the bundled adder64's function).
import { circuit, evaluator, garbler, uint } from 'garblet/circuit';

export default circuit(
  {
    inputs: { a: garbler(uint(64)), b: evaluator(uint(64)) },
    outputs: { sum: 'evaluator' },
  },
  ({ a, b }) => ({ sum: a.add(b).wrap(64) }),
);
